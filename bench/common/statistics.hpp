// Order statistics of per-iteration times (the contract reports medians and quartiles).
#pragma once

#include <vector>

namespace cachecomm::bench {

struct summary {
  double median = 0, p25 = 0, p75 = 0, min = 0, max = 0, mean = 0;
  std::size_t samples = 0;
};

/// Summarizes `samples` (any unit); an empty input gives zeros.
[[nodiscard]] summary summarize(std::vector<double> samples);

/// Wall-clock seconds from a monotonic clock.
[[nodiscard]] double now_seconds();

}  // namespace cachecomm::bench
