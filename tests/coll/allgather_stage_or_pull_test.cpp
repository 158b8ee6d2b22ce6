// The stage-or-pull allgather, forced by CACHECOMM_ALLGATHER=stage-or-pull, with each way of moving
// a block forced by CACHECOMM_ALLGATHER_STAGING (stage, pull, alternate: ranks out of phase, so a
// reader meets both kinds of chunk in one call and from one call to the next; auto: the measured
// choice), against MPI_Allgather, in place and not, over one and several steps per block. Each rank
// rewrites its send block as soon as the call returns: a pulled block whose owner returned before
// its readers finished shows up as wrong data in the check.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"
#include "coll/coll_test_support.hpp"

namespace cachecomm {
namespace {

using testing::all_ranks;

std::uint8_t byte_of(int rank, std::size_t index, int call) {
  return static_cast<std::uint8_t>(
      (static_cast<std::size_t>(rank) * 131U + index * 7U + static_cast<std::size_t>(call) * 29U) %
      251U);
}

TEST(AllgatherStageOrPull, TheForcedChoiceIsStageOrPull) {
  comm c(MPI_COMM_WORLD);
  EXPECT_EQ(explain_allgather(c, 256U << 10).algorithm, "stage-or-pull");
}

TEST(AllgatherStageOrPull, MatchesMpiInPlaceAndNot) {
  comm c(MPI_COMM_WORLD);
  const auto size = static_cast<std::size_t>(c.size());
  // One byte, odd sizes, a block of one region step and blocks of several (the small-region
  // variant cuts 1 MiB into many steps).
  for (std::size_t block : {std::size_t{1}, std::size_t{4097}, std::size_t{65536 + 8},
                            std::size_t{300000}, (std::size_t{1} << 20) + 24}) {
    std::vector<std::uint8_t> input(block), expected(block * size), got(block * size + 1);
    for (int call = 0; call < 6; ++call) {
      const bool in_place_call = call % 3 == 2;
      for (std::size_t i = 0; i < block; ++i) input[i] = byte_of(c.rank(), i, call);
      MPI_Allgather(input.data(), static_cast<int>(block), MPI_BYTE, expected.data(),
                    static_cast<int>(block), MPI_BYTE, MPI_COMM_WORLD);
      std::fill(got.begin(), got.end(), 0xEE);
      if (in_place_call)
        std::memcpy(got.data() + static_cast<std::size_t>(c.rank()) * block, input.data(), block);
      allgather(c, in_place_call ? in_place : input.data(), got.data(), block, datatype::byte);
      // The caller may reuse its block at once: a reader still pulling it would see this.
      if (!in_place_call) std::fill(input.begin(), input.end(), 0x5A);
      const bool ok =
          std::memcmp(got.data(), expected.data(), block * size) == 0 && got[block * size] == 0xEE;
      ASSERT_TRUE(all_ranks(ok)) << "block " << block << " call " << call
                                 << (in_place_call ? " in place" : "");
    }
  }
}

}  // namespace
}  // namespace cachecomm
