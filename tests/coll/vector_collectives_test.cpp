// reduce_scatter_block, allgatherv, gatherv, scatterv and alltoallv: every algorithm x type x size
// (x root), in place and not, against the system MPI's answer computed in the same run; the
// rank-ordered bits of the reduce-scatter; per-rank counts with zeros and gaps; counts that
// disagree across ranks fail with a clear error on the ranks concerned instead of hanging or
// delivering wrong data.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "cachecomm/error.hpp"
#include "coll/coll_test_support.hpp"

namespace cachecomm {
namespace {

using testing::all_ranks;
using testing::count_for;
using testing::fill;
using testing::mpi_op;
using testing::mpi_type;

template <typename Algorithm>
std::vector<Algorithm> with_automatic(const std::vector<Algorithm>& all) {
  std::vector<Algorithm> algorithms = {Algorithm::automatic};
  algorithms.insert(algorithms.end(), all.begin(), all.end());
  return algorithms;
}

/// Across nodes every algorithm is the system MPI's call: the automatic one stands for them all.
template <typename Algorithm>
std::vector<Algorithm> algorithms_for(const comm& c, const std::vector<Algorithm>& all) {
  if (c.topology().node_count > 1) return {Algorithm::automatic};
  return with_automatic(all);
}

TEST(VectorCollectives, ReduceScatterBlockMatchesMpi) {
  comm c(MPI_COMM_WORLD);
  const auto size = static_cast<std::size_t>(c.size());
  for (reduce_scatter_algorithm algorithm : algorithms_for(c, all_reduce_scatter_algorithms())) {
    for (std::size_t bytes : {std::size_t{0}, std::size_t{8}, std::size_t{1000}, std::size_t{70000},
                              (std::size_t{1} << 20) + 48}) {
      for (datatype type : testing::reducible_types()) {
        for (reduce_op op : testing::collective_ops()) {
          if (!supports(type, op)) continue;
          if (bytes > 8 && op != reduce_op::sum && op != reduce_op::max) continue;
          if (bytes > 1000 && type != datatype::int32 && type != datatype::float64) continue;
          const std::size_t count = count_for(bytes, type);
          const std::size_t block = count * size_of(type);
          std::vector<unsigned char> input(block * size + 1), expected(block + 1),
              got(block * size + 1);
          fill(input.data(), count * size, type, op, c.rank(), 23);
          std::fill(expected.begin(), expected.end(), 0xAB);
          MPI_Reduce_scatter_block(input.data(), expected.data(), static_cast<int>(count),
                                   mpi_type(type), mpi_op(op), MPI_COMM_WORLD);
          for (bool in_place_call : {false, true}) {
            std::fill(got.begin(), got.end(), 0xAB);
            if (in_place_call) std::memcpy(got.data(), input.data(), block * size);
            reduce_scatter_block(c, in_place_call ? in_place : input.data(), got.data(), count,
                                 type, op, algorithm);
            const bool ok = testing::same_values(got.data(), expected.data(), count, type) &&
                            got[in_place_call ? block * size : block] == 0xAB;
            ASSERT_TRUE(all_ranks(ok)) << "reduce_scatter_block algorithm=" << to_string(algorithm)
                                       << " type=" << to_string(type) << " op=" << to_string(op)
                                       << " count=" << count << (in_place_call ? " in-place" : "");
          }
        }
      }
    }
  }
}

// Non-integer inputs: rank r's block has the bits of the left-to-right sum of block r over ranks.
TEST(VectorCollectives, ReduceScatterBlockIsRankOrdered) {
  comm c(MPI_COMM_WORLD);
  if (c.topology().node_count > 1) GTEST_SKIP() << "across nodes it is the system MPI's";
  const auto size = static_cast<std::size_t>(c.size());
  const auto me = static_cast<std::size_t>(c.rank());
  for (std::size_t count : {std::size_t{3}, std::size_t{40000}, std::size_t{150001}}) {
    std::vector<double> input(count * size);
    // Large values of both signs next to small ones: with 3 or more ranks any other order of
    // the fold gives other bits (with 2 it cannot: addition commutes).
    for (std::size_t i = 0; i < input.size(); ++i) {
      const std::size_t kind = (i * 7 + me) % 3;
      input[i] = kind == 0 ? 1e16 : kind == 1 ? -1e16 : 1.0 + 1e-3 * static_cast<double>(i % 1000);
    }
    std::vector<double> everyone(count * size * size);
    MPI_Allgather(input.data(), static_cast<int>(count * size), MPI_DOUBLE, everyone.data(),
                  static_cast<int>(count * size), MPI_DOUBLE, MPI_COMM_WORLD);
    std::vector<double> fold(count);
    for (std::size_t i = 0; i < count; ++i) {
      fold[i] = everyone[me * count + i];
      for (std::size_t rank = 1; rank < size; ++rank)
        fold[i] = fold[i] + everyone[rank * count * size + me * count + i];
    }
    for (reduce_scatter_algorithm algorithm : all_reduce_scatter_algorithms()) {
      std::vector<double> got(count);
      reduce_scatter_block(c, input.data(), got.data(), count, datatype::float64, reduce_op::sum,
                           algorithm);
      ASSERT_TRUE(all_ranks(std::memcmp(got.data(), fold.data(), count * 8) == 0))
          << "reduce_scatter_block " << to_string(algorithm)
          << " is not the rank-ordered sum, count " << count;
    }
  }
}

/// Per-rank counts: rank 1 contributes nothing, the others different amounts; blocks in reverse
/// rank order with a gap of 3 elements between them.
struct vector_layout {
  std::vector<std::size_t> counts;
  std::vector<std::size_t> displacements;
  std::size_t total = 0;  ///< elements of the receive buffer
};

vector_layout layout_for(std::size_t base, int size) {
  vector_layout layout;
  const auto ranks = static_cast<std::size_t>(size);
  layout.counts.resize(ranks);
  layout.displacements.resize(ranks);
  for (std::size_t r = 0; r < ranks; ++r) layout.counts[r] = r == 1 ? 0 : base + (r * base) / 3 + r;
  std::size_t at = 2;
  for (std::size_t r = ranks; r-- > 0;) {
    layout.displacements[r] = at;
    at += layout.counts[r] + 3;
  }
  layout.total = at;
  return layout;
}

std::vector<int> as_int(const std::vector<std::size_t>& values) {
  return {values.begin(), values.end()};
}

const std::vector<std::size_t> vector_bases = {1, 100, 2000, 40000, 300000};

/// The largest blocks in bytes only, and with one root: enough for the many-step paths, and the
/// 8-rank oversubscribed run stays short.
bool wanted(std::size_t base, datatype type) {
  return base < 300000 || type == datatype::byte;
}
const std::vector<datatype> vector_types = {datatype::byte, datatype::float64,
                                            datatype::complex128};

TEST(VectorCollectives, AllgathervMatchesMpi) {
  comm c(MPI_COMM_WORLD);
#ifdef MPICH_VERSION
  // MPICH 4.0.2's own MPI_Allgatherv on one rank ignores the block's displacement.
  if (c.size() == 1) GTEST_SKIP() << "MPICH's MPI_Allgatherv is wrong on one rank";
#endif
  const auto me = static_cast<std::size_t>(c.rank());
  for (allgatherv_algorithm algorithm : algorithms_for(c, all_allgatherv_algorithms())) {
    for (std::size_t base : vector_bases) {
      for (datatype type : vector_types) {
        if (!wanted(base, type)) continue;
        const vector_layout layout = layout_for(base, c.size());
        const std::size_t element = size_of(type);
        const std::size_t own = layout.counts[me];
        std::vector<unsigned char> input(own * element + 1);
        fill(input.data(), own, type, reduce_op::sum, c.rank(), 31);
        std::vector<unsigned char> expected(layout.total * element, 0xEE);
        std::vector<unsigned char> got(layout.total * element);
        const std::vector<int> counts = as_int(layout.counts);
        const std::vector<int> displacements = as_int(layout.displacements);
        MPI_Allgatherv(input.data(), static_cast<int>(own), mpi_type(type), expected.data(),
                       counts.data(), displacements.data(), mpi_type(type), MPI_COMM_WORLD);
        for (bool in_place_call : {false, true}) {
          std::fill(got.begin(), got.end(), 0xEE);
          if (in_place_call && own != 0)
            std::memcpy(got.data() + layout.displacements[me] * element, input.data(),
                        own * element);
          allgatherv(c, in_place_call ? in_place : input.data(), own, got.data(), layout.counts,
                     layout.displacements, type, algorithm);
          ASSERT_TRUE(all_ranks(got == expected))
              << "allgatherv algorithm=" << to_string(algorithm) << " type=" << to_string(type)
              << " base count=" << base << (in_place_call ? " in-place" : "");
        }
      }
    }
  }
}

TEST(VectorCollectives, GathervMatchesMpi) {
  comm c(MPI_COMM_WORLD);
  const auto me = static_cast<std::size_t>(c.rank());
  for (gatherv_algorithm algorithm : algorithms_for(c, all_gatherv_algorithms())) {
    for (std::size_t base : vector_bases) {
      for (datatype type : vector_types) {
        if (!wanted(base, type)) continue;
        const vector_layout layout = layout_for(base, c.size());
        const std::size_t element = size_of(type);
        const std::size_t own = layout.counts[me];
        std::vector<unsigned char> input(own * element + 1);
        fill(input.data(), own, type, reduce_op::sum, c.rank(), 37);
        const std::vector<int> counts = as_int(layout.counts);
        const std::vector<int> displacements = as_int(layout.displacements);
        std::vector<int> roots = {0, c.size() - 1};
        if (c.size() > 2) roots.push_back(1);  // the root that contributes nothing
        if (base >= 40000) roots.resize(1);
        for (int root : roots) {
          const bool is_root = c.rank() == root;
          std::vector<unsigned char> expected(layout.total * element, 0xEE);
          MPI_Gatherv(input.data(), static_cast<int>(own), mpi_type(type), expected.data(),
                      counts.data(), displacements.data(), mpi_type(type), root, MPI_COMM_WORLD);
          for (bool in_place_call : {false, true}) {
            std::vector<unsigned char> got(layout.total * element, 0xEE);
            const bool here = in_place_call && is_root;
            if (here && own != 0)
              std::memcpy(got.data() + layout.displacements[me] * element, input.data(),
                          own * element);
            // Non-roots pass no counts: only the root's matter.
            gatherv(c, here ? in_place : input.data(), own, is_root ? got.data() : nullptr,
                    is_root ? std::span<const std::size_t>(layout.counts)
                            : std::span<const std::size_t>(),
                    is_root ? std::span<const std::size_t>(layout.displacements)
                            : std::span<const std::size_t>(),
                    type, root, algorithm);
            const bool ok = !is_root || got == expected;
            ASSERT_TRUE(all_ranks(ok))
                << "gatherv algorithm=" << to_string(algorithm) << " type=" << to_string(type)
                << " base count=" << base << " root=" << root << (in_place_call ? " in-place" : "");
          }
        }
      }
    }
  }
}

// Single copy stages blocks of 4 KiB-32 KiB in the data region and their owners leave at once: a
// rank that runs ahead must not overwrite a half of the region the root has not read yet.
TEST(VectorCollectives, GathervBlocksStagedInTheRegionSurviveBackToBackCalls) {
  comm c(MPI_COMM_WORLD);
  const auto ranks = static_cast<std::size_t>(c.size());
  for (gatherv_algorithm algorithm : algorithms_for(c, all_gatherv_algorithms())) {
    constexpr int calls = 24;
    std::vector<std::vector<std::int32_t>> got(calls);
    for (int call = 0; call < calls; ++call) {
      const int root = call % c.size();
      // 2000-7000 int32 (8-28 KiB), different per rank and call.
      const std::size_t count =
          2000 + static_cast<std::size_t>((call * 7 + c.rank() * 3) % 6) * 1000;
      std::vector<std::size_t> counts(ranks);
      std::vector<std::size_t> displacements(ranks);
      std::size_t total = 0;
      for (std::size_t r = 0; r < ranks; ++r) {
        counts[r] =
            2000 + static_cast<std::size_t>((call * 7 + static_cast<int>(r) * 3) % 6) * 1000;
        displacements[r] = total;
        total += counts[r];
      }
      std::vector<std::int32_t> input(count);
      for (std::size_t i = 0; i < count; ++i)
        input[i] = static_cast<std::int32_t>(call * 1000000 + c.rank() * 100000) +
                   static_cast<std::int32_t>(i);
      if (c.rank() == root) got[static_cast<std::size_t>(call)].assign(total, -1);
      gatherv(
          c, input.data(), count,
          c.rank() == root ? got[static_cast<std::size_t>(call)].data() : nullptr,
          c.rank() == root ? std::span<const std::size_t>(counts) : std::span<const std::size_t>(),
          c.rank() == root ? std::span<const std::size_t>(displacements)
                           : std::span<const std::size_t>(),
          datatype::int32, root, algorithm);
      // Nothing between the calls: the next call's block may be staged while this one is read.
      if (c.rank() != root) continue;
      bool ok = true;
      for (std::size_t r = 0; r < ranks && ok; ++r) {
        for (std::size_t i = 0; i < counts[r]; ++i) {
          const auto want =
              static_cast<std::int32_t>(call * 1000000 + static_cast<int>(r) * 100000) +
              static_cast<std::int32_t>(i);
          if (got[static_cast<std::size_t>(call)][displacements[r] + i] != want) {
            ok = false;
            break;
          }
        }
      }
      EXPECT_TRUE(ok) << "algorithm " << to_string(algorithm) << " call " << call;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

TEST(VectorCollectives, ScattervMatchesMpi) {
  comm c(MPI_COMM_WORLD);
  const auto me = static_cast<std::size_t>(c.rank());
  for (scatterv_algorithm algorithm : algorithms_for(c, all_scatterv_algorithms())) {
    for (std::size_t base : vector_bases) {
      for (datatype type : vector_types) {
        if (!wanted(base, type)) continue;
        const vector_layout layout = layout_for(base, c.size());
        const std::size_t element = size_of(type);
        const std::size_t own = layout.counts[me];
        std::vector<unsigned char> source(layout.total * element);
        fill(source.data(), layout.total, type, reduce_op::sum, c.rank(), 41);
        const std::vector<int> counts = as_int(layout.counts);
        const std::vector<int> displacements = as_int(layout.displacements);
        std::vector<int> roots = {0, c.size() - 1};
        if (c.size() > 2) roots.push_back(1);  // the root that receives nothing
        if (base >= 40000) roots.resize(1);
        for (int root : roots) {
          const bool is_root = c.rank() == root;
          std::vector<unsigned char> expected(own * element + 1, 0xEE);
          MPI_Scatterv(source.data(), counts.data(), displacements.data(), mpi_type(type),
                       expected.data(), static_cast<int>(own), mpi_type(type), root,
                       MPI_COMM_WORLD);
          for (bool in_place_call : {false, true}) {
            const bool here = in_place_call && is_root;
            std::vector<unsigned char> got(own * element + 1, 0xEE);
            std::vector<unsigned char> kept = source;
            scatterv(c, is_root ? kept.data() : nullptr,
                     is_root ? std::span<const std::size_t>(layout.counts)
                             : std::span<const std::size_t>(),
                     is_root ? std::span<const std::size_t>(layout.displacements)
                             : std::span<const std::size_t>(),
                     here ? in_place_receive : got.data(), own, type, root, algorithm);
            const bool ok = here ? kept == source : got == expected;
            ASSERT_TRUE(all_ranks(ok))
                << "scatterv algorithm=" << to_string(algorithm) << " type=" << to_string(type)
                << " base count=" << base << " root=" << root << (in_place_call ? " in-place" : "");
          }
        }
      }
    }
  }
}

// The blocks travel in the root's slot right after the counts while they fit (4080 bytes of slot
// less 3 + size words of header), through the data region from one byte more: both sides of that
// edge, and the smallest blocks (one cache line with the counts at 2 ranks), match MPI's result.
TEST(VectorCollectives, ScattervSlotEdgeMatchesMpi) {
  comm c(MPI_COMM_WORLD);
  if (c.size() < 2) GTEST_SKIP() << "needs two ranks";
  const auto ranks = static_cast<std::size_t>(c.size());
  const auto me = static_cast<std::size_t>(c.rank());
  const std::size_t room = 4080 - (3 + ranks) * 8;
  for (scatterv_algorithm algorithm : algorithms_for(c, all_scatterv_algorithms())) {
    for (std::size_t others : {ranks - 1, 8 * (ranks - 1), room - 1, room, room + 1}) {
      for (int root : {0, c.size() - 1}) {
        // The other ranks' blocks add up to `others` bytes; the root's own block is 5 bytes.
        std::vector<int> counts(ranks);
        std::vector<int> displacements(ranks);
        int at = 0;
        std::size_t given = 0;
        for (std::size_t r = 0; r < ranks; ++r) {
          std::size_t n = others / (ranks - 1);
          if (static_cast<int>(r) == root) {
            n = 5;
          } else if (given + n + others % (ranks - 1) == others) {
            n += others % (ranks - 1);  // the last non-root takes the remainder
          }
          if (static_cast<int>(r) != root) given += n;
          counts[r] = static_cast<int>(n);
          displacements[r] = at;
          at += static_cast<int>(n) + 1;
        }
        std::vector<unsigned char> source(static_cast<std::size_t>(at));
        for (std::size_t i = 0; i < source.size(); ++i)
          source[i] = static_cast<unsigned char>(i * 7 + 3);
        const auto own = static_cast<std::size_t>(counts[me]);
        std::vector<unsigned char> expected(own + 1, 0xEE);
        MPI_Scatterv(source.data(), counts.data(), displacements.data(), MPI_BYTE, expected.data(),
                     counts[me], MPI_BYTE, root, MPI_COMM_WORLD);
        const std::vector<std::size_t> byte_counts(counts.begin(), counts.end());
        const std::vector<std::size_t> byte_displacements(displacements.begin(),
                                                          displacements.end());
        std::vector<unsigned char> got(own + 1, 0xEE);
        scatterv(c, source.data(), byte_counts, byte_displacements, got.data(), own, datatype::byte,
                 root, algorithm);
        ASSERT_TRUE(all_ranks(got == expected))
            << "scatterv algorithm=" << to_string(algorithm) << " other blocks " << others
            << " bytes, root " << root;
      }
    }
  }
}

// A rank that expects another count than the root's: it fails naming both sizes and keeps the
// smaller part; the other ranks receive their blocks, and the communicator stays usable.
TEST(VectorCollectives, ScattervMismatchedCountFailsClearly) {
  comm c(MPI_COMM_WORLD);
  if (c.size() < 2) GTEST_SKIP() << "needs two ranks";
  if (c.topology().node_count > 1) GTEST_SKIP() << "across nodes it is the system MPI's call";
  for (scatterv_algorithm algorithm : all_scatterv_algorithms()) {
    for (std::size_t count : {std::size_t{4}, std::size_t{90000}}) {
      const auto ranks = static_cast<std::size_t>(c.size());
      std::vector<std::size_t> counts(ranks, count);
      std::vector<std::size_t> displacements(ranks);
      for (std::size_t r = 0; r < ranks; ++r) displacements[r] = r * count;
      std::vector<std::int32_t> source(ranks * count);
      for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<std::int32_t>(i);
      const bool wrong = c.rank() == 1;
      const std::size_t receiving = wrong ? count + 3 : count;
      std::vector<std::int32_t> got(receiving, -1);
      std::string message;
      try {
        scatterv(c, source.data(), counts, displacements, got.data(), receiving, datatype::int32, 0,
                 algorithm);
      } catch (const usage_error& e) {
        message = e.what();
      }
      const bool clear = message.find("scatterv") != std::string::npos &&
                         message.find(std::to_string(receiving * 4)) != std::string::npos &&
                         message.find(std::to_string(count * 4)) != std::string::npos;
      const auto me = static_cast<std::size_t>(c.rank());
      const bool received = got[count - 1] == static_cast<std::int32_t>(me * count + count - 1);
      EXPECT_TRUE(all_ranks(wrong ? clear && got[count] == -1 : message.empty() && received))
          << "rank " << c.rank() << " algorithm " << to_string(algorithm) << ": '" << message
          << "'";
      int sum = 0;
      const int one = 1;
      allreduce(c, &one, &sum, 1, datatype::int32, reduce_op::sum);
      EXPECT_EQ(sum, c.size());
    }
  }
}

// A rank that sends another count than the root's counts say: the root (and with central that rank
// too) fails with a message naming both sizes, the other blocks arrive, and the communicator stays
// usable.
TEST(VectorCollectives, GathervMismatchedCountFailsClearly) {
  comm c(MPI_COMM_WORLD);
  if (c.size() < 2) GTEST_SKIP() << "needs two ranks";
  if (c.topology().node_count > 1) GTEST_SKIP() << "across nodes it is the system MPI's call";
  for (gatherv_algorithm algorithm : all_gatherv_algorithms()) {
    // In a slot, staged in the data region (single copy), pulled (single copy), larger.
    for (std::size_t count :
         {std::size_t{4}, std::size_t{2000}, std::size_t{9000}, std::size_t{20000}}) {
      const auto ranks = static_cast<std::size_t>(c.size());
      std::vector<std::size_t> counts(ranks, count);
      std::vector<std::size_t> displacements(ranks);
      for (std::size_t r = 0; r < ranks; ++r) displacements[r] = r * (count + 8);
      const bool wrong = c.rank() == 1;
      const std::size_t sending = wrong ? count + 5 : count;
      std::vector<std::int32_t> input(sending, c.rank() + 1);
      std::vector<std::int32_t> got(ranks * (count + 8), -1);
      std::string message;
      try {
        gatherv(c, input.data(), sending, got.data(), counts, displacements, datatype::int32, 0,
                algorithm);
      } catch (const usage_error& e) {
        message = e.what();
      }
      // Single copy: a rank whose block fits in its slot leaves at once; the root reports.
      const bool involved =
          c.rank() == 0 ||
          (wrong && (algorithm == gatherv_algorithm::central || !single_copy_available(c)));
      const bool clear = message.find("gatherv") != std::string::npos &&
                         message.find(std::to_string(sending * 4)) != std::string::npos &&
                         message.find(std::to_string(count * 4)) != std::string::npos;
      EXPECT_TRUE(all_ranks(involved ? clear : message.empty()))
          << "rank " << c.rank() << " algorithm " << to_string(algorithm) << ": '" << message
          << "'";
      if (c.rank() == 0 && ranks > 2) {
        EXPECT_EQ(got[2 * (count + 8)], 3) << "the other ranks' blocks still arrive";
      }
      // The communicator is still usable.
      int sum = 0;
      const int one = 1;
      allreduce(c, &one, &sum, 1, datatype::int32, reduce_op::sum);
      EXPECT_EQ(sum, c.size());
    }
  }
}

// The automatic gatherv of a pair chooses inside the call from the non-root's block: counts that
// disagree, on either side of the size where it starts to choose, must fail clearly and never leave
// the two ranks on different paths. A non-root whose block is that large reads the root's count
// and reports too; a smaller one has left (as in single copy), and the root reports.
TEST(VectorCollectives, GathervAutomaticMismatchAcrossThePlannedSizeFailsClearly) {
  comm c(MPI_COMM_WORLD);
  if (c.size() < 2) GTEST_SKIP() << "needs two ranks";
  if (c.topology().node_count > 1) GTEST_SKIP() << "across nodes it is the system MPI's call";
  const bool pair = c.size() == 2 && explain_gatherv(c, 0).algorithm == "single-copy";
  constexpr std::size_t planned = 16U << 10;
  // (sent by rank 1, expected by the root) in int32: both below, each side of it, both above.
  const std::pair<std::size_t, std::size_t> cases[] = {
      {1000, 1900}, {20000, 1000}, {1000, 20000}, {20000, 30000}, {30000, 6000}};
  for (const auto& [sent, expected] : cases) {
    const auto ranks = static_cast<std::size_t>(c.size());
    std::vector<std::size_t> counts(ranks, expected);
    std::vector<std::size_t> displacements(ranks);
    for (std::size_t r = 0; r < ranks; ++r) displacements[r] = r * (std::max(sent, expected) + 8);
    const bool wrong = c.rank() == 1;
    const std::size_t sending = wrong ? sent : expected;
    std::vector<std::int32_t> input(sending, c.rank() + 1);
    std::vector<std::int32_t> got(ranks * (std::max(sent, expected) + 8), -1);
    std::string message;
    try {
      gatherv(c, input.data(), sending, got.data(), counts, displacements, datatype::int32, 0);
    } catch (const usage_error& e) {
      message = e.what();
    }
    const bool involved = c.rank() == 0 || (wrong && (!pair || sent * 4 >= planned));
    const bool clear = message.find("gatherv") != std::string::npos &&
                       message.find(std::to_string(sent * 4)) != std::string::npos &&
                       message.find(std::to_string(expected * 4)) != std::string::npos;
    EXPECT_TRUE(all_ranks(involved ? clear : message.empty()))
        << "rank " << c.rank() << " sent " << sent << " expected " << expected << ": '" << message
        << "'";
    if (c.rank() == 0 && std::min(sent, expected) * 4 > 4096) {  // neither fits in a slot
      const std::size_t taken = std::min(sent, expected);
      EXPECT_EQ(got[displacements[1] + taken - 1], 2) << "the smaller part arrives";
    }
    int sum = 0;
    const int one = 1;
    allreduce(c, &one, &sum, 1, datatype::int32, reduce_op::sum);
    EXPECT_EQ(sum, c.size()) << "the communicator is still usable";
  }
}

// A rank whose send count disagrees with counts[rank]: every rank fails (the others' comparison of
// the counts' fingerprint), the rank itself with a message naming both sizes.
TEST(VectorCollectives, AllgathervMismatchedCountFailsClearly) {
  {
    comm world(MPI_COMM_WORLD);
    if (world.size() < 2) GTEST_SKIP() << "needs two ranks";
    if (world.topology().node_count > 1) GTEST_SKIP() << "across nodes it is the system MPI's";
  }
  for (allgatherv_algorithm algorithm : all_allgatherv_algorithms()) {
    for (std::size_t count : {std::size_t{4}, std::size_t{9000}}) {
      comm c(MPI_COMM_WORLD);  // a fresh engine: after a mismatch the ranks' steps may differ
      const auto ranks = static_cast<std::size_t>(c.size());
      std::vector<std::size_t> counts(ranks, count);
      std::vector<std::size_t> displacements(ranks);
      for (std::size_t r = 0; r < ranks; ++r) displacements[r] = r * (count + 8);
      const bool wrong = c.rank() == 1;
      const std::size_t sending = wrong ? count * 300 : count;
      std::vector<std::int32_t> input(sending, c.rank() + 1);
      std::vector<std::int32_t> got(ranks * (count + 8), -1);
      std::string message;
      try {
        allgatherv(c, input.data(), sending, got.data(), counts, displacements, datatype::int32,
                   algorithm);
      } catch (const usage_error& e) {
        message = e.what();
      }
      const bool clear =
          message.find("allgatherv") != std::string::npos &&
          (!wrong || (message.find(std::to_string(sending * 4)) != std::string::npos &&
                      message.find(std::to_string(count * 4)) != std::string::npos));
      EXPECT_TRUE(all_ranks(clear)) << "rank " << c.rank() << " algorithm " << to_string(algorithm)
                                    << ": '" << message << "'";
    }
  }
}

/// Alltoallv's counts: what rank `from` sends rank `to` (zero for some pairs, different for the
/// others); `symmetric` (in place): the same both ways.
std::size_t exchange_count(std::size_t base, std::size_t from, std::size_t to, bool symmetric) {
  if (symmetric && from > to) std::swap(from, to);
  if ((from + 2 * to) % 5 == 1) return 0;
  return base + (from * 7 + to * 3) * base / 11 + from + to;
}

/// One rank's side of an alltoallv: send blocks in reverse rank order with gaps of 3 elements,
/// receive blocks in rank order with gaps of 2.
struct exchange_layout {
  std::vector<std::size_t> send_counts, send_displacements, receive_counts, receive_displacements;
  std::size_t send_total = 0;
  std::size_t receive_total = 0;
};

exchange_layout exchange_for(std::size_t base, int size, int rank, bool symmetric) {
  const auto ranks = static_cast<std::size_t>(size);
  const auto me = static_cast<std::size_t>(rank);
  exchange_layout layout;
  layout.send_counts.resize(ranks);
  layout.send_displacements.resize(ranks);
  layout.receive_counts.resize(ranks);
  layout.receive_displacements.resize(ranks);
  std::size_t at = 2;
  for (std::size_t r = ranks; r-- > 0;) {
    layout.send_counts[r] = exchange_count(base, me, r, symmetric);
    layout.send_displacements[r] = at;
    at += layout.send_counts[r] + 3;
  }
  layout.send_total = at;
  at = 1;
  for (std::size_t r = 0; r < ranks; ++r) {
    layout.receive_counts[r] = exchange_count(base, r, me, symmetric);
    layout.receive_displacements[r] = at;
    at += layout.receive_counts[r] + 2;
  }
  layout.receive_total = at;
  return layout;
}

/// Every algorithm against MPI_Alltoallv on `comm` (world, or a split of it), in place and not.
void alltoallv_matches_mpi(MPI_Comm mpi, const std::vector<std::size_t>& bases) {
  comm c(mpi);
  for (alltoallv_algorithm algorithm : algorithms_for(c, all_alltoallv_algorithms())) {
    for (std::size_t base : bases) {
      for (datatype type : vector_types) {
        if (!wanted(base, type)) continue;
        const std::size_t element = size_of(type);
        for (bool in_place_call : {false, true}) {
          const exchange_layout layout = exchange_for(base, c.size(), c.rank(), in_place_call);
          // Block d of this rank carries values seeded by (rank, d): each receiver sees where its
          // blocks came from.
          std::vector<unsigned char> input(layout.send_total * element, 0x5A);
          const std::vector<std::size_t>& from_counts =
              in_place_call ? layout.receive_counts : layout.send_counts;
          const std::vector<std::size_t>& from_displacements =
              in_place_call ? layout.receive_displacements : layout.send_displacements;
          std::vector<unsigned char> expected(layout.receive_total * element, 0xEE);
          unsigned char* source = in_place_call ? expected.data() : input.data();
          for (std::size_t d = 0; d < from_counts.size(); ++d) {
            fill(source + from_displacements[d] * element, from_counts[d], type, reduce_op::sum,
                 c.rank() * 64 + static_cast<int>(d), 43);
          }
          std::vector<unsigned char> got = expected;
          const std::vector<int> send_counts = as_int(layout.send_counts);
          const std::vector<int> send_displacements = as_int(layout.send_displacements);
          const std::vector<int> receive_counts = as_int(layout.receive_counts);
          const std::vector<int> receive_displacements = as_int(layout.receive_displacements);
          MPI_Alltoallv(in_place_call ? MPI_IN_PLACE : input.data(), send_counts.data(),
                        send_displacements.data(), mpi_type(type), expected.data(),
                        receive_counts.data(), receive_displacements.data(), mpi_type(type), mpi);
          alltoallv(c, in_place_call ? in_place : input.data(), layout.send_counts,
                    layout.send_displacements, got.data(), layout.receive_counts,
                    layout.receive_displacements, type, algorithm);
          ASSERT_TRUE(all_ranks(got == expected))
              << "alltoallv algorithm=" << to_string(algorithm) << " type=" << to_string(type)
              << " base count=" << base << " ranks=" << c.size()
              << (in_place_call ? " in-place" : "");
        }
      }
    }
  }
}

TEST(VectorCollectives, AlltoallvMatchesMpi) {
  alltoallv_matches_mpi(MPI_COMM_WORLD, {0, 1, 100, 2000, 40000, 300000});
}

// On the halves of world (even and odd ranks): a communicator whose ranks are not world's.
TEST(VectorCollectives, AlltoallvOnSplitCommunicatorMatchesMpi) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  alltoallv_matches_mpi(half, {1, 2000, 40000});
  MPI_Comm_free(&half);
}

// A rank that expects from rank 0 another count than rank 0 sends it: it fails naming both sizes
// and keeps the smaller part; the other ranks receive their blocks, and the communicator stays
// usable.
TEST(VectorCollectives, AlltoallvMismatchedCountFailsClearly) {
  comm c(MPI_COMM_WORLD);
  if (c.size() < 2) GTEST_SKIP() << "needs two ranks";
  if (c.topology().node_count > 1) GTEST_SKIP() << "across nodes it is the system MPI's call";
  const auto ranks = static_cast<std::size_t>(c.size());
  const auto me = static_cast<std::size_t>(c.rank());
  for (alltoallv_algorithm algorithm : all_alltoallv_algorithms()) {
    for (std::size_t count : {std::size_t{4}, std::size_t{3000}, std::size_t{90000}}) {
      for (int extra : {3, -2}) {
        const bool wrong = me == 1;
        std::vector<std::size_t> counts(ranks, count);
        std::vector<std::size_t> receive_counts = counts;
        if (wrong) receive_counts[0] = count + static_cast<std::size_t>(extra);
        std::vector<std::size_t> displacements(ranks);
        for (std::size_t r = 0; r < ranks; ++r) displacements[r] = r * (count + 8);
        std::vector<std::int32_t> input(ranks * (count + 8));
        for (std::size_t i = 0; i < input.size(); ++i)
          input[i] = static_cast<std::int32_t>(me * 1000000 + i);
        std::vector<std::int32_t> got(ranks * (count + 8), -1);
        std::string message;
        try {
          alltoallv(c, input.data(), counts, displacements, got.data(), receive_counts,
                    displacements, datatype::int32, algorithm);
        } catch (const usage_error& e) {
          message = e.what();
        }
        const std::size_t expected_bytes = receive_counts[0] * 4;
        const bool clear = message.find("alltoallv") != std::string::npos &&
                           message.find(std::to_string(count * 4)) != std::string::npos &&
                           message.find(std::to_string(expected_bytes)) != std::string::npos;
        // The last element of the block from rank 0 that both sides agree on, and what lies past.
        const std::size_t common = std::min(count, receive_counts[0]);
        const bool received =
            got[common - 1] == static_cast<std::int32_t>(me * (count + 8) + common - 1) &&
            got[common] == -1;
        bool others = true;
        for (std::size_t r = 1; r < ranks; ++r) {
          const std::size_t last = r * (count + 8) + count - 1;
          others = others && got[last] == static_cast<std::int32_t>(r * 1000000 + me * (count + 8) +
                                                                    count - 1);
        }
        EXPECT_TRUE(
            all_ranks(wrong ? clear && received && others : message.empty() && received && others))
            << "rank " << c.rank() << " algorithm " << to_string(algorithm) << " count " << count
            << " extra " << extra << ": '" << message << "'";
        int sum = 0;
        const int one = 1;
        allreduce(c, &one, &sum, 1, datatype::int32, reduce_op::sum);
        EXPECT_EQ(sum, c.size());
      }
    }
  }
}

TEST(VectorCollectives, BadArgumentsAreRefused) {
  comm c(MPI_COMM_WORLD);
  const auto ranks = static_cast<std::size_t>(c.size());
  int value = 0;
  std::vector<int> all(ranks * 2);
  std::vector<std::size_t> ones(ranks, 1);
  std::vector<std::size_t> short_counts(ranks + 1, 1);
  EXPECT_THROW(allgatherv(c, &value, 1, all.data(), short_counts, ones, datatype::int32),
               invalid_argument);
  EXPECT_THROW(gatherv(c, &value, 1, all.data(), ones, ones, datatype::int32, c.size()),
               invalid_argument);
  EXPECT_THROW(
      reduce_scatter_block(c, all.data(), &value, 1, datatype::float32, reduce_op::bitwise_and),
      unsupported_error);
  EXPECT_THROW(reduce_scatter_block(c, all.data(), nullptr, 1, datatype::int32, reduce_op::sum),
               invalid_argument);
  if (c.size() > 1 && c.rank() != 0) {
    EXPECT_THROW(gatherv(c, in_place, 1, nullptr, {}, {}, datatype::int32, 0), invalid_argument);
  }
  EXPECT_THROW(
      alltoallv(c, all.data(), short_counts, ones, all.data(), ones, ones, datatype::int32),
      invalid_argument);
  EXPECT_THROW(alltoallv(c, all.data(), ones, ones, nullptr, ones, ones, datatype::int32),
               invalid_argument);
}

}  // namespace
}  // namespace cachecomm
