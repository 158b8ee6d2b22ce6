// The cache's store alone: placement, merging, eviction of the fullest way, message contents.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "cachecomm/error.hpp"
#include "coalesce/line_store.hpp"

using cachecomm::cache_geometry;
using cachecomm::cache_statistics;
using cachecomm::placement_policy;
using cachecomm::detail::line_sink;
using cachecomm::detail::line_store;

namespace {

// Applies every message to per-target byte arrays and remembers the message sizes.
class recording_sink final : public line_sink {
 public:
  recording_sink(int targets, std::size_t window)
      : windows(static_cast<std::size_t>(targets), std::vector<std::byte>(window)) {}
  void send(int target, cachecomm::detail::line_message& message) override {
    std::size_t bytes = 0;
    auto& window = windows[static_cast<std::size_t>(target)];
    cachecomm::detail::line_message::for_each_record(
        message.bytes(), window.size(), target,
        [&](std::uint64_t offset, const std::byte* data, std::size_t length) {
          std::memcpy(window.data() + offset, data, length);
          bytes += length;
        });
    EXPECT_EQ(bytes, message.payload_bytes());
    message_bytes.push_back(message.payload_bytes());
    message_runs.push_back(message.records());
    message.clear();
  }
  bool test_sent() override { return true; }
  void progress() override {}

  std::vector<std::vector<std::byte>> windows;
  std::vector<std::size_t> message_bytes;
  std::vector<std::size_t> message_runs;
};

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int value : values) out.push_back(static_cast<std::byte>(value));
  return out;
}

}  // namespace

TEST(line_store, rejects_invalid_geometry) {
  cache_statistics statistics;
  recording_sink sink(1, 1024);
  for (cache_geometry bad : {cache_geometry{48, 4, 4}, cache_geometry{0, 4, 4},
                             cache_geometry{64, 0, 4}, cache_geometry{64, 4, 0}}) {
    EXPECT_THROW(line_store(bad, {&sink}, statistics), cachecomm::invalid_argument);
  }
}

TEST(line_store, repeated_writes_merge_into_one_line) {
  cache_statistics statistics;
  recording_sink sink(1, 1024);
  line_store store(cache_geometry{64, 1, 1}, {&sink}, statistics);
  auto first = bytes_of({1, 2, 3, 4});
  auto second = bytes_of({9, 9});
  store.write(0, 8, first.data(), first.size());
  store.write(0, 10, second.data(), second.size());
  EXPECT_EQ(statistics.merges, 1U);
  EXPECT_EQ(statistics.line_inserts, 1U);
  store.flush_all();
  ASSERT_EQ(sink.message_bytes.size(), 1U);
  EXPECT_EQ(sink.message_bytes[0], 4U);  // only the valid bytes travel
  EXPECT_EQ(sink.message_runs[0], 1U);
  EXPECT_EQ(sink.windows[0][8], std::byte{1});
  EXPECT_EQ(sink.windows[0][10], std::byte{9});
  EXPECT_EQ(sink.windows[0][11], std::byte{9});
  EXPECT_EQ(sink.windows[0][12], std::byte{0});
  EXPECT_EQ(store.cached_lines(), 0U);
}

TEST(line_store, conflict_miss_sends_the_fullest_way_as_one_message) {
  cache_statistics statistics;
  recording_sink sink(1, 1 << 16);
  // 4 sets x 2 ways, first-free: lines 0..3 fill way 0 of every set, line 4 goes to way 1 of set 0,
  // line 8 finds set 0 full and sends way 0 (4 lines) as one message.
  line_store store(cache_geometry{64, 4, 2, placement_policy::first_free}, {&sink}, statistics);
  std::vector<std::byte> line(64, std::byte{7});
  for (std::uint64_t index : {0, 1, 2, 3, 4}) store.write(0, index * 64, line.data(), 64);
  EXPECT_TRUE(sink.message_bytes.empty());
  store.write(0, 8 * 64, line.data(), 64);
  EXPECT_EQ(statistics.conflict_misses, 1U);
  ASSERT_EQ(sink.message_bytes.size(), 1U);
  EXPECT_EQ(sink.message_bytes[0], 4U * 64);
  EXPECT_EQ(sink.message_runs[0], 1U) << "adjacent lines leave as one run";
  EXPECT_EQ(store.cached_lines(), 2U);
  EXPECT_EQ(statistics.messages, 1U);
  EXPECT_EQ(statistics.message_size_histogram[8], 1U);
}

TEST(line_store, random_writes_match_direct_writes) {
  for (auto placement : {placement_policy::first_free, placement_policy::round_robin}) {
    for (cache_geometry geometry : {cache_geometry{64, 1, 1}, cache_geometry{8, 3, 2},
                                    cache_geometry{32, 7, 5}, cache_geometry{256, 16, 4}}) {
      geometry.placement = placement;
      constexpr std::size_t window = 4096;
      cache_statistics statistics;
      recording_sink sink(3, window);
      line_store store(geometry, {&sink, &sink, &sink}, statistics);
      std::vector<std::vector<std::byte>> reference(3, std::vector<std::byte>(window));
      std::mt19937 random(static_cast<unsigned>(geometry.line_bytes * 31 + geometry.sets));
      for (int write = 0; write < 3000; ++write) {
        const int target = static_cast<int>(random() % 3);
        const std::size_t length = 1 + random() % 300;
        const std::size_t offset = random() % (window - length + 1);
        std::vector<std::byte> data(length);
        for (auto& byte : data) byte = static_cast<std::byte>(random());
        std::memcpy(reference[static_cast<std::size_t>(target)].data() + offset, data.data(),
                    length);
        store.write(target, offset, data.data(), length);
      }
      store.flush_all();
      for (std::size_t target = 0; target < 3; ++target) {
        EXPECT_EQ(sink.windows[target], reference[target])
            << "line " << geometry.line_bytes << " sets " << geometry.sets << " ways "
            << geometry.ways;
      }
    }
  }
}

TEST(line_message, merges_adjacent_records_and_rejects_malformed_ones) {
  cachecomm::detail::line_message message;
  std::vector<std::byte> data(300, std::byte{4});
  message.append(100, data.data(), 64);
  message.append(164, data.data(), 64);  // adjacent: same record
  message.append(1000, data.data(), 10);
  EXPECT_EQ(message.records(), 2U);
  EXPECT_EQ(message.payload_bytes(), 138U);
  std::vector<std::pair<std::uint64_t, std::size_t>> seen;
  cachecomm::detail::line_message::for_each_record(
      message.bytes(), 4096, 0, [&](std::uint64_t offset, const std::byte*, std::size_t length) {
        seen.emplace_back(offset, length);
      });
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen[0], (std::pair<std::uint64_t, std::size_t>{100, 128}));
  EXPECT_EQ(seen[1], (std::pair<std::uint64_t, std::size_t>{1000, 10}));
  auto ignore = [](std::uint64_t, const std::byte*, std::size_t) {};
  // Outside a 1000-byte window; cut off.
  EXPECT_THROW(cachecomm::detail::line_message::for_each_record(message.bytes(), 1000, 3, ignore),
               cachecomm::error);
  EXPECT_THROW(
      cachecomm::detail::line_message::for_each_record(message.bytes().first(20), 4096, 3, ignore),
      cachecomm::error);
}
