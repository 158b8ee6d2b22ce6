// Halo exchange and the Laplace solver over MPI ranks, with the shm and mpi transports (and the
// forced node split when registered with CACHECOMM_RANKS_PER_NODE=2).
#include <gtest/gtest.h>
#include <mpi.h>

#include "cachecomm/comm.hpp"
#include "cachecomm/error.hpp"
#include "grid/grid_cases.hpp"

namespace {

using namespace cachecomm;

std::unique_ptr<grid_transport> make(comm& c, const std::string& kind) {
  return kind == "shm" ? make_shm_transport(c) : make_mpi_transport(c);
}

class grid_mpi : public ::testing::TestWithParam<std::string> {};

TEST_P(grid_mpi, solver_is_bit_identical_to_serial_run) {
  comm c(MPI_COMM_WORLD);
  auto transport = make(c, GetParam());
  for (const auto& grid_case : grid_testing::solver_cases()) {
    EXPECT_EQ(grid_testing::check_bit_identical(*transport, grid_case), "") << grid_case.name;
  }
}

TEST_P(grid_mpi, ghost_cells_hold_neighbour_values) {
  comm c(MPI_COMM_WORLD);
  auto transport = make(c, GetParam());
  using b = boundary;
  for (auto layout : {grid_layout::row_major, grid_layout::tiled}) {
    for (auto shape : {halo_shape::faces, halo_shape::full}) {
      EXPECT_EQ(grid_testing::check_ghost_contents(
                    *transport, grid_testing::make_spec({23, 19}, 3, {b::periodic, b::periodic},
                                                        layout, shape)),
                "");
      EXPECT_EQ(
          grid_testing::check_ghost_contents(
              *transport, grid_testing::make_spec(
                              {9, 11, 10}, 2, {b::periodic, b::fixed, b::periodic}, layout, shape)),
          "");
    }
  }
}

TEST_P(grid_mpi, checked_mode_catches_a_misrouted_halo) {
  comm c(MPI_COMM_WORLD);
  auto transport = make(c, GetParam());
  using b = boundary;
  std::string seen = grid_testing::misrouted_halo_error(
      *transport,
      grid_testing::make_spec({24, 20}, 2, {b::periodic, b::periodic}, grid_layout::row_major));
  int caught = seen.empty() ? 0 : 1, anyone = 0;
  MPI_Allreduce(&caught, &anyone, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GE(anyone, 1) << "no rank noticed the misrouted halo";
  if (!seen.empty()) {
    EXPECT_NE(seen.find("ghost cell"), std::string::npos) << seen;
    EXPECT_NE(seen.find("sent by rank 0"), std::string::npos) << seen;
    EXPECT_NE(seen.find("intended for"), std::string::npos) << seen;
  }
}

INSTANTIATE_TEST_SUITE_P(transports, grid_mpi, ::testing::Values("shm", "mpi"));

TEST(grid_mpi_errors, bad_options_are_rejected_collectively) {
  comm c(MPI_COMM_WORLD);
  auto transport = make_shm_transport(c);
  grid_spec too_many;
  too_many.global_size = {1, 1};
  if (c.size() > 1) {
    EXPECT_THROW(grid<double>(*transport, too_many), invalid_argument);
  }
  grid_spec zero;
  zero.global_size = {0, 5};
  EXPECT_THROW(grid<double>(*transport, zero), invalid_argument);
}

TEST(grid_mpi_errors, message_beyond_an_int_count_is_refused) {
  // 2^32 + 8 bytes cast to MPI's int count is 8: the receive would silently take 8 bytes.
  comm c(MPI_COMM_WORLD);
  auto transport = make_mpi_transport(c);
  std::vector<std::byte> buffer(16);
  const std::size_t too_many = (std::size_t{1} << 32) + 8;
  EXPECT_THROW((void)transport->receive(c.rank(), 1, buffer.data(), too_many), invalid_argument);
  EXPECT_THROW((void)transport->send(c.rank(), 1, buffer.data(), std::size_t{1} << 31),
               invalid_argument);
}

TEST(grid_mpi_errors, mpi_neighbour_that_never_exchanges_is_named) {
  // Rank 0 exchanges alone over the mpi transport: its receive must end in peer_failure after
  // CACHECOMM_TIMEOUT, as on the shm transport, instead of blocking forever in MPI_Wait.
  auto settings = config::from_environment();
  settings.set("CACHECOMM_TIMEOUT", "1");
  comm c(MPI_COMM_WORLD, settings);
  if (c.size() < 2) GTEST_SKIP() << "needs a neighbour";
  auto transport = make_mpi_transport(c);
  grid<double> g(*transport,
                 grid_testing::make_spec({8, 8}, 1, {boundary::periodic, boundary::periodic},
                                         grid_layout::row_major));
  halo_exchange exchange(g, {0});
  if (c.rank() == 0) {
    auto handle = exchange.start();
    try {
      handle.wait();
      ADD_FAILURE() << "the exchange completed although no neighbour took part";
    } catch (const peer_failure& failure) {
      EXPECT_GT(failure.peer_rank(), 0) << failure.what();
      EXPECT_NE(std::string(failure.what()).find("halo exchange"), std::string::npos)
          << failure.what();
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
