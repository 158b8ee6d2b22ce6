// Side-by-side timing: candidates run in alternating batches (A, B, A, B, ...) on the same ranks.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "common/statistics.hpp"

namespace cachecomm::bench {

struct candidate {
  std::string impl;       ///< "cachecomm" or "mpi"
  std::string algorithm;  ///< e.g. "tree", "default"
  std::function<void()> operation;          ///< the timed call
  std::function<void(long)> prepare = {};   ///< untimed, before iteration i (e.g. fresh buffer contents)
};

struct timing_plan {
  int warmup_iterations = 100;
  int batches = 30;           ///< samples per candidate
  int iterations_per_batch = 100;
};

/// Per-iteration times in microseconds, one summary per candidate. A batch's time is the slowest
/// rank's sum of its timed calls, divided by the batch's iterations.
[[nodiscard]] std::vector<summary> measure_interleaved(MPI_Comm comm, const std::vector<candidate>& candidates,
                                                       const timing_plan& plan);

}  // namespace cachecomm::bench
