// Gather, scatter, alltoall, scan and exscan: every algorithm x type x size x root, in place and
// not, against the system MPI's answer computed in the same run; scan's rank-ordered bits.
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
using testing::count_for;
using testing::fill;
using testing::mpi_op;
using testing::mpi_type;

// Slot sizes (one slot holds all blocks, or not), the region, and several pipeline steps.
const std::vector<std::size_t> block_sizes = {0, 1, 8, 1000, 4096, 65537, (1U << 20) + 3U};
const std::vector<datatype> block_types = {datatype::byte, datatype::int16, datatype::float64,
                                           datatype::complex128};

std::vector<int> roots_for(std::size_t bytes, int size) {
  std::vector<int> roots = {0};
  if (size > 1) roots.push_back(size - 1);
  if (size > 2 && bytes <= 4096) roots.push_back(size / 2);
  return roots;
}

std::string describe(const char* what, std::string_view algorithm, datatype type, std::size_t count,
                     int root, bool in_place_call) {
  return std::string(what) + " algorithm=" + std::string(algorithm) +
         " type=" + std::string(to_string(type)) + " count=" + std::to_string(count) +
         " root=" + std::to_string(root) + (in_place_call ? " in-place" : "");
}

TEST(BlockCollectives, GatherMatchesMpi) {
  comm c(MPI_COMM_WORLD);
  const auto size = static_cast<std::size_t>(c.size());
  for (gather_algorithm algorithm : all_gather_algorithms()) {
    for (std::size_t bytes : block_sizes) {
      for (datatype type : block_types) {
        const std::size_t count = count_for(bytes, type);
        const std::size_t block = count * size_of(type);
        std::vector<unsigned char> input(block + 1), expected(block * size + 1),
            got(block * size + 1);
        fill(input.data(), count, type, reduce_op::sum, c.rank(), 17);
        for (int root : roots_for(bytes, c.size())) {
          MPI_Gather(input.data(), static_cast<int>(count), mpi_type(type), expected.data(),
                     static_cast<int>(count), mpi_type(type), root, MPI_COMM_WORLD);
          for (bool in_place_call : {false, true}) {
            const bool is_root = c.rank() == root;
            std::fill(got.begin(), got.end(), 0xEE);
            if (in_place_call && is_root)
              std::memcpy(got.data() + static_cast<std::size_t>(root) * block, input.data(), block);
            gather(c, in_place_call && is_root ? in_place : input.data(), got.data(), count, type,
                   root, algorithm);
            const bool ok = is_root ? std::memcmp(got.data(), expected.data(), block * size) == 0 &&
                                          got[block * size] == 0xEE
                                    : std::all_of(got.begin(), got.end(),
                                                  [](unsigned char v) { return v == 0xEE; });
            ASSERT_TRUE(all_ranks(ok))
                << describe("gather", to_string(algorithm), type, count, root, in_place_call);
          }
        }
      }
    }
  }
}

TEST(BlockCollectives, ScatterMatchesMpi) {
  comm c(MPI_COMM_WORLD);
  const auto size = static_cast<std::size_t>(c.size());
  for (scatter_algorithm algorithm : all_scatter_algorithms()) {
    for (std::size_t bytes : block_sizes) {
      for (datatype type : block_types) {
        const std::size_t count = count_for(bytes, type);
        const std::size_t block = count * size_of(type);
        std::vector<unsigned char> input(block * size + 1), expected(block + 1), got(block + 1);
        fill(input.data(), count * size, type, reduce_op::sum, c.rank(), 23);
        for (int root : roots_for(bytes, c.size())) {
          const bool is_root = c.rank() == root;
          MPI_Scatter(input.data(), static_cast<int>(count), mpi_type(type), expected.data(),
                      static_cast<int>(count), mpi_type(type), root, MPI_COMM_WORLD);
          for (bool in_place_call : {false, true}) {
            std::fill(got.begin(), got.end(), 0xEE);
            const std::vector<unsigned char> before = input;
            bool ok = true;
            if (in_place_call && is_root) {
              scatter(c, input.data(), in_place_receive, count, type, root, algorithm);
              ok = input == before;  // the root's own block stays where it is
            } else {
              scatter(c, input.data(), got.data(), count, type, root, algorithm);
              ok = std::memcmp(got.data(), expected.data(), block) == 0 && got[block] == 0xEE &&
                   input == before;
            }
            ASSERT_TRUE(all_ranks(ok))
                << describe("scatter", to_string(algorithm), type, count, root, in_place_call);
          }
        }
      }
    }
  }
}

