// Bad arguments and mismatched calls end in clear errors, never in hangs or corrupted memory.
#include <gtest/gtest.h>
#include <mpi.h>

#include <complex>
#include <string>
#include <utility>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "cachecomm/error.hpp"
#include "coll/coll_test_support.hpp"
#include "coll/selection.hpp"

namespace cachecomm {
namespace {

template <typename Error, typename Call>
std::string expect_error(Call&& call) {
  try {
    call();
  } catch (const Error& failure) {
    return failure.what();
  } catch (const std::exception& other) {
    ADD_FAILURE() << "wrong error type: " << other.what();
    return {};
  }
  ADD_FAILURE() << "no error";
  return {};
}

void expect_still_works(comm& c) {
  double value = 1.0;
  double total = 0.0;
  allreduce(c, &value, &total, 1, datatype::float64, reduce_op::sum);
  EXPECT_EQ(total, static_cast<double>(c.size()));
}

TEST(CollectiveErrors, NullBuffersWithElementsAreRefused) {
  comm c(MPI_COMM_WORLD);
  std::vector<int> buffer(4, 0);
  auto message = expect_error<invalid_argument>(
      [&] { allreduce(c, nullptr, buffer.data(), 4, datatype::int32, reduce_op::sum); });
  EXPECT_NE(message.find("send buffer is null"), std::string::npos) << message;
  message = expect_error<invalid_argument>(
      [&] { allreduce(c, buffer.data(), nullptr, 4, datatype::int32, reduce_op::sum); });
  EXPECT_NE(message.find("receive buffer is null"), std::string::npos) << message;
  message = expect_error<invalid_argument>([&] { broadcast(c, nullptr, 4, datatype::int32, 0); });
  EXPECT_NE(message.find("buffer is null"), std::string::npos) << message;
  message = expect_error<invalid_argument>(
      [&] { allgather(c, buffer.data(), nullptr, 1, datatype::int32); });
  EXPECT_NE(message.find("null"), std::string::npos) << message;
  message = expect_error<invalid_argument>(
      [&] { broadcast(c, buffer.data(), 4, datatype::int32, c.size()); });
  EXPECT_NE(message.find("root"), std::string::npos) << message;
  // Zero elements with null buffers are fine.
  allreduce(c, nullptr, nullptr, 0, datatype::int32, reduce_op::sum);
  broadcast(c, nullptr, 0, datatype::int32, 0);
  expect_still_works(c);
}

TEST(CollectiveErrors, UnsupportedTypeAndOperationPairsAreRefused) {
  comm c(MPI_COMM_WORLD);
  std::vector<std::byte> bytes(8);
  std::vector<std::complex<double>> numbers(2);
  auto message = expect_error<unsupported_error>(
      [&] { allreduce(c, in_place, bytes.data(), bytes.size(), datatype::byte, reduce_op::sum); });
  EXPECT_NE(message.find("byte"), std::string::npos) << message;
  message = expect_error<unsupported_error>(
      [&] { allreduce(c, in_place, numbers.data(), 2, datatype::complex128, reduce_op::max); });
  EXPECT_NE(message.find("complex128"), std::string::npos) << message;
  message = expect_error<unsupported_error>(
      [&] { reduce(c, in_place, numbers.data(), 2, datatype::float64, reduce_op::replace, 0); });
  EXPECT_NE(message.find("replace"), std::string::npos) << message;
  std::vector<double> reals(2);
  message = expect_error<unsupported_error>(
      [&] { allreduce(c, in_place, reals.data(), 2, datatype::float64, reduce_op::bitwise_xor); });
  EXPECT_NE(message.find("bitwise-xor"), std::string::npos) << message;
  expect_still_works(c);
}

config checking_config() {
  config settings = config::from_environment();
  settings.set("CACHECOMM_CHECK", "1");
  return settings;
}

TEST(CollectiveErrors, CheckingReportsMismatchedCallsOnEveryRank) {
  comm c(MPI_COMM_WORLD, checking_config());
  if (c.size() == 1) GTEST_SKIP() << "needs two ranks to disagree";
  std::vector<double> data(64, 1.0), result(64);
  auto message = expect_error<usage_error>([&] {
    allreduce(c, data.data(), result.data(), c.rank() == 0 ? 8 : 9, datatype::float64,
              reduce_op::sum);
  });
  EXPECT_NE(message.find("count"), std::string::npos) << message;
  message = expect_error<usage_error>([&] {
    allreduce(c, data.data(), result.data(), 4, c.rank() == 0 ? datatype::float64 : datatype::int64,
              reduce_op::sum);
  });
  EXPECT_NE(message.find("datatype"), std::string::npos) << message;
  message = expect_error<usage_error>(
      [&] { broadcast(c, data.data(), 4, datatype::float64, c.rank() == 0 ? 0 : 1); });
  EXPECT_NE(message.find("root"), std::string::npos) << message;
  message = expect_error<usage_error>([&] {
    allreduce(c, data.data(), result.data(), 4, datatype::float64,
              c.rank() == 0 ? reduce_op::sum : reduce_op::max);
  });
  EXPECT_NE(message.find("reduction"), std::string::npos) << message;
  // One rank's bad argument fails the call everywhere instead of leaving the others waiting.
  message = expect_error<invalid_argument>([&] {
    allreduce(c, c.rank() == 0 ? nullptr : data.data(), result.data(), 4, datatype::float64,
              reduce_op::sum);
  });
  EXPECT_FALSE(message.empty());
  expect_still_works(c);
}

config unchecked_config() {
  config settings = config::from_environment();
  settings.set("CACHECOMM_CHECK", "0");
  return settings;
}

/// Runs `call` on a fresh communicator without CACHECOMM_CHECK: every rank for which `must_fail`
/// holds must get the usage error naming the sizes (found by comparing the calls' descriptions,
/// not by CACHECOMM_TIMEOUT, which would be a peer_failure after 60 s); the others may return.
template <typename Call>
void expect_mismatch(const char* label, bool must_fail, Call&& call) {
  comm c(MPI_COMM_WORLD, unchecked_config());
  try {
    call(c);
    EXPECT_FALSE(must_fail) << label << ": no error on rank " << c.rank();
  } catch (const usage_error& failure) {
    EXPECT_NE(std::string(failure.what()).find("bytes"), std::string::npos)
        << label << ": " << failure.what();
  } catch (const std::exception& other) {
    ADD_FAILURE() << label << ": wrong error type on rank " << c.rank() << ": " << other.what();
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Sizes on either side of a threshold of the automatic choice (selection.hpp) send the ranks down
// different paths (slots of two sizes, slots or the data region, the system MPI's allgather),
// which wait on different flags: each must still find the others' call and fail at once.
TEST(CollectiveErrors, MismatchedSizesAcrossPathsFailWithoutChecking) {
  comm world(MPI_COMM_WORLD);
  if (world.size() == 1) GTEST_SKIP() << "needs two ranks to disagree";
  if (world.topology().node_count > 1) GTEST_SKIP() << "across nodes MPI compares the calls";
  const bool root = world.rank() == 0;
  std::vector<std::byte> buffer(2U << 20);
  std::vector<std::byte> gathered(buffer.size() * static_cast<std::size_t>(world.size()));
  for (auto [first, others] : {std::pair<std::size_t, std::size_t>{200, 280},
                               {280, 200},
                               {detail::thresholds::slot_message_bytes, 4200},
                               {4200, detail::thresholds::slot_message_bytes}}) {
    const std::size_t bytes = root ? first : others;
    const std::string sizes = std::to_string(first) + "/" + std::to_string(others);
    expect_mismatch(("broadcast " + sizes).c_str(), !root,
                    [&](comm& c) { broadcast(c, buffer.data(), bytes, datatype::byte, 0); });
    expect_mismatch(("allreduce " + sizes).c_str(), true, [&](comm& c) {
      allreduce(c, in_place, buffer.data(), bytes / 4, datatype::int32, reduce_op::sum);
    });
    expect_mismatch(("allgather " + sizes).c_str(), true, [&](comm& c) {
      allgather(c, buffer.data(), gathered.data(), bytes, datatype::byte);
    });
  }
  // The system MPI's allgather against cachecomm's (where the automatic choice uses it).
  const std::size_t mpi_block = detail::thresholds::system_allgather_min_bytes;
  expect_mismatch("allgather around the system MPI's", true, [&](comm& c) {
    allgather(c, buffer.data(), gathered.data(), root ? mpi_block : mpi_block - 4096,
              datatype::byte);
  });
}

// Ranks that name different roots wait for data from ranks that wait themselves: the roots
// travel on the call lines, so every rank fails at once with MPI_ERR_ROOT's reason instead.
TEST(CollectiveErrors, MismatchedRootsFailWithoutChecking) {
  comm world(MPI_COMM_WORLD);
  if (world.size() == 1) GTEST_SKIP() << "needs two ranks to disagree";
  if (world.topology().node_count > 1) GTEST_SKIP() << "across nodes MPI compares the calls";
  // Rank 0 waits for rank 1, which waits for rank 0 (as do the others).
  const int root = world.rank() == 0 ? 1 : 0;
  std::vector<std::byte> buffer(1U << 20);
  std::vector<std::byte> sent(buffer.size());
  for (std::size_t bytes : {std::size_t{64}, std::size_t{1} << 20}) {
    const std::string label = std::to_string(bytes) + " bytes";
    expect_mismatch(("broadcast " + label).c_str(), true,
                    [&](comm& c) { broadcast(c, buffer.data(), bytes, datatype::byte, root); });
    // Every rank contributes and nobody is the root: contributors may leave at once, so a rank
    // need not fail; none may hang, and an error must name the call.
    expect_mismatch(("reduce " + label).c_str(), false, [&](comm& c) {
      reduce(c, sent.data(), buffer.data(), bytes / 8, datatype::float64, reduce_op::sum, root);
    });
  }
}

// A root that posted a small broadcast and went on to its next call has left nothing on its call
// line about the call its reader is in: the reader finds it past that call and fails.
TEST(CollectiveErrors, PeerThatLeftTheCallIsNoticed) {
  comm c(MPI_COMM_WORLD, unchecked_config());
  if (c.size() == 1) GTEST_SKIP() << "needs two ranks to disagree";
  if (c.topology().node_count > 1) GTEST_SKIP() << "across nodes MPI compares the calls";
  std::vector<std::byte> buffer(4096);
  broadcast(c, buffer.data(), 8, datatype::byte, 0);  // builds the shared state on every rank
  if (c.rank() == 0) {
    broadcast(c, buffer.data(), 200, datatype::byte, 0);
    broadcast(c, buffer.data(), 200, datatype::byte, 0);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);  // the root is in its second call by now
    const auto message =
        expect_error<usage_error>([&] { broadcast(c, buffer.data(), 280, datatype::byte, 0); });
    EXPECT_NE(message.find("left this call"), std::string::npos) << message;
  }
}

TEST(CollectiveErrors, BadStreamingStoresSettingIsNamed) {
  config settings = config::from_environment();
  settings.set("CACHECOMM_STREAMING_STORES", "sometimes");
  comm c(MPI_COMM_WORLD, settings);
  if (c.size() == 1) GTEST_SKIP() << "one rank keeps no shared state";
  std::vector<double> data(4, 1.0);
  // The collectives' state is built (and the setting read) on every rank by the first call.
  const auto message = expect_error<invalid_argument>(
      [&] { broadcast(c, data.data(), data.size(), datatype::float64, 0); });
  EXPECT_NE(message.find("CACHECOMM_STREAMING_STORES"), std::string::npos) << message;
  EXPECT_NE(message.find("sometimes"), std::string::npos) << message;
}

TEST(CollectiveErrors, TypedOverloadsAndNamesWork) {
  comm c(MPI_COMM_WORLD);
  std::vector<int> mine = {c.rank(), 1};
  std::vector<int> sums(2);
  allreduce(c, std::span<const int>(mine), std::span<int>(sums), reduce_op::sum);
  EXPECT_EQ(sums[1], c.size());
  EXPECT_EQ(sums[0], c.size() * (c.size() - 1) / 2);
  allreduce(c, std::span<int>(mine), reduce_op::max);
  EXPECT_EQ(mine[0], c.size() - 1);
  std::vector<int> gathered(2 * static_cast<std::size_t>(c.size()));
  allgather(c, std::span<const int>(sums), std::span<int>(gathered));
  EXPECT_EQ(gathered.back(), c.size());
  for (auto algorithm : all_broadcast_algorithms()) {
    EXPECT_EQ(parse_broadcast_algorithm(to_string(algorithm)), algorithm);
  }
  for (auto algorithm : all_reduce_algorithms())
    EXPECT_EQ(parse_reduce_algorithm(to_string(algorithm)), algorithm);
  EXPECT_THROW((void)parse_reduce_algorithm("fastest"), invalid_argument);
  EXPECT_FALSE(explain_allreduce(c, 8).reason.empty());
  EXPECT_FALSE(explain_broadcast(c, 1 << 20).algorithm.empty());
  std::vector<int> too_long(3);
  EXPECT_THROW(allreduce(c, std::span<const int>(mine), std::span<int>(too_long), reduce_op::sum),
               invalid_argument);
}

}  // namespace
}  // namespace cachecomm
