// Decomposition, layouts and option checks; the solver and halo checks on the model transport
// (every rank a thread, no MPI); convergence of the smoothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <set>

#include "grid/grid_cases.hpp"

namespace {

using namespace cachecomm;
using b = boundary;

std::string run_on_model(int ranks, const std::function<std::string(grid_transport&)>& check) {
  std::mutex mutex;
  std::string problems;
  run_model_ranks(ranks, [&](grid_transport& transport) {
    std::string found = check(transport);
    std::lock_guard lock(mutex);
    problems += found;
  });
  return problems;
}

TEST(decomposition, covers_uneven_grids_exactly) {
  for (int ranks : {1, 2, 3, 4, 5, 6, 8, 12}) {
    grid_spec spec = grid_testing::make_spec({37, 29, 11}, 1, {}, grid_layout::row_major);
    decomposition decomp(spec, ranks);
    long cells = 0;
    for (int r = 0; r < ranks; ++r) {
      auto size = decomp.local_size(r);
      cells += size[0] * size[1] * size[2];
      EXPECT_EQ(decomp.rank_at(decomp.coords_of(r)), r);
    }
    EXPECT_EQ(cells, 37L * 29 * 11) << ranks << " ranks";
  }
}

TEST(decomposition, automatic_and_explicit_factorization) {
  grid_spec spec = grid_testing::make_spec({4096, 8192}, 1, {}, grid_layout::row_major);
  decomposition automatic(spec, 2);
  EXPECT_EQ(automatic.ranks_per_dim()[1] * automatic.ranks_per_dim()[2], 2);
  EXPECT_EQ(automatic.ranks_per_dim()[2], 2);  // cut the long dimension: smaller faces
  grid_spec square = grid_testing::make_spec({8192, 8192}, 1, {}, grid_layout::row_major);
  EXPECT_EQ(decomposition(square, 2).ranks_per_dim()[1],
            2);  // a tie cuts the slowest dimension: contiguous faces
  spec.ranks_per_dim = {2, 1};
  decomposition given(spec, 2);
  EXPECT_EQ(given.ranks_per_dim()[1], 2);
  spec.ranks_per_dim = {3, 1};
  EXPECT_THROW(decomposition(spec, 2), invalid_argument);
}

TEST(decomposition, bad_options_get_clear_errors) {
  auto message_of = [](const grid_spec& spec, int ranks) -> std::string {
    try {
      decomposition decomp(spec, ranks);
    } catch (const invalid_argument& error) {
      return error.what();
    }
    return "no error";
  };
  EXPECT_NE(message_of(grid_testing::make_spec({0, 5}, 1, {}, grid_layout::row_major), 1)
                .find("at least 1"),
            std::string::npos);
  EXPECT_NE(message_of(grid_testing::make_spec({-3, 5}, 1, {}, grid_layout::row_major), 1)
                .find("at least 1"),
            std::string::npos);
  EXPECT_NE(message_of(grid_testing::make_spec({2, 2}, 1, {}, grid_layout::row_major), 5)
                .find("more ranks than cells"),
            std::string::npos);
  EXPECT_NE(message_of(grid_testing::make_spec({8, 8}, 3, {}, grid_layout::row_major), 4)
                .find("ghost width 3 is wider"),
            std::string::npos);
  EXPECT_NE(message_of(grid_testing::make_spec({8, 8}, 0, {}, grid_layout::row_major), 1)
                .find("ghost width"),
            std::string::npos);
  EXPECT_NE(
      message_of(grid_testing::make_spec({8}, 1, {}, grid_layout::row_major), 1).find("2 or 3"),
      std::string::npos);
  EXPECT_NE(message_of(grid_testing::make_spec({8, 8}, 1, {b::fixed}, grid_layout::row_major), 1)
                .find("boundaries"),
            std::string::npos);
}

TEST(field_layout, both_layouts_are_one_to_one) {
  for (auto kind : {grid_layout::row_major, grid_layout::tiled}) {
    field_layout layout({3, 10, 13}, {2, 2, 2}, kind, {4, 4, 8});
    std::set<std::size_t> seen;
    for (long i = -2; i < 5; ++i)
      for (long j = -2; j < 12; ++j)
        for (long k = -2; k < 15; ++k) {
          auto offset = layout.offset(i, j, k);
          EXPECT_LT(offset, layout.cells());
          EXPECT_TRUE(seen.insert(offset).second) << to_string(kind);
        }
  }
}

TEST(model_transport, solver_is_bit_identical_to_serial_run) {
  for (int ranks : {1, 2, 3, 4, 8}) {
    for (const auto& grid_case : grid_testing::solver_cases()) {
      EXPECT_EQ(run_on_model(ranks,
                             [&](grid_transport& t) {
                               return grid_testing::check_bit_identical(t, grid_case);
                             }),
                "")
          << grid_case.name << " on " << ranks << " model ranks";
    }
  }
}

TEST(model_transport, ghost_cells_hold_neighbour_values) {
  for (int ranks : {1, 3, 4}) {
    for (auto shape : {halo_shape::faces, halo_shape::full}) {
      auto spec = grid_testing::make_spec({9, 11, 10}, 2, {b::periodic, b::fixed, b::periodic},
                                          grid_layout::tiled, shape);
      EXPECT_EQ(run_on_model(
                    ranks,
                    [&](grid_transport& t) { return grid_testing::check_ghost_contents(t, spec); }),
                "");
    }
  }
}

TEST(model_transport, checked_mode_catches_a_misrouted_halo) {
  for (int ranks : {1, 2, 4}) {
    auto spec =
        grid_testing::make_spec({24, 20}, 2, {b::periodic, b::periodic}, grid_layout::tiled);
    std::string seen = run_on_model(
        ranks, [&](grid_transport& t) { return grid_testing::misrouted_halo_error(t, spec); });
    EXPECT_NE(seen.find("sent by rank 0"), std::string::npos) << seen;
    EXPECT_NE(seen.find("intended for"), std::string::npos) << seen;
    if (ranks == 2) std::printf("checked-halo message: %s\n", seen.c_str());
  }
}

TEST(model_transport, a_failing_rank_stops_the_others) {
  EXPECT_THROW(run_model_ranks(3,
                               [](grid_transport& t) {
                                 if (t.rank() == 1) throw invalid_argument("rank 1 gives up");
                                 t.barrier();
                               }),
               invalid_argument);
}

TEST(laplace, smoothing_converges_to_the_border_value) {
  for (auto size : {std::vector<long>{10, 12}, std::vector<long>{6, 7, 5}}) {
    grid_spec spec = grid_testing::make_spec(size, 1, {}, grid_layout::row_major);
    laplace::problem physics;
    physics.coefficient = size.size() == 2 ? 0.2 : 0.15;
    physics.border = 3.0;
    double previous = 1e300;
    for (int iterations : {0, 50, 200, 800, 3000}) {
      auto x = laplace::serial_reference(spec, physics, iterations);
      double deviation = 0;
      for (double value : x) deviation = std::max(deviation, std::abs(value - physics.border));
      EXPECT_TRUE(deviation < previous || deviation < 1e-12)
          << iterations << " iterations: " << deviation;
      previous = deviation;
    }
    EXPECT_LT(previous, 1e-6);
  }
}

}  // namespace
