// How big each half of the collectives' data region is laid out (region_half_bytes), and how many
// slots per rank the nonblocking channel cycles through (nonblocking_ring_slots) and where in its
// slot an operation's data lies (nonblocking_payload_offset), and how large the slots are by
// default (nonblocking_slot_bytes).
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

constexpr std::size_t slot_64k = 64U << 10;

TEST(NonblockingRing, SpansTwiceTheL2PerRankWhereEveryRankHasACoreOfItsOwn) {
  EXPECT_EQ(nonblocking_ring_slots(slot_64k, 2, mib, false), 32U);
  EXPECT_EQ(nonblocking_ring_slots(4U << 10, 2, mib, false), 64U);  // at most 64
  EXPECT_EQ(nonblocking_ring_slots(1U << 20, 1, mib, false), 4U);   // at least 4
}

TEST(NonblockingRing, KeepsTheWholeChannelWithin8MiB) {
  EXPECT_EQ(nonblocking_ring_slots(slot_64k, 4, mib, false), 16U);
  EXPECT_EQ(nonblocking_ring_slots(slot_64k, 8, mib, false), 8U);
  EXPECT_EQ(nonblocking_ring_slots(slot_64k, 16, mib, false), 4U);
  // Never below 4, however large the slots or the communicator.
  EXPECT_EQ(nonblocking_ring_slots(slot_64k, 64, mib, false), 4U);
}

TEST(NonblockingRing, FollowsItsSettingWhenSet) {
  EXPECT_EQ(nonblocking_ring_slots(slot_64k, 2, mib, false, 4), 4U);
  EXPECT_EQ(nonblocking_ring_slots(slot_64k, 16, mib, true, 64), 64U);
}

TEST(NonblockingRing, IsFourWhenOversubscribedOrTheL2IsUnknown) {
  EXPECT_EQ(nonblocking_ring_slots(slot_64k, 2, mib, true), 4U);
  EXPECT_EQ(nonblocking_ring_slots(slot_64k, 2, 0, false), 4U);
}

constexpr std::size_t kib = 1U << 10;

TEST(NonblockingSlot, Is256KiBUpTo8RanksThenHalvedAsRanksDoubleDownTo64KiB) {
  EXPECT_EQ(nonblocking_slot_bytes(0, 1), 256 * kib);
  EXPECT_EQ(nonblocking_slot_bytes(0, 8), 256 * kib);
  EXPECT_EQ(nonblocking_slot_bytes(0, 9), 128 * kib);
  EXPECT_EQ(nonblocking_slot_bytes(0, 16), 128 * kib);
  EXPECT_EQ(nonblocking_slot_bytes(0, 32), 64 * kib);
  EXPECT_EQ(nonblocking_slot_bytes(0, 256), 64 * kib);
}

TEST(NonblockingSlot, FollowsItsSettingWhenSet) {
  EXPECT_EQ(nonblocking_slot_bytes(65536, 2), 64 * kib);
  EXPECT_EQ(nonblocking_slot_bytes(4U << 20, 64), 4U << 20);
}

TEST(NonblockingPayload, WalksThroughTheSlotOnceEveryRingOfOperations) {
  // 16 KiB in a 64 KiB slot: four places, the next one each time the ring comes round.
  EXPECT_EQ(nonblocking_payload_offset(5, 32, 16 * kib, 64 * kib, false), 0U);
  EXPECT_EQ(nonblocking_payload_offset(37, 32, 16 * kib, 64 * kib, false), 16 * kib);
  EXPECT_EQ(nonblocking_payload_offset(69, 32, 16 * kib, 64 * kib, false), 32 * kib);
  EXPECT_EQ(nonblocking_payload_offset(101, 32, 16 * kib, 64 * kib, false), 48 * kib);
  EXPECT_EQ(nonblocking_payload_offset(133, 32, 16 * kib, 64 * kib, false), 0U);
}

TEST(NonblockingPayload, KeepsEveryPlaceInsideTheSlotAndOnWholeLines) {
  for (std::uint32_t sequence = 0; sequence < 4096; ++sequence) {
    const std::size_t span = 20000;  // not a multiple of the line
    const std::size_t offset = nonblocking_payload_offset(sequence, 4, span, 64 * kib, false);
    EXPECT_EQ(offset % 64, 0U);
    EXPECT_LE(offset + span, 64 * kib);
  }
  // A message as large as the slot has one place.
  EXPECT_EQ(nonblocking_payload_offset(12345, 8, 64 * kib, 64 * kib, true), 0U);
}

TEST(NonblockingPayload, LeavesSmallMessagesAtTheSlotsStart) {
  EXPECT_EQ(nonblocking_payload_offset(40, 32, 8 * kib, 64 * kib, false), 0U);
  EXPECT_EQ(nonblocking_payload_offset(40, 32, 2 * kib, 64 * kib, true), 0U);
  // Where every rank reads every slot (allgather, allreduce) they walk from 4 KiB.
  EXPECT_EQ(nonblocking_payload_offset(40, 32, 4 * kib, 64 * kib, true), 4 * kib);
}

}  // namespace
}  // namespace cachecomm::detail
