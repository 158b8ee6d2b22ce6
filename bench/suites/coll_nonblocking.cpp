// Nonblocking collectives (cachecomm/nonblocking.hpp) beside the system MPI's on the same comm:
// start + wait of ibarrier, ibcast, iallreduce, iallgather, igather, iscatter, ialltoall,
// ireduce_scatter_block, iscan, iexscan; and iallreduce overlapped with a fixed
// amount of computation between start and wait (what a pipelined solver does). Each in the modes of
// common/coll_modes.hpp (cold per-call, hot per-call, hot back-to-back; the barrier hot only); the
// cachecomm row is "auto:<path>", the path explain_nonblocking() names.
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cachecomm/nonblocking.hpp"
#include "common/coll_modes.hpp"
#include "common/statistics.hpp"

namespace cachecomm::bench {

namespace {

/// Busy work of about `microseconds` that makes no library call (the compute between start and
/// wait).
void compute_for(double microseconds) {
  const double until = now_seconds() + microseconds * 1e-6;
  while (now_seconds() < until) {
  }
}

struct nonblocking_case {
  const char* op;
  nonblocking_collective collective;
};

/// Start + wait, or start + compute + wait when `compute_us` > 0; MPI's call first, then ours.
void measure(coll_context& context, const nonblocking_case& which, std::size_t bytes,
             double compute_us) {
  comm& c = context.comm;
  const MPI_Comm mpi = c.mpi_comm();
  const auto ranks = static_cast<std::size_t>(c.size());
  // The reductions move doubles, the others bytes; `bytes` is a rank's block (allreduce, scans:
  // its whole input).
  const bool doubles = which.collective == nonblocking_collective::allreduce ||
                       which.collective == nonblocking_collective::reduce_scatter_block ||
                       which.collective == nonblocking_collective::scan ||
                       which.collective == nonblocking_collective::exscan;
  const std::size_t count =
      doubles ? std::max<std::size_t>(1, bytes / sizeof(double)) : std::max<std::size_t>(1, bytes);
  std::vector<double> send(count * ranks, 1.0), receive(count * ranks, 0.0);
  std::vector<std::byte> block(count * ranks, std::byte{1}), gathered(count * ranks);
  const int n = static_cast<int>(count);
  std::vector<candidate> candidates;
  auto timed = [compute_us](auto start, auto finish) {
    return [=] {
      start();
      if (compute_us > 0) compute_for(compute_us);
      finish();
    };
  };
  MPI_Request request = MPI_REQUEST_NULL;
  auto mpi_wait = [&request] { MPI_Wait(&request, MPI_STATUS_IGNORE); };
  collective_request ours;
  auto our_wait = [&ours] { ours.wait(); };
  switch (which.collective) {
    case nonblocking_collective::barrier:
      candidates.push_back(
          {"mpi", "MPI_Ibarrier", timed([&] { MPI_Ibarrier(mpi, &request); }, mpi_wait)});
      candidates.push_back({"cachecomm", "auto", timed([&] { ours = ibarrier(c); }, our_wait)});
      break;
    case nonblocking_collective::broadcast:
      candidates.push_back(
          {"mpi", "MPI_Ibcast",
           timed([&] { MPI_Ibcast(block.data(), n, MPI_BYTE, 0, mpi, &request); }, mpi_wait)});
      candidates.push_back(
          {"cachecomm", "auto",
           timed([&] { ours = ibcast(c, block.data(), count, datatype::byte, 0); }, our_wait)});
      break;
    case nonblocking_collective::allreduce:
      candidates.push_back({"mpi", "MPI_Iallreduce",
                            timed(
                                [&] {
                                  MPI_Iallreduce(send.data(), receive.data(), n, MPI_DOUBLE,
                                                 MPI_SUM, mpi, &request);
                                },
                                mpi_wait)});
      candidates.push_back({"cachecomm", "auto",
                            timed(
                                [&] {
                                  ours = iallreduce(c, send.data(), receive.data(), count,
                                                    datatype::float64, reduce_op::sum);
                                },
                                our_wait)});
      break;
    case nonblocking_collective::allgather:
      candidates.push_back({"mpi", "MPI_Iallgather",
                            timed(
                                [&] {
                                  MPI_Iallgather(block.data(), n, MPI_BYTE, gathered.data(), n,
                                                 MPI_BYTE, mpi, &request);
                                },
                                mpi_wait)});
      candidates.push_back(
          {"cachecomm", "auto",
           timed(
               [&] { ours = iallgather(c, block.data(), gathered.data(), count, datatype::byte); },
               our_wait)});
      break;
    case nonblocking_collective::gather:
      candidates.push_back({"mpi", "MPI_Igather",
                            timed(
                                [&] {
                                  MPI_Igather(block.data(), n, MPI_BYTE, gathered.data(), n,
                                              MPI_BYTE, 0, mpi, &request);
                                },
                                mpi_wait)});
      candidates.push_back(
          {"cachecomm", "auto",
           timed(
               [&] { ours = igather(c, block.data(), gathered.data(), count, datatype::byte, 0); },
               our_wait)});
      break;
    case nonblocking_collective::scatter:
      candidates.push_back({"mpi", "MPI_Iscatter",
                            timed(
                                [&] {
                                  MPI_Iscatter(block.data(), n, MPI_BYTE, gathered.data(), n,
                                               MPI_BYTE, 0, mpi, &request);
                                },
                                mpi_wait)});
      candidates.push_back(
          {"cachecomm", "auto",
           timed(
               [&] { ours = iscatter(c, block.data(), gathered.data(), count, datatype::byte, 0); },
               our_wait)});
      break;
    case nonblocking_collective::alltoall:
      candidates.push_back({"mpi", "MPI_Ialltoall",
                            timed(
                                [&] {
                                  MPI_Ialltoall(block.data(), n, MPI_BYTE, gathered.data(), n,
                                                MPI_BYTE, mpi, &request);
                                },
                                mpi_wait)});
      candidates.push_back(
          {"cachecomm", "auto",
           timed([&] { ours = ialltoall(c, block.data(), gathered.data(), count, datatype::byte); },
                 our_wait)});
      break;
    case nonblocking_collective::reduce_scatter_block:
      candidates.push_back({"mpi", "MPI_Ireduce_scatter_block",
                            timed(
                                [&] {
                                  MPI_Ireduce_scatter_block(send.data(), receive.data(), n,
                                                            MPI_DOUBLE, MPI_SUM, mpi, &request);
                                },
                                mpi_wait)});
      candidates.push_back({"cachecomm", "auto",
                            timed(
                                [&] {
                                  ours =
                                      ireduce_scatter_block(c, send.data(), receive.data(), count,
                                                            datatype::float64, reduce_op::sum);
                                },
                                our_wait)});
      break;
    case nonblocking_collective::scan:
    case nonblocking_collective::exscan: {
      const bool exclusive = which.collective == nonblocking_collective::exscan;
      candidates.push_back({"mpi", exclusive ? "MPI_Iexscan" : "MPI_Iscan",
                            timed(
                                [&] {
                                  (exclusive ? MPI_Iexscan : MPI_Iscan)(send.data(), receive.data(),
                                                                        n, MPI_DOUBLE, MPI_SUM, mpi,
                                                                        &request);
                                },
                                mpi_wait)});
      candidates.push_back({"cachecomm", "auto",
                            timed(
                                [&] {
                                  ours = (exclusive ? iexscan : iscan)(
                                      c, send.data(), receive.data(), count, datatype::float64,
                                      reduce_op::sum);
                                },
                                our_wait)});
      break;
    }
    case nonblocking_collective::reduce: return;
  }
  const std::size_t element = doubles ? sizeof(double) : 1;
  const std::size_t payload =
      which.collective == nonblocking_collective::barrier ? 0 : count * element;
  // What one rank puts into the channel: a block per rank for alltoall and reduce_scatter_block.
  const bool per_rank = which.collective == nonblocking_collective::alltoall ||
                        which.collective == nonblocking_collective::reduce_scatter_block;
  const std::string path(to_string(
      explain_nonblocking(c, which.collective, per_rank ? payload * ranks : payload).path));
  // Cold: the input is rewritten (a broadcast's is the root's buffer); the barrier has none.
  const int rank = c.rank();
  const std::function<void(long)> rewrite = [&, rank](long iteration) {
    if (doubles)
      scribble(std::span(send), iteration, rank);
    else if (which.collective != nonblocking_collective::broadcast || rank == 0)
      scribble(std::span(block), iteration, rank);
  };
  coll_context modes_context = context;
  if (which.collective == nonblocking_collective::barrier) modes_context.buffers = {"hot"};
  json extra = json::object();
  if (compute_us > 0) extra["compute_us"] = compute_us;
  measure_modes(context, candidates, modes_of(modes_context), rewrite,
                {which.op, payload, path, extra});
}

void run_nonblocking(coll_context& context) {
  prepare_nonblocking(context.comm);  // the channel exists before the first timed call
  measure(context, {"ibarrier", nonblocking_collective::barrier}, 0, 0);
  for (std::size_t bytes : context.sizes) {
    measure(context, {"ibcast", nonblocking_collective::broadcast}, bytes, 0);
    measure(context, {"iallreduce", nonblocking_collective::allreduce}, bytes, 0);
    measure(context, {"iallgather", nonblocking_collective::allgather}, bytes, 0);
    measure(context, {"igather", nonblocking_collective::gather}, bytes, 0);
    measure(context, {"iscatter", nonblocking_collective::scatter}, bytes, 0);
    measure(context, {"ialltoall", nonblocking_collective::alltoall}, bytes, 0);
    measure(context, {"ireduce_scatter_block", nonblocking_collective::reduce_scatter_block}, bytes,
            0);
    measure(context, {"iscan", nonblocking_collective::scan}, bytes, 0);
    measure(context, {"iexscan", nonblocking_collective::exscan}, bytes, 0);
  }
}

void run_overlap(coll_context& context) {
  prepare_nonblocking(context.comm);
  // About the time of a small sparse matrix-vector product of a pipelined CG iteration.
  constexpr double compute_us = 20;
  for (std::size_t bytes : context.sizes) {
    measure(context, {"iallreduce-overlap", nonblocking_collective::allreduce}, bytes, compute_us);
  }
}

const coll_op_registration nonblocking_registration{
    {"nonblocking",
     "start + wait of ibarrier, ibcast, iallreduce, iallgather, igather, iscatter, ialltoall, "
     "ireduce_scatter_block, iscan, iexscan beside MPI's own on the same comm",
     run_nonblocking,
     {"op", "buffers", "timing", "impl", "algorithm", "bytes", "median_us", "p25_us",
      "corrected_median_us", "vs_mpi"}}};
const coll_op_registration overlap_registration{
    {"iallreduce-overlap",
     "iallreduce start, 20 us of computation, wait; beside MPI_Iallreduce",
     run_overlap,
     {"buffers", "timing", "impl", "algorithm", "bytes", "median_us", "p25_us",
      "corrected_median_us", "vs_mpi", "compute_us"}}};

}  // namespace

}  // namespace cachecomm::bench
