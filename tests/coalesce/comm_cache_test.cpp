// After a fence, every window written through comm_cache must be byte-identical to a reference
// written directly, whatever the pattern, geometry, placement, path and number of writers.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cachecomm/comm_cache.hpp"
#include "cachecomm/error.hpp"

using cachecomm::cache_geometry;
using cachecomm::cache_path;
using cachecomm::comm_cache;
using cachecomm::placement_policy;

namespace {

enum class pattern { random, streaming, repeated };
const char* name_of(pattern kind) {
  return kind == pattern::random ? "random" : kind == pattern::streaming ? "streaming" : "repeated";
}

struct write_op {
  int target;
  std::size_t offset;
  std::vector<std::byte> data;
};

// Writer `writer`'s writes in epoch `epoch`: each writer keeps to its own slice of every target's
// window (several writers per target, no cross-writer races), overlapping itself freely.
std::vector<write_op> writes_of(int writer, int ranks, int epoch, pattern kind,
                                std::size_t window) {
  std::mt19937_64 random(
      static_cast<unsigned>(writer * 7919 + epoch * 104729 + static_cast<int>(kind) * 13));
  const std::size_t slice = window / static_cast<std::size_t>(ranks);
  const std::size_t slice_begin = slice * static_cast<std::size_t>(writer);
  std::vector<write_op> writes;
  std::size_t stream_position = 0;
  for (int index = 0; index < 600; ++index) {
    write_op op;
    op.target = static_cast<int>(random() % static_cast<unsigned>(ranks));
    std::size_t length = 0;
    std::size_t offset = 0;
    switch (kind) {
      case pattern::random:
        length = 1 + random() % 150;  // partial lines and writes spanning lines
        offset = random() % (slice - length + 1);
        break;
      case pattern::streaming:
        length = 64;
        offset = stream_position % (slice - length + 1);
        stream_position += 64 - (random() % 3 == 0 ? 16 : 0);  // some overlap the previous write
        break;
      case pattern::repeated:
        length = 1 + random() % 64;
        offset = (random() % 8) * 32 % (std::min<std::size_t>(slice, 512) - 64);  // a small hot set
        break;
    }
    op.offset = slice_begin + offset;
    op.data.resize(length);
    for (auto& byte : op.data) byte = static_cast<std::byte>(random());
    writes.push_back(std::move(op));
  }
  return writes;
}

void check_pattern(const cachecomm::comm& comm, const cache_geometry& geometry, cache_path path,
                   pattern kind, std::size_t window) {
  const int ranks = comm.size();
  const int self = comm.rank();
  comm_cache cache(comm, window, geometry, path);
  std::vector<std::byte> reference(window);
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (const write_op& op : writes_of(self, ranks, epoch, kind, window)) {
      cache.write(op.target, op.offset, op.data.data(), op.data.size());
    }
    cache.fence();
    // The reference: every writer's writes to this rank, applied directly in program order.
    for (int writer = 0; writer < ranks; ++writer) {
      for (const write_op& op : writes_of(writer, ranks, epoch, kind, window)) {
        if (op.target == self)
          std::memcpy(reference.data() + op.offset, op.data.data(), op.data.size());
      }
    }
    auto local = cache.local_window();
    ASSERT_EQ(local.size(), window);
    std::size_t first_difference = window;
    for (std::size_t byte = 0; byte < window; ++byte) {
      if (local[byte] != reference[byte]) {
        first_difference = byte;
        break;
      }
    }
    EXPECT_EQ(first_difference, window)
        << name_of(kind) << " epoch " << epoch << " line " << geometry.line_bytes << " sets "
        << geometry.sets << " ways " << geometry.ways << " " << to_string(geometry.placement)
        << " path " << (path == cache_path::mpi ? "mpi" : "auto");
    cache.fence();  // nobody writes the next epoch while a rank still compares
  }
}

