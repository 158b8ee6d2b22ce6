// `cachecomm-bench pingpong`: half round trip and bandwidth for every ordered pair of ranks and
// every size, cachecomm's channel beside the system MPI (interleaved), as a pair matrix.
#include <algorithm>
#include <vector>

#include "cachecomm/channel.hpp"
#include "common/interleaved.hpp"
#include "common/node_limits.hpp"
#include "common/node_suite.hpp"

namespace cachecomm::bench {
namespace {

std::vector<std::size_t> pingpong_sizes(effort level) {
  switch (level) {
    case effort::quick: return {0, 8, 4096, 65536};
    case effort::brief: return {0, 8, 64, 512, 4096, 32768, 262144, 1U << 20, 4U << 20};
    case effort::full: break;
  }
  std::vector<std::size_t> sizes{0, 1};
  for (std::size_t size = 8; size <= (4U << 20); size *= 4) sizes.push_back(size);
  sizes.push_back(4U << 20);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

void run_pingpong(node_run& run) {
  cachecomm::comm& comm = run.comm;
  cachecomm::channel channel(comm);
  MPI_Comm mpi = comm.mpi_comm();
  const int rank = comm.rank();
  const int size = comm.size();
  const auto sizes = run.sizes.empty() ? pingpong_sizes(run.level) : run.sizes;
  const std::size_t largest = sizes.back();
  std::vector<std::byte> outgoing(std::max<std::size_t>(largest, 1), std::byte{0x5a});
  std::vector<std::byte> incoming(std::max<std::size_t>(largest, 1));
  if (size < 2) {
    run.results.note("pingpong needs at least 2 ranks");
    return;
  }
  // The references: a cache line handed between ranks 0 and 1 (one line written by both sides, the
  // floor a small-message round trip can reach, and one line per direction), and memcpy at each
  // size.
  double one_line_limit_us = 0;
  for (bool one_line : {true, false}) {
    summary line = time_cache_line_pingpong(mpi, 0, 1, one_line, run.pick(200, 2000, 5000),
                                            run.pick(3, 10, 20));
    run.results.add({{"op", "cacheline_pingpong"},
                     {"impl", "limit"},
                     {"algorithm", one_line ? "one-line" : "two-lines"},
                     {"bytes", 8},
                     {"src", 0},
                     {"dst", 1}},
                    line);
    if (one_line) one_line_limit_us = line.median;
  }
  std::vector<double> copy_limit(sizes.size(), 0);
  for (std::size_t index = 0; index < sizes.size(); ++index) {
    double gbps = memcpy_limit_gbps(sizes[index], run.pick(3, 5, 9));
    MPI_Allreduce(MPI_IN_PLACE, &gbps, 1, MPI_DOUBLE, MPI_MAX, mpi);
    copy_limit[index] = gbps;
  }
  const bool oversubscribed = run.results.oversubscribed();
  const int pairs = size * (size - 1);
  int pair_index = 0;
  for (int source = 0; source < size; ++source) {
    for (int target = 0; target < size; ++target) {
      if (source == target) continue;
      for (std::size_t index = 0; index < sizes.size(); ++index) {
        const std::size_t bytes = sizes[index];
        const int iterations = static_cast<int>(std::clamp<std::size_t>(
            (run.pick<std::size_t>(1U << 18, 4U << 20, 16U << 20)) /
                std::max<std::size_t>(bytes, 64),
            2,
            run.pick<std::size_t>(50, oversubscribed ? 200 : 2000, oversubscribed ? 500 : 5000)));
        timing_plan plan{run.pick(2, 20, 50), run.pick(3, 21, 31), iterations};
        auto channel_trip = [&] {
          if (rank == source) {
            channel.send(outgoing.data(), bytes, target, 1);
            channel.recv(incoming.data(), bytes, target, 1);
          } else if (rank == target) {
            channel.recv(incoming.data(), bytes, source, 1);
            channel.send(outgoing.data(), bytes, source, 1);
          }
        };
        auto mpi_trip = [&] {
          const int count = static_cast<int>(bytes);
          if (rank == source) {
            MPI_Send(outgoing.data(), count, MPI_BYTE, target, 1, mpi);
            MPI_Recv(incoming.data(), count, MPI_BYTE, target, 1, mpi, MPI_STATUS_IGNORE);
          } else if (rank == target) {
            MPI_Recv(incoming.data(), count, MPI_BYTE, source, 1, mpi, MPI_STATUS_IGNORE);
            MPI_Send(outgoing.data(), count, MPI_BYTE, source, 1, mpi);
          }
        };
        auto times = measure_interleaved(
            mpi,
            {{"cachecomm", channel.path_to(target == rank ? source : target), channel_trip},
             {"mpi", "default", mpi_trip}},
            plan);
        for (std::size_t which = 0; which < 2; ++which) {
          summary half = times[which];
          for (double* value :
               {&half.median, &half.p25, &half.p75, &half.min, &half.max, &half.mean})
            *value /= 2;
          json& entry =
              run.results.add({{"op", "pingpong"},
                               {"impl", which == 0 ? "cachecomm" : "mpi"},
                               {"algorithm", which == 0 ? "channel" : "MPI_Send/MPI_Recv"},
                               {"bytes", bytes},
                               {"src", source},
                               {"dst", target},
                               {"iters", iterations},
                               {"half_round_trip", true}},
                              half);
          if (bytes > 0) {
            double gbps = static_cast<double>(bytes) / (half.median * 1e3);
            entry["gbps"] = gbps;
            entry["limit_gbps"] = copy_limit[index];
            entry["fraction_of_limit"] = gbps / copy_limit[index];
          }
          if (bytes <= 64) entry["limit_us"] = one_line_limit_us;
        }
        run.progress(
            (pair_index + static_cast<double>(index + 1) / static_cast<double>(sizes.size())) /
            pairs);
      }
      ++pair_index;
    }
  }
}

const node_step_registration registration{
    node_step{"pingpong",
              "Latency and bandwidth for every ordered pair of ranks, channel beside MPI",
              10,
              run_pingpong,
              {"op", "impl", "src", "dst", "bytes", "median_us", "p25_us", "p75_us", "gbps",
               "fraction_of_limit"}}};

}  // namespace
}  // namespace cachecomm::bench
