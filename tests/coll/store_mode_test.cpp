// gather-reduce's staging and the region ring's store modes (CACHECOMM_STREAMING_STORES): every
// mode, and ranks in different modes in one call, give the bits of the rank-ordered fold and move
// every byte. The store mode moves lines,
// never values, so the ranks never agree on it: a rank that streams while another stores ordinarily
// must still read and produce the same results.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"
#include "cachecomm/config.hpp"
#include "cachecomm/gather_scatter.hpp"
#include "cachecomm/vector_collectives.hpp"
#include "coll/coll_engine.hpp"

namespace cachecomm {
namespace {

// Values whose sums round: a fold in another order gives other bits.
double value_of(int rank, std::size_t index, int call) {
  return (static_cast<double>(index % 977) + 0.1 * rank) * (rank % 2 == 0 ? 1e-7 : 3.3e9) +
         static_cast<double>(call) / 7.0;
}

std::vector<double> input_of(int rank, std::size_t count, int call) {
  std::vector<double> input(count);
  for (std::size_t i = 0; i < count; ++i) input[i] = value_of(rank, i, call);
  return input;
}

std::vector<double> rank_ordered_sum(int ranks, std::size_t count, int call) {
  std::vector<double> sum = input_of(0, count, call);
  for (int rank = 1; rank < ranks; ++rank) {
    for (std::size_t i = 0; i < count; ++i) sum[i] = sum[i] + value_of(rank, i, call);
  }
  return sum;
}

bool everywhere(bool ok) {
  int all = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all == 1;
}

// A comm over MPI_COMM_WORLD whose store mode on this rank is `modes[rank % modes.size()]`.
comm comm_in_mode(const std::vector<std::string>& modes, int rank) {
  config settings = config::from_environment();
  settings.set("CACHECOMM_STREAMING_STORES", modes[static_cast<std::size_t>(rank) % modes.size()]);
  return comm(MPI_COMM_WORLD, settings);
}

// Each rank's mode: `modes[rank % modes.size()]`.
void check_modes(const std::vector<std::string>& modes) {
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  comm c = comm_in_mode(modes, rank);
  // Below and above the streaming threshold (16 KiB) and the deep ring's (64 KiB), one chunk and
  // many, an odd tail; enough calls per size for the adaptive choosers to probe the other mode
  // (their first probe is after 16 calls).
  const std::vector<std::size_t> counts = {1000, 2048, 5001, 40000, 131072 + 3};
  const int calls = 24;
  std::vector<double> output;
  for (const std::size_t count : counts) {
    for (int call = 0; call < calls; ++call) {
      const std::vector<double> input = input_of(rank, count, call);
      const std::vector<double> expected = rank_ordered_sum(ranks, count, call);
      output.assign(count, -1.0);
      allreduce(c, input.data(), output.data(), count, datatype::float64, reduce_op::sum,
                reduce_algorithm::gather_reduce);
      ASSERT_TRUE(everywhere(std::memcmp(output.data(), expected.data(), count * 8) == 0))
          << "allreduce, " << count << " doubles, call " << call << ", mode " << modes[0];
      const int root = ranks - 1;
      output.assign(count, -1.0);
      reduce(c, input.data(), output.data(), count, datatype::float64, reduce_op::sum, root,
             reduce_algorithm::gather_reduce);
      ASSERT_TRUE(
          everywhere(rank != root || std::memcmp(output.data(), expected.data(), count * 8) == 0))
          << "reduce to " << root << ", " << count << " doubles, call " << call;
      // In place: the input is the output.
      output = input;
      allreduce(c, in_place, output.data(), count, datatype::float64, reduce_op::sum,
                reduce_algorithm::gather_reduce);
      ASSERT_TRUE(everywhere(std::memcmp(output.data(), expected.data(), count * 8) == 0))
          << "in-place allreduce, " << count << " doubles, call " << call;
    }
  }
  // Adaptive ranks that staged measured their calls and probed the other mode.
  const auto& engine = detail::coll_engine::of(c.impl());
  if (engine.tuning().adaptive_stores && engine.node_size() > 1) {
    const auto& chooser = engine.store_modes();
    EXPECT_FALSE(chooser.report().empty());
  }
}

// Byte `index` of the block rank `from` sends rank `to` in call `call`.
std::byte byte_of(int from, int to, std::size_t index, int call) {
  return static_cast<std::byte>((index * 31 + static_cast<std::size_t>(from) * 7 +
                                 static_cast<std::size_t>(to) * 3 +
                                 static_cast<std::size_t>(call)) %
                                251);
}

// The central paths that rotate through the region ring, each rank in `modes[rank % size]`: the
// adaptive ranks choose per call (ring_stores) and probe the other mode within these calls.
void check_ring_modes(const std::vector<std::string>& modes) {
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  comm c = comm_in_mode(modes, rank);
  const auto size = static_cast<std::size_t>(ranks);
  // Below and above the streaming threshold (16 KiB), two chooser classes, an odd tail.
  for (const std::size_t block : {std::size_t{4000}, std::size_t{20000}, std::size_t{70001}}) {
    for (int call = 0; call < 24; ++call) {
      std::vector<std::byte> send(size * block);
      std::vector<std::byte> received(size * block);
      for (std::size_t to = 0; to < size; ++to) {
        for (std::size_t i = 0; i < block; ++i)
          send[to * block + i] = byte_of(rank, static_cast<int>(to), i, call);
      }
      // Allgather: every rank's block for rank 0.
      allgather(c, send.data(), received.data(), block, datatype::byte,
                allgather_algorithm::central);
      bool ok = true;
      for (std::size_t from = 0; from < size && ok; ++from) {
        for (std::size_t i = 0; i < block; ++i)
          ok = ok && received[from * block + i] == byte_of(static_cast<int>(from), 0, i, call);
      }
      ASSERT_TRUE(everywhere(ok)) << "allgather, " << block << " B blocks, call " << call;
      alltoall(c, send.data(), received.data(), block, datatype::byte, alltoall_algorithm::central);
      for (std::size_t from = 0; from < size && ok; ++from) {
        for (std::size_t i = 0; i < block; ++i)
          ok = ok && received[from * block + i] == byte_of(static_cast<int>(from), rank, i, call);
      }
      ASSERT_TRUE(everywhere(ok)) << "alltoall, " << block << " B blocks, call " << call;
      // Reduce-scatter of doubles: rank r gets block r of every input, summed in rank order.
      const std::size_t count = block / 8;
      std::vector<double> values(size * count);
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = value_of(rank, i, call);
      std::vector<double> result(count, -1.0);
      reduce_scatter_block(c, values.data(), result.data(), count, datatype::float64,
                           reduce_op::sum, reduce_scatter_algorithm::central);
      for (std::size_t i = 0; i < count && ok; ++i) {
        double sum = value_of(0, static_cast<std::size_t>(rank) * count + i, call);
        for (int from = 1; from < ranks; ++from)
          sum = sum + value_of(from, static_cast<std::size_t>(rank) * count + i, call);
        ok = std::memcmp(&sum, &result[i], sizeof sum) == 0;
      }
      ASSERT_TRUE(everywhere(ok)) << "reduce_scatter_block, " << count << " doubles, call " << call;
    }
  }
  // Adaptive ranks timed their calls from 16 KiB on and probed the other mode.
  const auto& engine = detail::coll_engine::of(c.impl());
  if (engine.tuning().adaptive_stores && engine.node_size() > 1) {
    EXPECT_FALSE(engine.ring_store_modes().report().empty());
  }
}

TEST(StoreModes, TheRegionRingMovesEveryByteInEveryMode) {
  check_ring_modes({"1"});
  check_ring_modes({"0"});
  check_ring_modes({"adaptive"});
}
TEST(StoreModes, TheRegionRingMovesEveryByteWithRanksInDifferentModes) {
  check_ring_modes({"1", "0", "adaptive"});
}

TEST(StoreModes, StreamingGivesTheRankOrderedBits) {
  check_modes({"1"});
}
TEST(StoreModes, OrdinaryGivesTheRankOrderedBits) {
  check_modes({"0"});
}
TEST(StoreModes, AdaptiveGivesTheRankOrderedBits) {
  check_modes({"adaptive"});
}
TEST(StoreModes, RanksInDifferentModesGiveTheRankOrderedBits) {
  check_modes({"1", "0", "adaptive"});
}

}  // namespace
}  // namespace cachecomm