std::vector<cache_geometry> geometries() {
  std::vector<cache_geometry> all{{64, 1, 1}, {64, 1, 4}, {8, 4, 1}, {64, 16, 4}, {128, 5, 3}};
  // Plus a few random ones (same seed on every rank: the cache is collective).
  std::mt19937 random(2024);
  for (int extra = 0; extra < 2; ++extra) {
    all.push_back(
        cache_geometry{std::size_t{1} << (random() % 9), 1 + random() % 40, 1 + random() % 9});
  }
  return all;
}

}  // namespace

TEST(comm_cache, matches_direct_writes_for_every_pattern_geometry_and_placement) {
  cachecomm::comm comm(MPI_COMM_WORLD);
  constexpr std::size_t window = 8192;
  for (cache_path path : {cache_path::automatic, cache_path::mpi}) {
    for (pattern kind : {pattern::random, pattern::streaming, pattern::repeated}) {
      for (cache_geometry geometry : geometries()) {
        for (placement_policy placement :
             {placement_policy::first_free, placement_policy::round_robin}) {
          geometry.placement = placement;
          check_pattern(comm, geometry, path, kind, window);
        }
      }
    }
  }
}

TEST(comm_cache, chooses_shared_memory_within_the_node_and_mpi_between_nodes) {
  cachecomm::comm comm(MPI_COMM_WORLD);
  comm_cache automatic(comm, 4096);
  comm_cache forced(comm, 4096, cache_geometry{}, cache_path::mpi);
  const auto& node_ranks = comm.topology().node_ranks;
  for (int rank = 0; rank < comm.size(); ++rank) {
    const bool on_node = std::find(node_ranks.begin(), node_ranks.end(), rank) != node_ranks.end();
    EXPECT_EQ(automatic.shared_memory_path(rank), on_node) << "rank " << rank;
    EXPECT_FALSE(forced.shared_memory_path(rank)) << "rank " << rank;
  }
}

TEST(comm_cache, statistics_count_merges_messages_and_flushes) {
  cachecomm::comm comm(MPI_COMM_WORLD);
  comm_cache cache(comm, 1 << 16, cache_geometry{64, 4, 2});
  const int target = (comm.rank() + 1) % comm.size();
  std::vector<std::byte> line(64, std::byte{5});
  for (int repeat = 0; repeat < 10; ++repeat) cache.write(target, 128, line.data(), 64);
  for (std::size_t index = 0; index < 64; ++index)
    cache.write(target, index * 64 + 4096, line.data(), 64);
  cache.flush_async().wait();
  const auto& statistics = cache.statistics();
  EXPECT_EQ(statistics.writes, 74U);
  EXPECT_EQ(statistics.merges, 9U);
  EXPECT_GT(statistics.conflict_misses, 0U);
  EXPECT_EQ(statistics.flushes, 1U);
  EXPECT_EQ(statistics.payload_bytes, 65U * 64);
  std::uint64_t histogram_total = 0;
  for (auto count : statistics.message_size_histogram) histogram_total += count;
  EXPECT_EQ(histogram_total, statistics.messages);
  EXPECT_NEAR(statistics.average_message_bytes(),
              65.0 * 64 / static_cast<double>(statistics.messages), 1e-9);
  cache.fence();
  EXPECT_EQ(cache.statistics().flushes, 2U);
  cache.reset_statistics();
  EXPECT_EQ(cache.statistics().messages, 0U);
}

