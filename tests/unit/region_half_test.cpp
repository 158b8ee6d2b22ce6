// How big each half of the collectives' data region is laid out (region_half_bytes).
#include <gtest/gtest.h>

#include "coll/coll_settings.hpp"

namespace cachecomm::detail {
namespace {

constexpr std::size_t mib = 1U << 20;

TEST(RegionHalf, IsTwiceTheL2WhereEveryRankHasACoreOfItsOwn) {
  EXPECT_EQ(region_half_bytes(mib, 0, mib, false), 2 * mib);
  EXPECT_EQ(region_half_bytes(mib, 0, 2 * mib, false), 4 * mib);
}

TEST(RegionHalf, NeverShrinksBelowWhatThePipelinedPathsUse) {
  EXPECT_EQ(region_half_bytes(mib, 0, 256U << 10, false), mib);
  EXPECT_EQ(region_half_bytes(8 * mib, 0, mib, false), 8 * mib);
  EXPECT_EQ(region_half_bytes(4 * mib, 2 * mib, mib, false), 4 * mib);
}

TEST(RegionHalf, StaysTheRegionWhenOversubscribedOrTheL2IsUnknown) {
  EXPECT_EQ(region_half_bytes(mib, 0, mib, true), mib);
  EXPECT_EQ(region_half_bytes(mib, 0, 0, false), mib);
}

TEST(RegionHalf, TakesAnExplicitRingSizeEvenOversubscribedRoundedToPages) {
  EXPECT_EQ(region_half_bytes(mib, 3 * mib, mib, true), 3 * mib);
  EXPECT_EQ(region_half_bytes(mib, 3 * mib + 1, 0, false), 3 * mib + 4096);
}

TEST(RegionHalf, CapsTheAutomaticSizeAt16MiB) {
  EXPECT_EQ(region_half_bytes(mib, 0, 32 * mib, false), 16 * mib);
}

}  // namespace
}  // namespace cachecomm::detail
