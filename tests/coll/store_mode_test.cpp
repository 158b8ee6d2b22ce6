// gather-reduce's staging store modes (CACHECOMM_STREAMING_STORES): every mode, and ranks in
// different modes in one call, give the bits of the rank-ordered fold. The store mode moves lines,
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

// Each rank's mode: `modes[rank % modes.size()]`.
void check_modes(const std::vector<std::string>& modes) {
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  config settings = config::from_environment();
  settings.set("CACHECOMM_STREAMING_STORES", modes[static_cast<std::size_t>(rank) % modes.size()]);
  comm c(MPI_COMM_WORLD, settings);
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