TEST(comm_cache, rejects_invalid_geometry_and_out_of_window_writes) {
  cachecomm::comm comm(MPI_COMM_WORLD);
  EXPECT_THROW(comm_cache(comm, 4096, cache_geometry{64, 0, 4}), cachecomm::invalid_argument);
  EXPECT_THROW(comm_cache(comm, 4096, cache_geometry{64, 4, 0}), cachecomm::invalid_argument);
  EXPECT_THROW(comm_cache(comm, 4096, cache_geometry{48, 4, 4}), cachecomm::invalid_argument);
  EXPECT_THROW(comm_cache(comm, 4096, cache_geometry{8192, 4, 4}), cachecomm::invalid_argument);
  try {
    comm_cache(comm, 4096, cache_geometry{8192, 4, 4});
  } catch (const cachecomm::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("larger than the 4096-byte window"), std::string::npos)
        << error.what();
  }
  comm_cache cache(comm, 4096);
  std::vector<std::byte> data(128);
  EXPECT_THROW(cache.write(0, 4000, data.data(), 128), cachecomm::invalid_argument);
  EXPECT_THROW(cache.write(0, 1 << 20, data.data(), 1), cachecomm::invalid_argument);
  EXPECT_THROW(cache.write(comm.size(), 0, data.data(), 1), cachecomm::invalid_argument);
  EXPECT_THROW(cache.write(-1, 0, data.data(), 1), cachecomm::invalid_argument);
  try {
    cache.write(0, 4000, data.data(), 128);
  } catch (const cachecomm::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("outside rank 0's 4096-byte window"),
              std::string::npos)
        << error.what();
  }
  cache.write(0, 4096 - 128, data.data(), 128);  // the last bytes are fine
  cache.fence();
}

TEST(comm_cache, flushed_lines_reach_the_target_without_a_fence) {
  cachecomm::comm comm(MPI_COMM_WORLD);
  for (cache_path path : {cache_path::automatic, cache_path::mpi}) {
    comm_cache cache(comm, 1 << 14, cache_geometry{64, 8, 2}, path);
    const int target = (comm.rank() + 1) % comm.size();
    const int source = (comm.rank() + comm.size() - 1) % comm.size();
    std::vector<std::byte> data(3000);  // spans many lines, more than the cache holds
    for (std::size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<std::byte>(comm.rank() * 31 + i);
    cache.write(target, 1000, data.data(), data.size());
    auto request = cache.flush_async();
    request.wait();
    EXPECT_TRUE(request.test());
    MPI_Barrier(MPI_COMM_WORLD);
    // Shared memory: already there. MPI: there once this rank applies what has arrived.
    auto window = cache.local_window();
    auto arrived = [&] {
      for (std::size_t i = 0; i < data.size(); ++i) {
        if (window[1000 + i] != static_cast<std::byte>(source * 31 + i)) return false;
      }
      return true;
    };
    if (cache.shared_memory_path(source)) {
      EXPECT_TRUE(arrived());
    } else {
      while (!arrived()) cache.progress();
    }
    EXPECT_EQ(window[999], std::byte{0});
    EXPECT_EQ(window[4000], std::byte{0});
    cache.fence();
  }
}

TEST(comm_cache, wait_for_flush_completes_point_to_point_without_a_fence) {
  cachecomm::comm comm(MPI_COMM_WORLD);
  for (cache_path path : {cache_path::automatic, cache_path::mpi}) {
    comm_cache cache(comm, 1 << 14, cache_geometry{64, 4, 2}, path);
    const int target = (comm.rank() + 1) % comm.size();
    const int source = (comm.rank() + comm.size() - 1) % comm.size();
    auto window = cache.local_window();
    for (std::uint32_t round = 1; round <= 3; ++round) {
      std::vector<std::byte> data(2000);
      for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<std::byte>(comm.rank() + round * 7 + i);
      cache.write(target, 3000, data.data(), data.size());
      if (round == 2) {
        cache.flush_async().wait();
      } else {
        cache.flush();
      }
      cache.wait_for_flush(source, round);
      for (std::size_t i = 0; i < data.size(); ++i) {
        ASSERT_EQ(window[3000 + i], static_cast<std::byte>(source + round * 7 + i))
            << "round " << round << " byte " << i << (path == cache_path::mpi ? " mpi" : " auto");
      }
      // The source must not overwrite before this rank has checked: a barrier between rounds.
      MPI_Barrier(MPI_COMM_WORLD);
    }
    EXPECT_THROW(cache.wait_for_flush(comm.size(), 1), cachecomm::invalid_argument);
    cache.fence();
  }
}
