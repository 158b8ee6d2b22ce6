// Side-by-side timing: candidates run in interleaved batches on the same ranks, in a new order
// every round (A, B, C, then C, A, B, ...).
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "common/statistics.hpp"

namespace cachecomm::bench {

struct candidate {
  std::string impl;                 ///< "cachecomm" or "mpi"
  std::string algorithm;            ///< e.g. "tree", "default"
  std::function<void()> operation;  ///< the timed call
  std::function<void(long)> prepare =
      {};  ///< untimed, before iteration i (e.g. fresh buffer contents)
};

struct timing_plan {
  int warmup_iterations = 100;
  int batches = 30;  ///< samples per candidate
  int iterations_per_batch = 100;
};

/// Per-iteration times in microseconds, one summary per candidate. A batch's time is the slowest
/// rank's sum of its timed calls, divided by the batch's iterations.
[[nodiscard]] std::vector<summary> measure_interleaved(MPI_Comm comm,
                                                       const std::vector<candidate>& candidates,
                                                       const timing_plan& plan);

/// Times of candidates that share one `prepare`, plus the EPCC reference: the same prepare with an
/// empty operation, timed the same way and interleaved with them. When every call is timed on its
/// own (candidates with a prepare), each sample also holds a clock read and a call through
/// std::function; `reference.median` is that overhead, to be subtracted from each candidate's
/// median.
struct referenced_times {
  std::vector<summary> candidates;
  summary reference;
  /// max(0, candidate median - reference median): the operation's own time.
  [[nodiscard]] double corrected_median(std::size_t index) const;
};
[[nodiscard]] referenced_times measure_interleaved_with_reference(MPI_Comm comm,
                                                                  std::vector<candidate> candidates,
                                                                  const timing_plan& plan);

}  // namespace cachecomm::bench
