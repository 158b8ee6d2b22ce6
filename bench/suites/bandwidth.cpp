// `cachecomm-bench bandwidth`: streaming between ranks 0 and 1 with a window of messages in flight
// (unidirectional and bidirectional, as OSU's bw/bibw), as a fraction of the memcpy limit.
#include <algorithm>
#include <vector>

#include "cachecomm/channel.hpp"
#include "common/interleaved.hpp"
#include "common/node_limits.hpp"
#include "common/node_suite.hpp"

namespace cachecomm::bench {
namespace {

std::vector<std::size_t> bandwidth_sizes(effort level) {
  if (level == effort::quick) return {8, 4096, 65536};
  std::vector<std::size_t> sizes;
  for (std::size_t size = 8; size <= (4U << 20); size *= (level == effort::brief ? 8 : 4))
    sizes.push_back(size);
  if (sizes.back() != (4U << 20)) sizes.push_back(4U << 20);
  return sizes;
}

void run_bandwidth(node_run& run) {
  cachecomm::comm& comm = run.comm;
  if (comm.size() < 2) {
    run.results.note("bandwidth needs at least 2 ranks");
    return;
  }
  cachecomm::channel channel(comm);
  MPI_Comm mpi = comm.mpi_comm();
  const int rank = comm.rank();
  const int peer = rank == 0 ? 1 : 0;
  const bool active = rank < 2;
  const auto sizes = run.sizes.empty() ? bandwidth_sizes(run.level) : run.sizes;
  const std::size_t largest = sizes.back();
  std::vector<std::byte> outgoing(largest, std::byte{0x33});
  std::vector<std::byte> incoming(largest);
  std::vector<cachecomm::request> requests;
  std::vector<MPI_Request> mpi_requests;
  char ack = 0;
  for (std::size_t index = 0; index < sizes.size(); ++index) {
    const std::size_t bytes = sizes[index];
    const int window = bytes >= (1U << 20) ? 8 : 64;
    double limit = memcpy_limit_gbps(bytes, run.pick(3, 5, 9));
    MPI_Allreduce(MPI_IN_PLACE, &limit, 1, MPI_DOUBLE, MPI_MAX, mpi);
    for (bool both_ways : {false, true}) {
      // One window: post every receive and send, wait for all, then a zero-byte acknowledgement.
      auto channel_window = [&] {
        if (!active) return;
        requests.clear();
        if (both_ways || rank == 1) {
          for (int message = 0; message < window; ++message)
            requests.push_back(channel.irecv(incoming.data(), bytes, peer, 2));
        }
        if (both_ways || rank == 0) {
          for (int message = 0; message < window; ++message)
            requests.push_back(channel.isend(outgoing.data(), bytes, peer, 2));
        }
        cachecomm::channel::wait_all(requests);
        if (rank == 1)
          channel.send(&ack, 0, 0, 3);
        else
          channel.recv(&ack, 0, 1, 3);
      };
      auto mpi_window = [&] {
        if (!active) return;
        mpi_requests.clear();
        const int count = static_cast<int>(bytes);
        if (both_ways || rank == 1) {
          for (int message = 0; message < window; ++message) {
            mpi_requests.emplace_back();
            MPI_Irecv(incoming.data(), count, MPI_BYTE, peer, 2, mpi, &mpi_requests.back());
          }
        }
        if (both_ways || rank == 0) {
          for (int message = 0; message < window; ++message) {
            mpi_requests.emplace_back();
            MPI_Isend(outgoing.data(), count, MPI_BYTE, peer, 2, mpi, &mpi_requests.back());
          }
        }
        MPI_Waitall(static_cast<int>(mpi_requests.size()), mpi_requests.data(),
                    MPI_STATUSES_IGNORE);
        if (rank == 1)
          MPI_Send(&ack, 0, MPI_BYTE, 0, 3, mpi);
        else
          MPI_Recv(&ack, 0, MPI_BYTE, 1, 3, mpi, MPI_STATUS_IGNORE);
      };
      const int iterations = static_cast<int>(std::clamp<std::size_t>(
          run.pick<std::size_t>(1U << 20, 16U << 20, 64U << 20) / (bytes * window), 1, 200));
      timing_plan plan{run.pick(1, 3, 5), run.pick(3, 15, 21), iterations};
      auto times = measure_interleaved(
          mpi, {{"cachecomm", "channel", channel_window}, {"mpi", "default", mpi_window}}, plan);
      const double moved = static_cast<double>(bytes) * window * (both_ways ? 2 : 1);
      for (std::size_t which = 0; which < 2; ++which) {
        json& entry = run.results.add({{"op", both_ways ? "bibw" : "bw"},
                                       {"impl", which == 0 ? "cachecomm" : "mpi"},
                                       {"algorithm", which == 0 ? "channel" : "Isend/Irecv"},
                                       {"bytes", bytes},
                                       {"window", window},
                                       {"src", 0},
                                       {"dst", 1},
                                       {"iters", iterations}},
                                      times[which]);
        double gbps = moved / (times[which].median * 1e3);
        entry["gbps"] = gbps;
        // Both directions can use a core each, so bidirectional is compared with twice the limit.
        entry["limit_gbps"] = limit * (both_ways ? 2 : 1);
        entry["fraction_of_limit"] = gbps / entry["limit_gbps"].get<double>();
      }
    }
    run.progress(static_cast<double>(index + 1) / static_cast<double>(sizes.size()));
  }
}

const node_step_registration registration{node_step{
    "bandwidth",
    "Unidirectional and bidirectional streaming with a window in flight, as a fraction of memcpy",
    20,
    run_bandwidth,
    {"op", "impl", "bytes", "window", "median_us", "gbps", "fraction_of_limit"}}};

}  // namespace
}  // namespace cachecomm::bench
