// The Jacobi loop with the seed's per-phase timing (compute / communicate / synchronize).
#pragma once

#include <vector>

#include "laplace_kernel.hpp"

namespace cachecomm::laplace {

struct run_options {
  int iterations = 100;
  bool overlap = true;  ///< compute the interior while halos travel
  problem physics;
};

/// Per-iteration seconds of each phase on this rank.
struct phase_samples {
  std::vector<double> compute, communicate, synchronize, total;
};

/// The Jacobi loop one iteration at a time (so that runs over different transports can be
/// interleaved). Field 0 of `g` is X, field 1 is Y; `exchange` moves the halos of X.
class jacobi {
 public:
  /// Initializes X (collective: ends with a barrier).
  jacobi(grid<double>& g, halo_exchange& exchange, const run_options& options);
  /// Back to the initial X (after warm-up iterations).
  void restart();
  /// One iteration; appends its phase times to `samples`.
  void step(phase_samples& samples);

 private:
  grid<double>* m_grid;
  halo_exchange* m_exchange;
  run_options m_options;
  box3 m_everything, m_interior;
  std::vector<box3> m_shell;
};

/// `options.iterations` iterations from the initial X.
[[nodiscard]] phase_samples solve(grid<double>& g, halo_exchange& exchange,
                                  const run_options& options);

/// Owned cells of X that differ bit for bit from `reference` (global row-major), with the first one
/// described.
struct comparison {
  long mismatches = 0;
  std::string first;
};
[[nodiscard]] comparison compare_with_reference(const grid<double>& g, int x,
                                                const std::vector<double>& reference);

}  // namespace cachecomm::laplace
