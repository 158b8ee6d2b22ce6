// Barrier: every cachecomm algorithm beside MPI_Barrier; and the seed's cache-line contention
// probe.
#include <mpi.h>

#include <atomic>
#include <cstring>

#include "cachecomm/comm.hpp"
#include "coll/barrier.hpp"
#include "core/comm_impl.hpp"
#include "shm/segment.hpp"
#include "suites/coll_ops.hpp"

namespace cachecomm::bench {

namespace {

void run_barrier(coll_context& context) {
  // One batch of each per round (MPI, then every algorithm), so drift favours none of them.
  std::vector<candidate> candidates;
  candidates.push_back({"mpi", "default", [mpi = context.comm.mpi_comm()] { MPI_Barrier(mpi); }});
  for (barrier_algorithm algorithm : all_barrier_algorithms()) {
    candidates.push_back({"cachecomm", std::string(to_string(algorithm)),
                          [&comm = context.comm, algorithm] { comm.barrier(algorithm); }});
  }
  auto times = measure_interleaved(context.comm.mpi_comm(), candidates, context.plan);
  const double mpi_median = times.front().median;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    context.results.add(
        {{"op", "barrier"},
         {"impl", candidates[i].impl},
         {"algorithm", candidates[i].algorithm},
         {"bytes", 0},
         {"iters", context.plan.batches * context.plan.iterations_per_batch},
         {"default", candidates[i].algorithm == to_string(context.comm.default_barrier())},
         {"vs_mpi", mpi_median > 0 ? times[i].median / mpi_median : 0.0}},
        times[i]);
  }
}

// Seed (collectives on MIC), fig. 2: all readers copy the same line at once, against each reader
// copying a line of its own. The root writes fresh values first, so every copy is a remote miss.
void run_line_contention(coll_context& context) {
  auto& impl = context.comm.impl();
  const int node_size = impl.topology().node_size;
  const int node_rank = impl.topology().node_rank;
  detail::shm_segment segment(impl.node(),
                              detail::cache_line_size * static_cast<std::size_t>(node_size + 1));
  auto* lines = static_cast<std::byte*>(segment.data());
  const int accesses = context.options.quick ? 20 : 1000;
  for (const char* pattern : {"one-line", "own-line"}) {
    const bool shared_line = std::strcmp(pattern, "one-line") == 0;
    std::vector<double> samples_ns;
    alignas(64) std::byte copy[detail::cache_line_size];
    for (int access = 0; access < accesses; ++access) {
      if (node_rank == 0) {
        for (int reader = 0; reader <= node_size; ++reader) {
          std::memset(lines + static_cast<std::size_t>(reader) * detail::cache_line_size,
                      access & 0xFF, detail::cache_line_size);
        }
        std::atomic_thread_fence(std::memory_order_seq_cst);
      }
      cachecomm::detail::node_aware_barrier(impl);
      double elapsed = 0;
      if (node_rank != 0) {
        const std::byte* source =
            lines +
            (shared_line ? 0 : static_cast<std::size_t>(node_rank + 1) * detail::cache_line_size);
        double start = now_seconds();
        std::memcpy(copy, source, sizeof copy);
        std::atomic_signal_fence(std::memory_order_seq_cst);
        elapsed = now_seconds() - start;
        if (copy[7] != static_cast<std::byte>(access & 0xFF))
          elapsed = -1e9;  // stale: protocol broken
      }
      double slowest = 0;
      MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, impl.node());
      samples_ns.push_back(slowest * 1e9);
    }
    auto times = summarize(samples_ns);
    context.results.add({{"op", "line-contention"},
                         {"impl", "probe"},
                         {"algorithm", pattern},
                         {"bytes", detail::cache_line_size},
                         {"readers", node_size - 1},
                         {"iters", accesses},
                         {"median_ns", times.median},
                         {"p25_ns", times.p25},
                         {"p75_ns", times.p75}},
                        summarize([&] {
                          for (auto& sample : samples_ns) sample /= 1000.0;
                          return samples_ns;
                        }()));
  }
}

const coll_op_registration barrier_registration{
    {"barrier",
     "every barrier algorithm beside MPI_Barrier",
     run_barrier,
     {"impl", "algorithm", "median_us", "p25_us", "p75_us", "vs_mpi", "default"}}};
const coll_op_registration contention_registration{
    {"line-contention",
     "readers copying one shared cache line vs one line each",
     run_line_contention,
     {"algorithm", "readers", "median_ns", "p25_ns", "p75_ns"}}};

}  // namespace

}  // namespace cachecomm::bench
