// reduce_scatter (MPI_Reduce_scatter: per-rank counts): every algorithm x type x operation x
// counts (zeros, uneven, a last block larger than all before it) x in place, on world, a duplicate
// and a split of it, against the system MPI's answer computed in the same run; the rank-ordered
// bits; counts that disagree across ranks fail on every rank with an error naming the counts,
// instead of hanging or delivering short blocks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "cachecomm/error.hpp"
#include "coll/coll_test_support.hpp"

namespace cachecomm {
namespace {

using testing::all_ranks;
using testing::fill;
using testing::mpi_op;
using testing::mpi_type;

/// Across nodes every algorithm is the system MPI's call: the automatic one stands for them all.
std::vector<reduce_scatter_algorithm> algorithms_for(const comm& c) {
  std::vector<reduce_scatter_algorithm> algorithms = {reduce_scatter_algorithm::automatic};
  if (c.topology().node_count > 1) return algorithms;
  const auto& all = all_reduce_scatter_algorithms();
  algorithms.insert(algorithms.end(), all.begin(), all.end());
  return algorithms;
}

/// The counts of one call. `uneven`: rank 1 receives nothing, the others different amounts (rank
/// 2's block is longer than the blocks before it: in place, its result overlaps its block's
/// start). Otherwise rank 0 receives nothing and rank r r * base elements. base 0: no elements.
std::vector<std::size_t> counts_for(std::size_t base, int size, bool uneven) {
  std::vector<std::size_t> counts(static_cast<std::size_t>(size));
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (uneven)
      counts[r] = r == 1 || base == 0 ? 0 : base + (r * base) * 2 / 3 + r;
    else
      counts[r] = r * base;
  }
  return counts;
}

std::size_t sum_of(const std::vector<std::size_t>& counts) {
  std::size_t total = 0;
  for (std::size_t n : counts) total += n;
  return total;
}

/// Large calls on a few types and operations: enough for the many-step paths (the largest on two,
/// so the reference calls stay short with more ranks than cores).
bool wanted(std::size_t base, datatype type, reduce_op op) {
  if (base >= 100000)
    return (type == datatype::int32 && op == reduce_op::sum) ||
           (type == datatype::float64 && op == reduce_op::max);
  if (base > 8 && op != reduce_op::sum && op != reduce_op::max && op != reduce_op::bitwise_xor)
    return false;
  if (base > 300 && type != datatype::int32 && type != datatype::float64 && type != datatype::uint8)
    return false;
  return true;
}

/// Every algorithm on `mpi` (world, a duplicate, a split) against MPI_Reduce_scatter on it.
void reduce_scatter_matches_mpi(MPI_Comm mpi, const std::vector<std::size_t>& bases,
                                const char* kind) {
  comm c(mpi);
  const auto me = static_cast<std::size_t>(c.rank());
  for (reduce_scatter_algorithm algorithm : algorithms_for(c)) {
    for (std::size_t base : bases) {
      for (bool uneven : {true, false}) {
        const std::vector<std::size_t> counts = counts_for(base, c.size(), uneven);
        const std::vector<int> mpi_counts(counts.begin(), counts.end());
        const std::size_t total = sum_of(counts);
        const std::size_t mine = counts[me];
        for (datatype type : testing::reducible_types()) {
          for (reduce_op op : testing::collective_ops()) {
            if (!supports(type, op) || !wanted(base, type, op)) continue;
            const std::size_t element = size_of(type);
            // One guard byte past the result: nothing is written beyond the block.
            std::vector<unsigned char> input(total * element + 1), expected(mine * element + 1),
                got(total * element + 1);
            fill(input.data(), total, type, op, c.rank(), 31);
            std::fill(expected.begin(), expected.end(), 0xAB);
            MPI_Reduce_scatter(input.data(), expected.data(), mpi_counts.data(), mpi_type(type),
                               mpi_op(op), mpi);
            for (bool in_place_call : {false, true}) {
              std::fill(got.begin(), got.end(), 0xAB);
              if (in_place_call) std::memcpy(got.data(), input.data(), total * element);
              reduce_scatter(c, in_place_call ? in_place : input.data(), got.data(), counts, type,
                             op, algorithm);
              const std::size_t guard = in_place_call ? total * element : mine * element;
              const bool ok = testing::same_values(got.data(), expected.data(), mine, type) &&
                              got[guard] == 0xAB;
              ASSERT_TRUE(all_ranks(ok, mpi))
                  << kind << " reduce_scatter algorithm=" << to_string(algorithm)
                  << " type=" << to_string(type) << " op=" << to_string(op) << " base=" << base
                  << (uneven ? " uneven" : " increasing") << (in_place_call ? " in-place" : "")
                  << " ranks=" << c.size();
            }
          }
        }
      }
    }
  }
}

const std::vector<std::size_t> bases = {0, 1, 5, 300, 5000, 120000};

TEST(ReduceScatter, MatchesMpiOnWorld) {
  reduce_scatter_matches_mpi(MPI_COMM_WORLD, bases, "world");
}

TEST(ReduceScatter, MatchesMpiOnDuplicate) {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  reduce_scatter_matches_mpi(dup, {1, 300, 5000}, "dup");
  MPI_Comm_free(&dup);
}

// The halves of world (even and odd ranks) in reverse order: ranks that are not world's.
TEST(ReduceScatter, MatchesMpiOnSplit) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  reduce_scatter_matches_mpi(half, {0, 1, 300, 5000}, "split");
  MPI_Comm_free(&half);
}

