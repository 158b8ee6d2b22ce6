// Grid and halo checks shared by the MPI tests and the model-transport unit tests: each runs on
// one rank of any transport and returns an empty string on success, else what went wrong.
#pragma once

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cachecomm/grid.hpp"
#include "cachecomm/halo.hpp"
#include "grid/halo_plan.hpp"
#include "solver.hpp"

namespace cachecomm::grid_testing {

struct grid_case {
  std::string name;
  grid_spec spec;
  bool overlap = true;
};

inline grid_spec make_spec(std::vector<long> size, int ghost, std::vector<boundary> boundaries,
                           grid_layout layout, halo_shape shape = halo_shape::faces) {
  grid_spec spec;
  spec.global_size = std::move(size);
  spec.ghost_width = ghost;
  spec.boundaries = std::move(boundaries);
  spec.layout = layout;
  spec.shape = shape;
  return spec;
}

/// Uneven sizes, ghost widths 1 and 3, fixed / periodic / mixed, both layouts, overlap on and off.
inline std::vector<grid_case> solver_cases() {
  using b = boundary;
  const auto rm = grid_layout::row_major, tiled = grid_layout::tiled;
  return {
      {"2d-fixed-g1-rowmajor-overlap", make_spec({37, 29}, 1, {b::fixed, b::fixed}, rm), true},
      {"2d-periodic-g3-tiled-nooverlap-full",
       make_spec({37, 29}, 3, {b::periodic, b::periodic}, tiled, halo_shape::full), false},
      {"2d-mixed-g1-tiled-overlap", make_spec({41, 23}, 1, {b::periodic, b::fixed}, tiled), true},
      {"3d-fixed-g1-rowmajor-overlap",
       make_spec({13, 11, 9}, 1, {b::fixed, b::fixed, b::fixed}, rm), true},
      {"3d-periodic-g3-rowmajor-nooverlap-full",
       make_spec({13, 11, 10}, 3, {b::periodic, b::periodic, b::periodic}, rm, halo_shape::full),
       false},
      {"3d-mixed-g3-tiled-overlap",
       make_spec({12, 11, 9}, 3, {b::fixed, b::periodic, b::fixed}, tiled), true},
  };
}

inline constexpr int solver_iterations = 8;

/// Runs the distributed solver and compares every owned cell bit for bit with a serial run.
inline std::string check_bit_identical(grid_transport& transport, const grid_case& c) {
  grid<double> g(transport, c.spec, 2);
  halo_exchange exchange(g, {0});
  laplace::run_options options;
  options.iterations = solver_iterations;
  options.overlap = c.overlap;
  (void)laplace::solve(g, exchange, options);
  auto reference = laplace::serial_reference(c.spec, options.physics, options.iterations);
  auto result = laplace::compare_with_reference(g, 0, reference);
  if (result.mismatches == 0) return {};
  std::ostringstream text;  // (not operator+: GCC 12 warns falsely about it, -Wrestrict)
  text << c.name << ": " << result.mismatches
       << " cells differ from the serial run; first: " << result.first;
  return text.str();
}

inline double cell_tag(const index3& global) {
  return static_cast<double>(global[0] * 1000000 + global[1] * 1000 + global[2]) + 0.5;
}

/// Fills owned cells of two fields with a function of the global cell, exchanges both in one call,
/// and checks every ghost cell the shape promises: it must hold its wrapped cell's value.
inline std::string check_ghost_contents(grid_transport& transport, const grid_spec& spec) {
  grid<double> g(transport, spec, 2);
  halo_exchange exchange(g, {0, 1});
  const auto& decomp = g.decomp();
  const index3 size = g.local_size();
  const index3 offset = g.global_offset();
  std::ostringstream problems;
  for (int round = 0; round < 3; ++round) {
    for (int f = 0; f < 2; ++f)
      for (long i = 0; i < size[0]; ++i)
        for (long j = 0; j < size[1]; ++j)
          for (long k = 0; k < size[2]; ++k) {
            g.at(f, i, j, k) =
                cell_tag({offset[0] + i, offset[1] + j, offset[2] + k}) * (f + 1) + round;
          }
    if (round == 1) {
      // Completion by polling: test() must never block and must finish the exchange by itself.
      halo_handle pending = exchange.start();
      while (!pending.test()) std::this_thread::yield();
      if (pending.active()) problems << "test() returned true but the handle is still active; ";
    } else {
      exchange.run();
    }
    for (int f = 0; f < 2; ++f)
      for (long i = -decomp.ghost(0); i < size[0] + decomp.ghost(0); ++i)
        for (long j = -decomp.ghost(1); j < size[1] + decomp.ghost(1); ++j)
          for (long k = -decomp.ghost(2); k < size[2] + decomp.ghost(2); ++k) {
            const index3 local{i, j, k};
            index3 global{};
            int outside_local = 0;
            bool past_fixed = false;
            for (int d = 0; d < grid_max_dims; ++d) {
              global[d] = offset[d] + local[d];
              if (local[d] < 0 || local[d] >= size[d]) ++outside_local;
              if ((global[d] < 0 || global[d] >= decomp.global_size()[d]) &&
                  decomp.boundary_of(d) == boundary::fixed) {
                past_fixed = true;
              }
            }
            if (outside_local == 0 || past_fixed) continue;
            if (spec.shape == halo_shape::faces && outside_local > 1) continue;
            const double expected = cell_tag(decomp.wrap(global)) * (f + 1) + round;
            if (g.at(f, i, j, k) != expected && problems.tellp() < 400) {
              problems << "rank " << g.rank() << " field " << f << " ghost (" << i << "," << j
                       << "," << k << ") holds " << g.at(f, i, j, k) << ", expected " << expected
                       << "; ";
            }
          }
  }
  return problems.str();
}

/// Checked halos: rank 0 reads its first halo from cells one step inside where it should (a
/// misrouted message of the right size). Returns the error text this rank saw ("" if none).
inline std::string misrouted_halo_error(grid_transport& transport, grid_spec spec) {
  spec.checked = true;
  grid<double> g(transport, spec, 1);
  halo_exchange exchange(g, {0});
  exchange.run();  // a clean exchange passes
  if (g.rank() == 0 && !exchange.plan_for_testing().sends.empty()) {
    auto& send = exchange.plan_for_testing().sends.front();
    for (int d = 0; d < grid_max_dims; ++d) {
      send.source.low[d] -= send.offset[d];
      send.source.high[d] -= send.offset[d];
    }
  }
  try {
    exchange.run();
  } catch (const usage_error& error) {
    return error.what();
  }
  return {};
}

}  // namespace cachecomm::grid_testing
