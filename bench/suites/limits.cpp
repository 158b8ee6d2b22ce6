// `cachecomm-bench limits`: the physical references of this node: a cache line handed between two
// cores, memcpy bandwidth by size (plain and non-temporal), and STREAM copy/scale/add/triad.
#include <omp.h>

#include <vector>

#include "common/node_limits.hpp"
#include "common/node_suite.hpp"
#include "common/stream.hpp"

namespace cachecomm::bench {
namespace {

void run_limits(node_run& run) {
  MPI_Comm mpi = run.comm.mpi_comm();
  if (run.comm.size() >= 2) {
    for (bool one_line : {true, false}) {
      summary line = time_cache_line_pingpong(mpi, 0, 1, one_line, run.pick(200, 5000, 20000),
                                              run.pick(3, 11, 21));
      run.results.add({{"op", "cacheline_pingpong"},
                       {"impl", "limit"},
                       {"algorithm", one_line ? "one-line" : "two-lines"},
                       {"bytes", 4},
                       {"src", 0},
                       {"dst", 1},
                       {"half_round_trip", true}},
                      line);
    }
  } else {
    run.results.note("cache-line ping-pong needs 2 ranks");
  }
  run.progress(0.2);
  std::vector<std::size_t> sizes;
  for (std::size_t size = 64; size <= run.pick<std::size_t>(1U << 20, 64U << 20, 256U << 20);
       size *= run.pick(16, 4, 4)) {
    sizes.push_back(size);
  }
  on_rank_zero_alone(mpi, [&] {
    for (std::size_t index = 0; index < sizes.size(); ++index) {
      for (bool nontemporal : {false, true}) {
        summary times = time_memcpy(sizes[index], run.pick(3, 7, 15), nontemporal);
        run.results.add({{"op", "memcpy"},
                         {"impl", "limit"},
                         {"algorithm", nontemporal ? "non-temporal" : "memcpy"},
                         {"bytes", sizes[index]},
                         {"gbps", static_cast<double>(sizes[index]) / (times.median * 1e3)}},
                        times);
      }
      run.progress(0.2 + 0.4 * static_cast<double>(index + 1) / static_cast<double>(sizes.size()));
    }
    stream_options options;
    options.elements = run.pick<std::size_t>(200'000, 10'000'000, 20'000'000);
    options.repetitions = run.pick(3, 6, 10);
    for (const stream_result& kernel : run_stream(options)) {
      double median_us =
          static_cast<double>(kernel.bytes_per_iteration) / (kernel.median_gbps * 1e3);
      double best_us = static_cast<double>(kernel.bytes_per_iteration) / (kernel.best_gbps * 1e3);
      run.results.add({{"op", "stream_" + kernel.kernel},
                       {"impl", "limit"},
                       {"algorithm", "STREAM"},
                       {"bytes", kernel.bytes_per_iteration},
                       {"iters", options.repetitions},
                       {"median_us", median_us},
                       {"p25_us", best_us},
                       {"p75_us", median_us},
                       {"min_us", best_us},
                       {"gbps", kernel.best_gbps},
                       {"median_gbps", kernel.median_gbps},
                       {"threads", omp_get_max_threads()},
                       {"validated", true}});
    }
  });
  run.progress(1.0);
}

const node_step_registration registration{
    node_step{"limits",
              "Physical references: cache-line ping-pong, memcpy by size, STREAM (validated)",
              0,
              run_limits,
              {"op", "algorithm", "bytes", "median_us", "p25_us", "p75_us", "gbps"}}};

}  // namespace
}  // namespace cachecomm::bench