// Non-integer inputs: rank r's block has the bits of the left-to-right sum over ranks, with the
// same bits as reduce_scatter_block where the counts are equal.
TEST(ReduceScatter, IsRankOrdered) {
  comm c(MPI_COMM_WORLD);
  if (c.topology().node_count > 1) GTEST_SKIP() << "across nodes it is the system MPI's";
  const auto size = static_cast<std::size_t>(c.size());
  const auto me = static_cast<std::size_t>(c.rank());
  for (std::size_t base : {std::size_t{3}, std::size_t{40000}, std::size_t{150001}}) {
    for (bool uneven : {true, false}) {
      const std::vector<std::size_t> counts =
          uneven ? counts_for(base, c.size(), true) : std::vector<std::size_t>(size, base);
      const std::size_t total = sum_of(counts);
      std::vector<double> input(total);
      // Large values of both signs next to small ones: with 3 or more ranks any other order of
      // the fold gives other bits.
      for (std::size_t i = 0; i < total; ++i) {
        const std::size_t kind = (i * 7 + me) % 3;
        input[i] = kind == 0   ? 1e16
                   : kind == 1 ? -1e16
                               : 1.0 + 1e-3 * static_cast<double>(i % 1000);
      }
      std::vector<double> everyone(total * size);
      MPI_Allgather(input.data(), static_cast<int>(total), MPI_DOUBLE, everyone.data(),
                    static_cast<int>(total), MPI_DOUBLE, MPI_COMM_WORLD);
      std::size_t offset = 0;
      for (std::size_t r = 0; r < me; ++r) offset += counts[r];
      std::vector<double> fold(counts[me]);
      for (std::size_t i = 0; i < fold.size(); ++i) {
        fold[i] = everyone[offset + i];
        for (std::size_t rank = 1; rank < size; ++rank)
          fold[i] = fold[i] + everyone[rank * total + offset + i];
      }
      for (reduce_scatter_algorithm algorithm : all_reduce_scatter_algorithms()) {
        std::vector<double> got(counts[me] + 1);
        reduce_scatter(c, input.data(), got.data(), counts, datatype::float64, reduce_op::sum,
                       algorithm);
        // A rank that receives nothing has an empty fold (no data pointer for memcmp).
        bool same = fold.empty() || std::memcmp(got.data(), fold.data(), fold.size() * 8) == 0;
        if (!uneven) {
          std::vector<double> block(base + 1);
          reduce_scatter_block(c, input.data(), block.data(), base, datatype::float64,
                               reduce_op::sum, algorithm);
          same = same && std::memcmp(got.data(), block.data(), base * 8) == 0;
        }
        ASSERT_TRUE(all_ranks(same))
            << "reduce_scatter " << to_string(algorithm) << " is not the rank-ordered sum, base "
            << base << (uneven ? " uneven" : " even");
      }
    }
  }
}