TEST(BlockCollectives, AlltoallMatchesMpi) {
  comm c(MPI_COMM_WORLD);
  const auto size = static_cast<std::size_t>(c.size());
  for (alltoall_algorithm algorithm : all_alltoall_algorithms()) {
    for (std::size_t bytes : block_sizes) {
      for (datatype type : block_types) {
        const std::size_t count = count_for(bytes, type);
        const std::size_t block = count * size_of(type);
        std::vector<unsigned char> input(block * size + 1), expected(block * size + 1),
            got(block * size + 1);
        fill(input.data(), count * size, type, reduce_op::sum, c.rank(), 31);
        MPI_Alltoall(input.data(), static_cast<int>(count), mpi_type(type), expected.data(),
                     static_cast<int>(count), mpi_type(type), MPI_COMM_WORLD);
        for (bool in_place_call : {false, true}) {
          std::fill(got.begin(), got.end(), 0xEE);
          if (in_place_call) {
            std::memcpy(got.data(), input.data(), block * size);
            alltoall(c, in_place, got.data(), count, type, algorithm);
          } else {
            alltoall(c, input.data(), got.data(), count, type, algorithm);
          }
          const bool ok = std::memcmp(got.data(), expected.data(), block * size) == 0 &&
                          got[block * size] == 0xEE;
          ASSERT_TRUE(all_ranks(ok))
              << describe("alltoall", to_string(algorithm), type, count, -1, in_place_call);
        }
      }
    }
  }
}

// The automatic choice at sizes on both sides of its thresholds.
TEST(BlockCollectives, AutomaticChoiceMatchesMpi) {
  comm c(MPI_COMM_WORLD);
  const auto size = static_cast<std::size_t>(c.size());
  for (std::size_t block :
       {std::size_t{8}, std::size_t{4096}, std::size_t{64} << 10, (std::size_t{256} << 10) + 8}) {
    const std::size_t count = block / 8;
    std::vector<double> input(count * size), expected(count * size), got(count * size);
    for (std::size_t i = 0; i < input.size(); ++i)
      input[i] = static_cast<double>(c.rank()) * 1e7 + static_cast<double>(i);
    const int n = static_cast<int>(count);
    MPI_Alltoall(input.data(), n, MPI_DOUBLE, expected.data(), n, MPI_DOUBLE, MPI_COMM_WORLD);
    alltoall(c, input.data(), got.data(), count, datatype::float64);
    ASSERT_TRUE(all_ranks(got == expected))
        << "automatic alltoall (" << explain_alltoall(c, block).algorithm << ") of " << block;
    const int root = c.size() - 1;
    std::fill(got.begin(), got.end(), -1.0);
    MPI_Gather(input.data(), n, MPI_DOUBLE, expected.data(), n, MPI_DOUBLE, root, MPI_COMM_WORLD);
    gather(c, input.data(), got.data(), count, datatype::float64, root);
    ASSERT_TRUE(all_ranks(c.rank() != root || got == expected))
        << "automatic gather (" << explain_gather(c, block).algorithm << ") of " << block;
    std::fill(got.begin(), got.end(), -1.0);
    MPI_Scatter(input.data(), n, MPI_DOUBLE, expected.data(), n, MPI_DOUBLE, root, MPI_COMM_WORLD);
    scatter(c, input.data(), got.data(), count, datatype::float64, root);
    ASSERT_TRUE(all_ranks(std::equal(got.begin(), got.begin() + n, expected.begin())))
        << "automatic scatter (" << explain_scatter(c, block).algorithm << ") of " << block;
  }
}

// The automatic choice and every scan algorithm (single copy pulls the lower ranks' inputs; in
// place, from a copy of this rank's).
std::vector<scan_algorithm> scan_algorithms() {
  std::vector<scan_algorithm> all{scan_algorithm::automatic};
  for (scan_algorithm algorithm : all_scan_algorithms()) all.push_back(algorithm);
  return all;
}

