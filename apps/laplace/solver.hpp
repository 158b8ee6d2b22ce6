// The Jacobi loop with the seed's per-phase timing (compute / communicate / synchronize).
#pragma once

#include <vector>

#include "laplace_kernel.hpp"

namespace cachecomm::laplace {

struct run_options {
  int iterations = 100;
  bool overlap = true;   ///< compute the interior while halos travel
  problem physics;
};

/// Per-iteration seconds of each phase on this rank.
struct phase_samples {
  std::vector<double> compute, communicate, synchronize, total;
};

/// Field 0 of `g` is X, field 1 is Y; `exchange` moves the halos of X. Initializes X first.
[[nodiscard]] phase_samples solve(grid<double>& g, halo_exchange& exchange, const run_options& options);

/// Owned cells of X that differ bit for bit from `reference` (global row-major), with the first one described.
struct comparison {
  long mismatches = 0;
  std::string first;
};
[[nodiscard]] comparison compare_with_reference(const grid<double>& g, int x, const std::vector<double>& reference);

}  // namespace cachecomm::laplace