// Rank 1's counts differ from the others': another total, or the same total split otherwise. Every
// rank fails with an error naming reduce_scatter's receive counts (and, where the totals differ,
// both totals), never a hang or a short block.
TEST(ReduceScatter, MismatchedCountsFailClearly) {
  {
    comm world(MPI_COMM_WORLD);
    if (world.size() < 2) GTEST_SKIP() << "needs two ranks";
    if (world.topology().node_count > 1) GTEST_SKIP() << "across nodes it is the system MPI's";
  }
  for (reduce_scatter_algorithm algorithm : all_reduce_scatter_algorithms()) {
    for (std::size_t count : {std::size_t{2}, std::size_t{30000}}) {
      for (bool same_total : {false, true}) {
        comm c(MPI_COMM_WORLD);  // a fresh engine: after a mismatch the ranks' steps may differ
        const auto ranks = static_cast<std::size_t>(c.size());
        std::vector<std::size_t> counts(ranks, count);
        const bool wrong = c.rank() == 1;
        if (wrong && same_total) {
          counts[0] += 1;
          counts[1] -= 1;
        } else if (wrong) {
          counts[0] += 5;
        }
        const std::size_t total = sum_of(counts);
        std::vector<std::int32_t> input(total, c.rank() + 1);
        std::vector<std::int32_t> got(total, -1);
        std::string message;
        try {
          reduce_scatter(c, input.data(), got.data(), counts, datatype::int32, reduce_op::sum,
                         algorithm);
        } catch (const usage_error& e) {
          message = e.what();
        }
        const std::size_t right_bytes = count * ranks * 4;
        const std::size_t wrong_bytes = (count * ranks + (same_total ? 0 : 5)) * 4;
        const bool names_counts = message.find("reduce_scatter") != std::string::npos &&
                                  message.find("recvcounts") != std::string::npos;
        // Each rank names both totals when it compared its call with rank 1's.
        const bool names_totals = same_total || (c.rank() != 0 && c.rank() != 1) ||
                                  (message.find(std::to_string(right_bytes)) != std::string::npos &&
                                   message.find(std::to_string(wrong_bytes)) != std::string::npos);
        EXPECT_TRUE(all_ranks(names_counts && names_totals))
            << "rank " << c.rank() << " algorithm " << to_string(algorithm) << " count " << count
            << (same_total ? " same total" : " other total") << ": '" << message << "'";
      }
    }
  }
}

TEST(ReduceScatter, BadArgumentsAreRefused) {
  comm c(MPI_COMM_WORLD);
  const auto ranks = static_cast<std::size_t>(c.size());
  std::vector<int> all(ranks * 2);
  int value = 0;
  std::vector<std::size_t> ones(ranks, 1);
  std::vector<std::size_t> short_counts(ranks + 1, 1);
  EXPECT_THROW(reduce_scatter(c, all.data(), &value, short_counts, datatype::int32, reduce_op::sum),
               invalid_argument);
  EXPECT_THROW(
      reduce_scatter(c, all.data(), &value, ones, datatype::float32, reduce_op::bitwise_and),
      unsupported_error);
  EXPECT_THROW(reduce_scatter(c, all.data(), &value, ones, datatype::int32, reduce_op::replace),
               unsupported_error);
  EXPECT_THROW(reduce_scatter(c, all.data(), nullptr, ones, datatype::int32, reduce_op::sum),
               invalid_argument);
  EXPECT_THROW(reduce_scatter(c, nullptr, &value, ones, datatype::int32, reduce_op::sum),
               invalid_argument);
}

}  // namespace
}  // namespace cachecomm