TEST(BlockCollectives, ScanAndExscanMatchMpi) {
  comm c(MPI_COMM_WORLD);
  for (scan_algorithm algorithm : scan_algorithms())
    for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{64}, std::size_t{4096},
                              std::size_t{70000}, (std::size_t{1} << 20) + 24}) {
      for (datatype type : testing::reducible_types()) {
        for (reduce_op op : testing::collective_ops()) {
          if (!supports(type, op)) continue;
          if (bytes > 4096 && op != reduce_op::sum && op != reduce_op::max) continue;
          const std::size_t count = count_for(bytes, type);
          const std::size_t length = count * size_of(type);
          std::vector<unsigned char> input(length + 1), expected(length + 1), got(length + 1);
          fill(input.data(), count, type, op, c.rank(), 5);
          for (bool exclusive : {false, true}) {
            std::fill(expected.begin(), expected.end(), 0xAB);
            if (exclusive) {
              MPI_Exscan(input.data(), expected.data(), static_cast<int>(count), mpi_type(type),
                         mpi_op(op), MPI_COMM_WORLD);
            } else {
              MPI_Scan(input.data(), expected.data(), static_cast<int>(count), mpi_type(type),
                       mpi_op(op), MPI_COMM_WORLD);
            }
            for (bool in_place_call : {false, true}) {
              std::fill(got.begin(), got.end(), 0xAB);
              if (in_place_call) std::memcpy(got.data(), input.data(), length);
              const void* send = in_place_call ? in_place : input.data();
              if (exclusive)
                exscan(c, send, got.data(), count, type, op, algorithm);
              else
                scan(c, send, got.data(), count, type, op, algorithm);
              // Exscan leaves rank 0's buffer as it was (MPI: undefined).
              const bool untouched = exclusive && c.rank() == 0;
              const bool ok =
                  untouched
                      ? std::memcmp(got.data(), in_place_call ? input.data() : expected.data(),
                                    length) == 0
                      : testing::same_values(got.data(), expected.data(), count, type);
              ASSERT_TRUE(all_ranks(ok && got[length] == 0xAB))
                  << (exclusive ? "exscan" : "scan") << " (" << to_string(algorithm)
                  << ", auto: " << explain_scan(c, length, exclusive).algorithm
                  << ") type=" << to_string(type) << " op=" << to_string(op) << " count=" << count
                  << (in_place_call ? " in-place" : "");
            }
          }
        }
      }
    }
}

// Non-integer inputs: rank r's scan has the bits of the left-to-right sum over ranks 0..r.
TEST(BlockCollectives, ScanIsRankOrdered) {
  comm c(MPI_COMM_WORLD);
  if (c.topology().node_count > 1) GTEST_SKIP() << "across nodes the scan is the system MPI's";
  const auto size = static_cast<std::size_t>(c.size());
  const auto me = static_cast<std::size_t>(c.rank());
  for (scan_algorithm algorithm : scan_algorithms())
    for (std::size_t count : {std::size_t{3}, std::size_t{40000}, std::size_t{200001}}) {
      std::vector<double> input(count);
      for (std::size_t i = 0; i < count; ++i)
        input[i] =
            1.0 / static_cast<double>(3 + i + 7 * me) * 1e-3 + 1e3 * static_cast<double>(me % 2);
      std::vector<double> everyone(count * size);
      MPI_Allgather(input.data(), static_cast<int>(count), MPI_DOUBLE, everyone.data(),
                    static_cast<int>(count), MPI_DOUBLE, MPI_COMM_WORLD);
      std::vector<double> inclusive(everyone.begin(),
                                    everyone.begin() + static_cast<std::ptrdiff_t>(count));
      std::vector<double> exclusive = inclusive;
      for (std::size_t rank = 1; rank <= me; ++rank) {
        exclusive = inclusive;
        for (std::size_t i = 0; i < count; ++i)
          inclusive[i] = inclusive[i] + everyone[rank * count + i];
      }
      std::vector<double> got(count);
      scan(c, input.data(), got.data(), count, datatype::float64, reduce_op::sum, algorithm);
      ASSERT_TRUE(all_ranks(std::memcmp(got.data(), inclusive.data(), count * 8) == 0))
          << "scan (" << to_string(algorithm) << ") is not the rank-ordered sum, count " << count;
      exscan(c, input.data(), got.data(), count, datatype::float64, reduce_op::sum, algorithm);
      ASSERT_TRUE(all_ranks(me == 0 || std::memcmp(got.data(), exclusive.data(), count * 8) == 0))
          << "exscan (" << to_string(algorithm) << ") is not the rank-ordered sum, count " << count;
    }
}

TEST(BlockCollectives, BadArgumentsAreRefused) {
  comm c(MPI_COMM_WORLD);
  int value = 0;
  std::vector<int> all(static_cast<std::size_t>(c.size()));
  EXPECT_THROW(gather(c, &value, all.data(), 1, datatype::int32, c.size()), invalid_argument);
  EXPECT_THROW(scatter(c, all.data(), &value, 1, datatype::int32, -1), invalid_argument);
  EXPECT_THROW(alltoall(c, all.data(), all.data(), 1, datatype::int32), invalid_argument);
  EXPECT_THROW(scan(c, &value, &value, 1, datatype::float32, reduce_op::bitwise_and),
               unsupported_error);
  EXPECT_THROW(exscan(c, &value, nullptr, 1, datatype::int32, reduce_op::sum), invalid_argument);
  if (c.size() > 1 && c.rank() != 0) {
    EXPECT_THROW(gather(c, in_place, all.data(), 1, datatype::int32, 0), invalid_argument);
  }
}

}  // namespace
}  // namespace cachecomm
