// The seed's streaming Laplacian (Jacobi) kernel on a decomposed grid: Y = Laplacian(X), X += c*Y.
// The serial reference evaluates every cell with the same operations in the same order, so a
// distributed run must match it bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "cachecomm/grid.hpp"
#include "cachecomm/halo.hpp"

namespace cachecomm::laplace {

struct problem {
  double coefficient = 0.1;  ///< c in X += c*Y (stable below 1/4 in 2D, 1/6 in 3D)
  double border = 1.0;       ///< value of the cells beyond a fixed boundary
  std::uint64_t seed = 42;   ///< initial X is a hash of (seed, global cell)
};

/// Initial value of global cell (i, j, k): uniform in [0, 1), the same whatever the decomposition.
[[nodiscard]] double initial_value(std::uint64_t seed, const index3& global_size,
                                   const index3& cell);

/// The 2D / 3D stencil, evaluated in one fixed order (sums along the slowest dimension first).
[[nodiscard]] inline double stencil_2d(double north, double south, double west, double east,
                                       double centre) {
  return ((north + south) + (west + east)) - 4.0 * centre;
}
[[nodiscard]] inline double stencil_3d(double below, double above, double north, double south,
                                       double west, double east, double centre) {
  return (((below + above) + (north + south)) + (west + east)) - 6.0 * centre;
}
[[nodiscard]] inline double relax(double x, double coefficient, double y) {
  return x + coefficient * y;
}

/// X (field `x`) gets the initial values and the border in every ghost cell past a fixed boundary.
void initialize(grid<double>& g, int x, const problem& p);
/// Y = Laplacian(X) over `cells` (owned local coordinates); OpenMP threads and SIMD.
void compute_laplacian(const grid<double>& g, int x, int y, const box3& cells);
/// X += c*Y over every owned cell.
void relax_all(const grid<double>& g, int x, int y, double coefficient);

/// Owned cells whose stencil reads no ghost cell, and the shell around them (disjoint boxes).
[[nodiscard]] box3 interior_box(const grid_base& g);
[[nodiscard]] std::vector<box3> shell_boxes(const grid_base& g);
[[nodiscard]] box3 owned_box(const grid_base& g);

/// Serial reference: the whole grid in one array (global row-major, owned cells only) after
/// `iterations` steps of the same kernel, with the same boundaries.
[[nodiscard]] std::vector<double> serial_reference(const grid_spec& spec, const problem& p,
                                                   int iterations);

/// Bytes the kernel streams per lattice update, counted as STREAM counts (no write-allocate):
/// Y = L(X) reads X and writes Y, X += cY reads X and Y and writes X.
inline constexpr double bytes_per_update = 5 * sizeof(double);

}  // namespace cachecomm::laplace
