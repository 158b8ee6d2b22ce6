#include "laplace_kernel.hpp"

#include <omp.h>

namespace cachecomm::laplace {

namespace {

std::uint64_t splitmix64(std::uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

// Boxes with fewer cells than this run on the calling thread (the shell, small test grids).
constexpr long parallel_threshold = 1 << 15;

}  // namespace

double initial_value(std::uint64_t seed, const index3& global_size, const index3& cell) {
  const auto linear =
      static_cast<std::uint64_t>((cell[0] * global_size[1] + cell[1]) * global_size[2] + cell[2]);
  return static_cast<double>(splitmix64(seed * 0x100000001b3ULL ^ linear) >> 11) * 0x1.0p-53;
}

void initialize(grid<double>& g, int x, const problem& p) {
  const auto& decomp = g.decomp();
  const index3& size = g.local_size();
  const index3& offset = g.global_offset();
  const index3& global = decomp.global_size();
  index3 low{}, high{};
  for (int d = 0; d < grid_max_dims; ++d) {
    low[d] = -decomp.ghost(d);
    high[d] = size[d] + decomp.ghost(d);
  }
  for (long i = low[0]; i < high[0]; ++i)
    for (long j = low[1]; j < high[1]; ++j)
      for (long k = low[2]; k < high[2]; ++k) {
        const index3 cell{offset[0] + i, offset[1] + j, offset[2] + k};
        bool owned = true, past_fixed = false;
        for (int d = 0; d < grid_max_dims; ++d) {
          const bool local_ghost = (d == 0   ? i
                                    : d == 1 ? j
                                             : k) < 0 ||
                                   (d == 0   ? i
                                    : d == 1 ? j
                                             : k) >= size[d];
          owned = owned && !local_ghost;
          if ((cell[d] < 0 || cell[d] >= global[d]) && decomp.boundary_of(d) == boundary::fixed)
            past_fixed = true;
        }
        double& value = g.at(x, i, j, k);
        if (owned)
          value = initial_value(p.seed, global, cell);
        else
          value = past_fixed ? p.border : 0.0;  // other ghosts are filled by the exchange
      }
}

box3 owned_box(const grid_base& g) {
  box3 b;
  b.high = g.local_size();
  return b;
}

box3 interior_box(const grid_base& g) {
  box3 b = owned_box(g);
  for (int d = 0; d < grid_max_dims; ++d) {
    if (g.decomp().ghost(d) == 0) continue;
    b.low[d] = 1;
    b.high[d] = std::max(1L, g.local_size()[d] - 1);
  }
  return b;
}

std::vector<box3> shell_boxes(const grid_base& g) {
  std::vector<box3> boxes;
  const box3 inner = interior_box(g);
  const index3& size = g.local_size();
  for (int d = 0; d < grid_max_dims; ++d) {
    if (g.decomp().ghost(d) == 0) continue;
    box3 slab = owned_box(g);
    for (int e = 0; e < d; ++e) {
      slab.low[e] = inner.low[e];
      slab.high[e] = inner.high[e];
    }
    box3 low_slab = slab, high_slab = slab;
    low_slab.high[d] = 1;
    if (low_slab.count() > 0) boxes.push_back(low_slab);
    if (size[d] >= 2) {
      high_slab.low[d] = size[d] - 1;
      if (high_slab.count() > 0) boxes.push_back(high_slab);
    }
  }
  return boxes;
}

void compute_laplacian(const grid<double>& g, int x, int y, const box3& cells) {
  if (cells.count() <= 0) return;
  const field_layout& layout = g.layout();
  const double* in = g.data(x);
  double* out = g.data(y);
  const bool three_d = g.decomp().dims() == 3;
  const bool rows = layout.contiguous_rows();
  const long k_low = cells.low[2], k_high = cells.high[2];
#pragma omp parallel for collapse(2) schedule(static) if (cells.count() >= parallel_threshold)
  for (long i = cells.low[0]; i < cells.high[0]; ++i) {
    for (long j = cells.low[1]; j < cells.high[1]; ++j) {
      const std::size_t row = layout.part(0, i) + layout.part(1, j);
      const std::size_t north = layout.part(0, i) + layout.part(1, j - 1);
      const std::size_t south = layout.part(0, i) + layout.part(1, j + 1);
      const std::size_t below = three_d ? layout.part(0, i - 1) + layout.part(1, j) : 0;
      const std::size_t above = three_d ? layout.part(0, i + 1) + layout.part(1, j) : 0;
      if (rows) {
        const std::size_t first = layout.part(2, 0);  // row-major: element k sits at first + k
        const double* centre = in + row + first;
        const double* n = in + north + first;
        const double* s = in + south + first;
        double* result = out + row + first;
        if (three_d) {
          const double* b = in + below + first;
          const double* a = in + above + first;
#pragma omp simd
          for (long k = k_low; k < k_high; ++k) {
            result[k] = stencil_3d(b[k], a[k], n[k], s[k], centre[k - 1], centre[k + 1], centre[k]);
          }
        } else {
#pragma omp simd
          for (long k = k_low; k < k_high; ++k) {
            result[k] = stencil_2d(n[k], s[k], centre[k - 1], centre[k + 1], centre[k]);
          }
        }
        continue;
      }
      for (long k = k_low; k < k_high; ++k) {
        const std::size_t here = layout.part(2, k);
        const double west = in[row + layout.part(2, k - 1)];
        const double east = in[row + layout.part(2, k + 1)];
        out[row + here] =
            three_d ? stencil_3d(in[below + here], in[above + here], in[north + here],
                                 in[south + here], west, east, in[row + here])
                    : stencil_2d(in[north + here], in[south + here], west, east, in[row + here]);
      }
    }
  }
}

void relax_all(const grid<double>& g, int x, int y, double coefficient) {
  const box3 cells = owned_box(g);
  const field_layout& layout = g.layout();
  double* values = g.data(x);
  const double* change = g.data(y);
  const bool rows = layout.contiguous_rows();
  const long k_high = cells.high[2];
#pragma omp parallel for collapse(2) schedule(static) if (cells.count() >= parallel_threshold)
  for (long i = cells.low[0]; i < cells.high[0]; ++i) {
    for (long j = cells.low[1]; j < cells.high[1]; ++j) {
      const std::size_t row = layout.part(0, i) + layout.part(1, j);
      if (rows) {
        double* v = values + row + layout.part(2, 0);
        const double* c = change + row + layout.part(2, 0);
#pragma omp simd
        for (long k = 0; k < k_high; ++k) v[k] = relax(v[k], coefficient, c[k]);
        continue;
      }
      for (long k = 0; k < k_high; ++k) {
        const std::size_t here = row + layout.part(2, k);
        values[here] = relax(values[here], coefficient, change[here]);
      }
    }
  }
}

std::vector<double> serial_reference(const grid_spec& spec, const problem& p, int iterations) {
  grid_spec serial = spec;
  serial.ranks_per_dim.clear();  // one rank holds everything
  const decomposition decomp(serial, 1);
  const index3& size = decomp.global_size();
  const bool three_d = decomp.dims() == 3;
  index3 extent{};
  index3 pad{};
  for (int d = 0; d < grid_max_dims; ++d) {
    pad[d] = decomp.ghost(d) > 0 ? 1 : 0;
    extent[d] = size[d] + 2 * pad[d];
  }
  auto at = [&](long i, long j, long k) {
    return static_cast<std::size_t>(((i + pad[0]) * extent[1] + (j + pad[1])) * extent[2] +
                                    (k + pad[2]));
  };
  std::vector<double> x(static_cast<std::size_t>(extent[0] * extent[1] * extent[2]), 0.0),
      y(x.size(), 0.0);
  for (long i = 0; i < size[0]; ++i)
    for (long j = 0; j < size[1]; ++j)
      for (long k = 0; k < size[2]; ++k) x[at(i, j, k)] = initial_value(p.seed, size, {i, j, k});
  auto fill_ghosts = [&] {
    for (long i = -pad[0]; i < size[0] + pad[0]; ++i)
      for (long j = -pad[1]; j < size[1] + pad[1]; ++j)
        for (long k = -pad[2]; k < size[2] + pad[2]; ++k) {
          const index3 cell{i, j, k};
          bool outside = false, past_fixed = false;
          for (int d = 0; d < grid_max_dims; ++d) {
            if (cell[d] < 0 || cell[d] >= size[d]) {
              outside = true;
              if (decomp.boundary_of(d) == boundary::fixed) past_fixed = true;
            }
          }
          if (!outside) continue;
          if (past_fixed) {
            x[at(i, j, k)] = p.border;
          } else {
            const index3 source = decomp.wrap(cell);
            x[at(i, j, k)] = x[at(source[0], source[1], source[2])];
          }
        }
  };
  for (int iteration = 0; iteration < iterations; ++iteration) {
    fill_ghosts();
    for (long i = 0; i < size[0]; ++i)
      for (long j = 0; j < size[1]; ++j)
        for (long k = 0; k < size[2]; ++k) {
          y[at(i, j, k)] = three_d
                               ? stencil_3d(x[at(i - 1, j, k)], x[at(i + 1, j, k)],
                                            x[at(i, j - 1, k)], x[at(i, j + 1, k)],
                                            x[at(i, j, k - 1)], x[at(i, j, k + 1)], x[at(i, j, k)])
                               : stencil_2d(x[at(i, j - 1, k)], x[at(i, j + 1, k)],
                                            x[at(i, j, k - 1)], x[at(i, j, k + 1)], x[at(i, j, k)]);
        }
    for (long i = 0; i < size[0]; ++i)
      for (long j = 0; j < size[1]; ++j)
        for (long k = 0; k < size[2]; ++k)
          x[at(i, j, k)] = relax(x[at(i, j, k)], p.coefficient, y[at(i, j, k)]);
  }
  std::vector<double> owned;
  owned.reserve(static_cast<std::size_t>(size[0] * size[1] * size[2]));
  for (long i = 0; i < size[0]; ++i)
    for (long j = 0; j < size[1]; ++j)
      for (long k = 0; k < size[2]; ++k) owned.push_back(x[at(i, j, k)]);
  return owned;
}

}  // namespace cachecomm::laplace
