#include <gtest/gtest.h>

#include "cachecomm/error.hpp"
#include "shm/cache_line.hpp"
#include "shm/segment.hpp"
#include "shm/segment_objects.hpp"
#include "sync/waiter.hpp"

using namespace cachecomm::detail;

TEST(segment_layout, slots_start_on_their_own_cache_lines) {
  segment_layout layout;
  EXPECT_EQ(layout.reserve(3, 1), 0U);
  std::size_t slots = layout.reserve_slots(5, 8);
  EXPECT_EQ(slots % cache_line_size, 0U);
  EXPECT_EQ(layout.size(), slots + 5 * cache_line_size);
  EXPECT_THROW(layout.reserve(8, 3), cachecomm::invalid_argument);
}

TEST(segment_layout, slot_array_strides_by_padded_lines) {
  alignas(64) static std::byte area[64 * 4] = {};
  slot_array<padded_flag> flags(area, 4);
  EXPECT_EQ(reinterpret_cast<std::byte*>(&flags[3]) - reinterpret_cast<std::byte*>(&flags[0]),
            3 * 64);
  EXPECT_THROW((slot_array<padded_flag>(area + 8, 2)), cachecomm::invalid_argument);
}

TEST(segment_name, is_random_and_prefixed) {
  auto first = random_segment_name();
  auto second = random_segment_name();
  EXPECT_NE(first, second);
  EXPECT_EQ(first.rfind(segment_name_prefix, 0), 0U);
  EXPECT_EQ(first.size(), std::string(segment_name_prefix).size() + 32);  // 128 bits in hex
}

TEST(sequence_numbers, compare_across_wraparound) {
  EXPECT_TRUE(sequence_reached(5, 5));
  EXPECT_TRUE(sequence_reached(6, 5));
  EXPECT_FALSE(sequence_reached(4, 5));
  EXPECT_TRUE(sequence_reached(2, 0xFFFFFFF0U));  // wrapped past the target
  EXPECT_FALSE(sequence_reached(0xFFFFFFF0U, 2));
}
