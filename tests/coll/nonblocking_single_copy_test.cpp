// Single copy on the nonblocking channel (nonblocking_channel.hpp, top): a block's owner must not
// complete before its reader has the block (the owner then reuses its buffer), and must not wait
// for a reader that has started but is blocked elsewhere (the owner pushes). Two ranks on their
// own cores with cross-memory attach, where the channel takes single copy; skipped elsewhere.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cachecomm/cachecomm.hpp"

namespace cachecomm {
namespace {

constexpr std::size_t block_bytes = std::size_t{192} << 10;
constexpr std::size_t words = block_bytes / sizeof(std::uint64_t);

/// The word `index` of the block rank `owner` sends to rank `reader` in round `round`.
std::uint64_t pattern(int owner, int reader, std::size_t index, int round) {
  return (static_cast<std::uint64_t>(round) << 56U) ^ (static_cast<std::uint64_t>(owner) << 48U) ^
         (static_cast<std::uint64_t>(reader) << 40U) ^ (index * 2654435761U);
}

std::vector<std::uint64_t> block_of(int owner, int reader, int round) {
  std::vector<std::uint64_t> block(words);
  for (std::size_t i = 0; i < words; ++i) block[i] = pattern(owner, reader, i, round);
  return block;
}

/// Skips unless calls of `block_bytes` take single copy on `c`.
bool takes_single_copy(comm& c, nonblocking_collective collective, std::string& why) {
  const nonblocking_choice choice = explain_nonblocking(c, collective, block_bytes);
  why = choice.reason;
  return c.size() == 2 && choice.reason.find("single copy") != std::string::npos;
}

void sleep_a_while() {
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

TEST(NonblockingSingleCopy, ReaderFindsTheOwnersDataAfterTheOwnerCompletedAndReusedItsBuffer) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  std::string why;
  if (!takes_single_copy(c, nonblocking_collective::broadcast, why)) GTEST_SKIP() << why;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::uint64_t> buffer =
        c.rank() == 0 ? block_of(0, 1, round) : std::vector<std::uint64_t>(words, 0);
    if (c.rank() == 1) sleep_a_while();  // the root waits first
    collective_request r = ibcast(c, buffer.data(), words, datatype::uint64, 0);
    r.wait();
    if (c.rank() == 0) {
      std::fill(buffer.begin(), buffer.end(), ~std::uint64_t{0});  // its buffer is its own again
    } else {
      EXPECT_EQ(buffer, block_of(0, 1, round)) << "round " << round;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

TEST(NonblockingSingleCopy, GatherRootLateStillGetsTheBlocksTheOthersReused) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  std::string why;
  if (!takes_single_copy(c, nonblocking_collective::gather, why)) GTEST_SKIP() << why;
  for (int root = 0; root < 2; ++root) {
    std::vector<std::uint64_t> send = block_of(c.rank(), root, root);
    std::vector<std::uint64_t> gathered(c.rank() == root ? 2 * words : 0);
    if (c.rank() == root) sleep_a_while();
    collective_request r = igather(c, send.data(), gathered.data(), words, datatype::uint64, root);
    r.wait();
    std::fill(send.begin(), send.end(), 0);
    if (c.rank() == root) {
      for (int owner = 0; owner < 2; ++owner) {
        const std::vector<std::uint64_t> want = block_of(owner, root, root);
        EXPECT_TRUE(std::equal(want.begin(), want.end(),
                               gathered.begin() + static_cast<std::ptrdiff_t>(owner) *
                                                      static_cast<std::ptrdiff_t>(words)))
            << "block of rank " << owner << " at root " << root;
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

TEST(NonblockingSingleCopy, OwnerCompletesWhileItsReaderIsBlockedInAReceive) {
  // Rank 1 starts each call, then blocks in MPI_Recv (no cachecomm progress) until rank 0 has
  // completed its own request: rank 0 must move what rank 1 would have pulled.
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  std::string why;
  if (!takes_single_copy(c, nonblocking_collective::alltoall, why)) GTEST_SKIP() << why;
  const int other = 1 - c.rank();
  for (const nonblocking_collective collective :
       {nonblocking_collective::broadcast, nonblocking_collective::scatter,
        nonblocking_collective::gather, nonblocking_collective::allgather,
        nonblocking_collective::alltoall}) {
    // Rank 0 owns every block rank 1 reads (root 0 where there is one).
    std::vector<std::uint64_t> send(2 * words), receive(2 * words, 0);
    for (int reader = 0; reader < 2; ++reader) {
      const std::vector<std::uint64_t> block = block_of(c.rank(), reader, 7);
      std::copy(block.begin(), block.end(), send.begin() + reader * static_cast<long>(words));
    }
    collective_request r;
    switch (collective) {
      case nonblocking_collective::broadcast:
        if (c.rank() == 0) receive = send;
        r = ibcast(c, receive.data(), words, datatype::uint64, 0);
        break;
      case nonblocking_collective::scatter:
        r = iscatter(c, send.data(), receive.data(), words, datatype::uint64, 0);
        break;
      case nonblocking_collective::gather:
        // Rank 1 is the root here: rank 0 owns the block rank 1 gathers.
        r = igather(c, send.data() + static_cast<std::ptrdiff_t>(words) * 1, receive.data(), words,
                    datatype::uint64, 1);
        break;
      case nonblocking_collective::allgather:
        r = iallgather(c, send.data() + static_cast<std::ptrdiff_t>(words) * other, receive.data(),
                       words, datatype::uint64);
        break;
      default: r = ialltoall(c, send.data(), receive.data(), words, datatype::uint64); break;
    }
    int token = 0;
    if (c.rank() == 1) {
      MPI_Recv(&token, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      r.wait();
    } else {
      r.wait();
      token = 1;
      MPI_Send(&token, 1, MPI_INT, 1, 11, MPI_COMM_WORLD);
    }
    if (c.rank() == 1) {
      EXPECT_EQ(token, 1);
      // The block from rank 0 lies at rank 0's place where blocks are gathered, at 0 otherwise.
      const std::vector<std::uint64_t> want =
          collective == nonblocking_collective::broadcast ? block_of(0, 0, 7) : block_of(0, 1, 7);
      EXPECT_TRUE(std::equal(want.begin(), want.end(), receive.begin()))
          << "call " << static_cast<int>(collective);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// The automatic rule (CACHECOMM_NONBLOCKING_SINGLE_COPY unset): broadcasts from 128 KiB by single
// copy under Open MPI, whose own broadcast is one (2 ranks on their own cores with cross-memory
// attach); every other call, and every call under another MPI, through the slots.
TEST(NonblockingSingleCopy, AutomaticRuleTakesItForLargeBroadcastsUnderOpenMpiOnly) {
  if (std::getenv("CACHECOMM_NONBLOCKING_SINGLE_COPY") != nullptr)
    GTEST_SKIP() << "CACHECOMM_NONBLOCKING_SINGLE_COPY is set";
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  const bool open_mpi =
      std::string(version, static_cast<std::size_t>(length)).rfind("Open MPI", 0) == 0;
  const bool shape = c.size() == 2 && !c.topology().oversubscribed && single_copy_available(c);
  const auto single = [&](nonblocking_collective collective, std::size_t bytes) {
    return explain_nonblocking(c, collective, bytes).reason.find("single copy") !=
           std::string::npos;
  };
  EXPECT_EQ(single(nonblocking_collective::broadcast, std::size_t{1} << 20), open_mpi && shape);
  EXPECT_EQ(single(nonblocking_collective::broadcast, std::size_t{128} << 10), open_mpi && shape);
  EXPECT_FALSE(single(nonblocking_collective::broadcast, std::size_t{64} << 10));
  EXPECT_FALSE(single(nonblocking_collective::gather, std::size_t{1} << 20));
  EXPECT_FALSE(single(nonblocking_collective::scatter, std::size_t{1} << 20));
  EXPECT_FALSE(single(nonblocking_collective::allgather, std::size_t{1} << 20));
  EXPECT_FALSE(single(nonblocking_collective::alltoall, std::size_t{2} << 20));
}

}  // namespace
}  // namespace cachecomm
