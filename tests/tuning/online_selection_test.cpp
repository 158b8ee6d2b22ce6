// Online selection under MPI: every rank settles on the same choice per (operation, size bucket)
// although each rank sleeps and computes for random times between calls (so each rank's own
// timings differ); every call of the trial phase gives correct results; a forced choice and a
// tuning file win over online selection; CACHECOMM_ONLINE_SELECTION=off leaves the built-in rules.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"
#include "cachecomm/config.hpp"
#include "coll/coll_engine.hpp"
#include "coll/online_selection.hpp"
#include "coll/tuning_loader.hpp"
#include "coll/tuning_table.hpp"
#include "core/comm_impl.hpp"

namespace cachecomm {
namespace {

using detail::choice_source;
using detail::tuned_op;

constexpr tuned_op data_ops[] = {tuned_op::broadcast, tuned_op::reduce,    tuned_op::allreduce,
                                 tuned_op::allgather, tuned_op::gather,    tuned_op::scatter,
                                 tuned_op::alltoall,  tuned_op::allgatherv};

/// Sizes in three buckets: slots, the data region, and a pipelined message.
constexpr std::size_t test_counts[] = {3, 1500, 40000};  // int64 elements

/// The public bound on a bucket's trial (what benchmarks call before timing the automatic choice):
/// after this many calls every bucket must be settled.
constexpr int calls_per_size = online_selection_trial_calls;

/// Online selection on every size, its trial unpaced: settled within calls_per_size.
config online_config() {
  return config::from_environment()
      .set("CACHECOMM_ONLINE_SELECTION", "on")
      .set("CACHECOMM_ONLINE_BUDGET", "0");
}

/// Online selection applies: one node of more than one rank.
bool online_applies(const comm& c) {
  return c.topology().node_count == 1 && c.topology().node_size > 1;
}

detail::online_selector& selector_of(comm& c) {
  return detail::coll_engine::of(c.impl()).online();
}

/// Random per-rank delays between calls: sleeps up to 300 us or busy work up to 100 us, seeded by
/// rank, so each rank reaches each call at its own time and measures its own durations.
class random_delays {
 public:
  explicit random_delays(int rank) : m_engine(0x5eedU + static_cast<unsigned>(rank) * 7919U) {}
  void pause() {
    const int kind = std::uniform_int_distribution<int>(0, 2)(m_engine);
    const int micros = std::uniform_int_distribution<int>(0, kind == 0 ? 300 : 100)(m_engine);
    if (kind == 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(micros));
    } else if (kind == 1) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(micros);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
  }

 private:
  std::mt19937 m_engine;
};

/// One call of `op` with `count` int64 elements, checked against the expected values.
void call_and_check(comm& c, tuned_op op, std::size_t count, int iteration) {
  const int rank = c.rank();
  const int size = c.size();
  const auto value = [&](int from, std::size_t i) {
    return static_cast<long long>(i) * 3 + from * 1000 + iteration;
  };
  std::vector<long long> input(count);
  for (std::size_t i = 0; i < count; ++i) input[i] = value(rank, i);
  const auto sum = [&](std::size_t i) {
    long long total = 0;
    for (int from = 0; from < size; ++from) total += value(from, i);
    return total;
  };
  switch (op) {
    case tuned_op::broadcast: {
      const int root = iteration % size;
      std::vector<long long> data = rank == root ? input : std::vector<long long>(count, -1);
      broadcast(c, data.data(), count, datatype::int64, root);
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(data[i], value(root, i)) << i;
      break;
    }
    case tuned_op::reduce: {
      const int root = (iteration + 1) % size;
      std::vector<long long> output(count, -1);
      reduce(c, input.data(), output.data(), count, datatype::int64, reduce_op::sum, root);
      if (rank == root) {
        for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(output[i], sum(i)) << i;
      }
      break;
    }
    case tuned_op::allreduce: {
      std::vector<long long> output(count, -1);
      allreduce(c, input.data(), output.data(), count, datatype::int64, reduce_op::sum);
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(output[i], sum(i)) << i;
      break;
    }
    case tuned_op::allgather: {
      std::vector<long long> output(count * static_cast<std::size_t>(size), -1);
      allgather(c, input.data(), output.data(), count, datatype::int64);
      for (int from = 0; from < size; ++from) {
        for (std::size_t i = 0; i < count; ++i)
          ASSERT_EQ(output[static_cast<std::size_t>(from) * count + i], value(from, i)) << from;
      }
      break;
    }
    case tuned_op::gather: {
      const int root = iteration % size;
      std::vector<long long> output(count * static_cast<std::size_t>(size), -1);
      gather(c, input.data(), output.data(), count, datatype::int64, root);
      if (rank == root) {
        for (int from = 0; from < size; ++from) {
          for (std::size_t i = 0; i < count; ++i)
            ASSERT_EQ(output[static_cast<std::size_t>(from) * count + i], value(from, i)) << from;
        }
      }
      break;
    }
    case tuned_op::scatter: {
      const int root = (iteration + 1) % size;
      std::vector<long long> blocks(count * static_cast<std::size_t>(size));
      for (int to = 0; to < size; ++to) {
        for (std::size_t i = 0; i < count; ++i)
          blocks[static_cast<std::size_t>(to) * count + i] = value(to, i) + root;
      }
      std::vector<long long> output(count, -1);
      scatter(c, blocks.data(), output.data(), count, datatype::int64, root);
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(output[i], value(rank, i) + root) << i;
      break;
    }
    case tuned_op::alltoall: {
      // Block `to` of rank `from`: value(from, i) + 7 * to.
      std::vector<long long> blocks(count * static_cast<std::size_t>(size));
      for (int to = 0; to < size; ++to) {
        for (std::size_t i = 0; i < count; ++i)
          blocks[static_cast<std::size_t>(to) * count + i] = value(rank, i) + 7LL * to;
      }
      std::vector<long long> output(count * static_cast<std::size_t>(size), -1);
      alltoall(c, blocks.data(), output.data(), count, datatype::int64);
      for (int from = 0; from < size; ++from) {
        for (std::size_t i = 0; i < count; ++i)
          ASSERT_EQ(output[static_cast<std::size_t>(from) * count + i], value(from, i) + 7LL * rank)
              << from;
      }
      break;
    }
    case tuned_op::allgatherv: {
      const auto ranks = static_cast<std::size_t>(size);
      const std::vector<std::size_t> counts(ranks, count);
      std::vector<std::size_t> displacements(ranks);
      for (std::size_t r = 0; r < ranks; ++r) displacements[r] = r * count;
      std::vector<long long> output(count * ranks, -1);
      allgatherv(c, input.data(), count, output.data(), counts, displacements, datatype::int64);
      for (int from = 0; from < size; ++from) {
        for (std::size_t i = 0; i < count; ++i)
          ASSERT_EQ(output[static_cast<std::size_t>(from) * count + i], value(from, i)) << from;
      }
      break;
    }
    case tuned_op::alltoallv: {
      // Rank 0 sends rank `size - 1` `count` elements, every other pair 1 element (a slot's worth):
      // the call's largest block is `count` elements on every rank, although one rank sends it.
      const auto ranks = static_cast<std::size_t>(size);
      auto block_count = [&](int from, int to) {
        return from == 0 && to == size - 1 ? count : std::size_t{1};
      };
      std::vector<std::size_t> send_counts(ranks);
      std::vector<std::size_t> send_offsets(ranks);
      std::vector<std::size_t> receive_counts(ranks);
      std::vector<std::size_t> receive_offsets(ranks);
      std::size_t sent = 0;
      std::size_t received = 0;
      for (int r = 0; r < size; ++r) {
        const auto at = static_cast<std::size_t>(r);
        send_counts[at] = block_count(rank, r);
        send_offsets[at] = sent;
        sent += send_counts[at];
        receive_counts[at] = block_count(r, rank);
        receive_offsets[at] = received;
        received += receive_counts[at];
      }
      std::vector<long long> blocks(sent);
      for (int to = 0; to < size; ++to) {
        const auto at = static_cast<std::size_t>(to);
        for (std::size_t i = 0; i < send_counts[at]; ++i)
          blocks[send_offsets[at] + i] = value(rank, i) + 7LL * to;
      }
      std::vector<long long> output(received, -1);
      alltoallv(c, blocks.data(), send_counts, send_offsets, output.data(), receive_counts,
                receive_offsets, datatype::int64);
      for (int from = 0; from < size; ++from) {
        const auto at = static_cast<std::size_t>(from);
        for (std::size_t i = 0; i < receive_counts[at]; ++i)
          ASSERT_EQ(output[receive_offsets[at] + i], value(from, i) + 7LL * rank) << from;
      }
      break;
    }
    case tuned_op::gatherv: {
      const int root = iteration % size;
      const auto ranks = static_cast<std::size_t>(size);
      const std::vector<std::size_t> counts(ranks, count);
      std::vector<std::size_t> displacements(ranks);
      for (std::size_t r = 0; r < ranks; ++r) displacements[r] = r * count;
      std::vector<long long> output(rank == root ? count * ranks : 0, -1);
      gatherv(c, input.data(), count, output.data(), counts, displacements, datatype::int64, root);
      if (rank == root) {
        for (int from = 0; from < size; ++from) {
          for (std::size_t i = 0; i < count; ++i)
            ASSERT_EQ(output[static_cast<std::size_t>(from) * count + i], value(from, i)) << from;
        }
      }
      break;
    }
    case tuned_op::barrier: break;
  }
}

/// The same string on every rank of the world.
void expect_same_on_every_rank(const std::string& text) {
  const std::size_t hash = std::hash<std::string>{}(text);
  unsigned long long values[2] = {hash, ~static_cast<unsigned long long>(hash)};
  unsigned long long largest[2] = {};
  MPI_Allreduce(values, largest, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(largest[0], hash) << "ranks disagree: this rank has " << text;
  EXPECT_EQ(~largest[1], hash) << "ranks disagree: this rank has " << text;
}

std::string choice_of(comm& c, tuned_op op, std::size_t bytes) {
  switch (op) {
    case tuned_op::broadcast: return explain_broadcast(c, bytes).algorithm;
    case tuned_op::reduce: return explain_reduce(c, bytes).algorithm;
    case tuned_op::allreduce: return explain_allreduce(c, bytes).algorithm;
    case tuned_op::allgather: return explain_allgather(c, bytes).algorithm;
    case tuned_op::gather: return explain_gather(c, bytes).algorithm;
    case tuned_op::scatter: return explain_scatter(c, bytes).algorithm;
    case tuned_op::alltoall: return explain_alltoall(c, bytes).algorithm;
    case tuned_op::allgatherv: return explain_allgatherv(c, bytes).algorithm;
    case tuned_op::alltoallv: return explain_alltoallv(c, bytes).algorithm;
    case tuned_op::gatherv: return explain_gatherv(c, bytes).algorithm;
    case tuned_op::barrier: break;
  }
  return {};
}

TEST(OnlineSelection, ConvergesToOneChoiceOnEveryRankUnderRandomDelays) {
  comm c(MPI_COMM_WORLD, online_config().set("CACHECOMM_TUNING", "off"));
  random_delays delays(c.rank());
  // Operations interleaved, as a program would call them: each bucket's counter must still agree.
  for (int iteration = 0; iteration < calls_per_size; ++iteration) {
    for (const std::size_t count : test_counts) {
      for (const tuned_op op : data_ops) {
        delays.pause();
        ASSERT_NO_FATAL_FAILURE(call_and_check(c, op, count, iteration));
      }
    }
  }
  const detail::online_selector& online = selector_of(c);
  for (const std::size_t count : test_counts) {
    const std::size_t bytes = count * sizeof(long long);
    for (const tuned_op op : data_ops) {
      const choice_source source = online.source_of(op, bytes);
      if (!online_applies(c)) {  // the built-in rules (one rank may not even ask)
        EXPECT_NE(source, choice_source::online) << to_string(op) << " " << bytes;
        EXPECT_NE(source, choice_source::trial) << to_string(op) << " " << bytes;
        continue;
      }
      ASSERT_EQ(source, choice_source::online) << online.describe(op, bytes);
      const std::string line = online.describe(op, bytes);
      if (c.rank() == 0) std::printf("%s\n", line.c_str());
      // Every candidate was tried: the registry's algorithms that run on this node and MPI.
      EXPECT_NE(line.find("measured online: "), std::string::npos) << line;
      EXPECT_NE(line.find("mpi "), std::string::npos) << line;
      // The whole line (choice, every agreed estimate, trial calls) is the same on every rank.
      expect_same_on_every_rank(line);
      expect_same_on_every_rank(choice_of(c, op, bytes));
      EXPECT_NE(explain_allreduce(c, bytes).reason.find("measured online"), std::string::npos);
    }
  }
  // Settled: later calls keep the choice and stay correct.
  for (const std::size_t count : test_counts) {
    for (const tuned_op op : data_ops) {
      const std::size_t bytes = count * sizeof(long long);
      const std::string before = online.describe(op, bytes);
      ASSERT_NO_FATAL_FAILURE(call_and_check(c, op, count, calls_per_size));
      EXPECT_EQ(online.describe(op, bytes), before);
    }
  }
}

// Paced (the default budget), the pauses between the rounds are counted in calls from agreed
// times: every rank runs the same schedule and settles on the same choice.
TEST(OnlineSelection, APacedTrialConvergesToOneChoiceOnEveryRank) {
  comm c(MPI_COMM_WORLD, config::from_environment()
                             .set("CACHECOMM_ONLINE_SELECTION", "on")
                             .set("CACHECOMM_ONLINE_BUDGET", "5")
                             .set("CACHECOMM_TUNING", "off"));
  random_delays delays(c.rank());
  // 160 KB: calls long enough to be paced (online_selector::paced_min_ns) on most nodes.
  constexpr std::size_t count = 20000;
  const tuned_op ops[] = {tuned_op::broadcast, tuned_op::allgather};
  const detail::online_selector& online = selector_of(c);
  // Until both settle: the state follows agreed numbers only, so every rank stops at the same call.
  auto settled = [&] {
    for (const tuned_op op : ops) {
      if (online.source_of(op, count * sizeof(long long)) == choice_source::trial) return false;
    }
    return true;
  };
  int iteration = 0;
  for (; iteration < online_selection_paced_calls && (iteration == 0 || !settled()); ++iteration) {
    for (const tuned_op op : ops) {
      if (iteration % 16 == 0) delays.pause();
      ASSERT_NO_FATAL_FAILURE(call_and_check(c, op, count, iteration));
    }
  }
  EXPECT_LT(iteration, online_selection_paced_calls);
  for (const tuned_op op : ops) {
    const std::size_t bytes = count * sizeof(long long);
    const std::string line = online.describe(op, bytes);
    if (!online_applies(c)) {
      EXPECT_NE(online.source_of(op, bytes), choice_source::trial) << line;
      continue;
    }
    if (c.rank() == 0) std::printf("%s\n", line.c_str());
    ASSERT_EQ(online.source_of(op, bytes), choice_source::online) << line;
    expect_same_on_every_rank(line);
    expect_same_on_every_rank(choice_of(c, op, bytes));
  }
}

/// An operation chosen inside the call settled online on the bucket of `count` int64 elements:
/// every candidate measured (MPI's call too), the same line and choice on every rank, and later
/// calls keep it and stay correct.
void expect_settled_online(comm& c, tuned_op op, std::size_t count) {
  const detail::online_selector& online = selector_of(c);
  const std::size_t bytes = count * sizeof(long long);
  const std::string line = online.describe(op, bytes);
  if (c.rank() == 0) std::printf("%s\n", line.c_str());
  ASSERT_EQ(online.source_of(op, bytes), choice_source::online) << line;
  EXPECT_NE(line.find("mpi "), std::string::npos) << line;
  expect_same_on_every_rank(line);
  expect_same_on_every_rank(choice_of(c, op, bytes));
  for (int iteration = 0; iteration < 3; ++iteration)
    ASSERT_NO_FATAL_FAILURE(call_and_check(c, op, count, iteration));
  EXPECT_EQ(online.describe(op, bytes), line);
}

// Alltoallv is planned inside the call, from the largest block that left the slots, which one rank
// alone sends (call_and_check): every rank must still take the same choice on every call.
TEST(OnlineSelection, AlltoallvConvergesFromTheLargestBlockOfTheCall) {
  comm c(MPI_COMM_WORLD, online_config().set("CACHECOMM_TUNING", "off"));
  random_delays delays(c.rank());
  constexpr std::size_t inline_count = 3;  // every block in its slot: nothing left to choose
  constexpr std::size_t large_count = 40000;
  for (int iteration = 0; iteration < calls_per_size; ++iteration) {
    for (const std::size_t count : {inline_count, large_count}) {
      delays.pause();
      ASSERT_NO_FATAL_FAILURE(call_and_check(c, tuned_op::alltoallv, count, iteration));
    }
  }
  const detail::online_selector& online = selector_of(c);
  constexpr std::size_t large_bytes = large_count * sizeof(long long);
  EXPECT_EQ(online.source_of(tuned_op::alltoallv, inline_count * sizeof(long long)),
            choice_source::unused);
  if (!online_applies(c) || c.size() < 2) {
    EXPECT_NE(online.source_of(tuned_op::alltoallv, large_bytes), choice_source::online);
    return;
  }
  expect_settled_online(c, tuned_op::alltoallv, large_count);
}

// A pair's gatherv is planned inside the call from the non-root's block, which only the non-root
// has before the call: both ranks must still take the same choice on every call, whichever is
// the root. Other rank counts keep the built-in rules.
TEST(OnlineSelection, PairGathervConvergesFromTheNonRootsBlock) {
  comm c(MPI_COMM_WORLD, online_config().set("CACHECOMM_TUNING", "off"));
  random_delays delays(c.rank());
  constexpr std::size_t small_count = 1000;  // 8000 B: posted and left, never planned
  constexpr std::size_t large_count = 40000;
  for (int iteration = 0; iteration < calls_per_size; ++iteration) {
    for (const std::size_t count : {small_count, large_count}) {
      delays.pause();
      ASSERT_NO_FATAL_FAILURE(call_and_check(c, tuned_op::gatherv, count, iteration));
    }
  }
  const detail::online_selector& online = selector_of(c);
  constexpr std::size_t large_bytes = large_count * sizeof(long long);
  EXPECT_EQ(online.source_of(tuned_op::gatherv, small_count * sizeof(long long)),
            choice_source::unused);
  const bool pair = online_applies(c) && c.size() == 2 && c.topology().node_size == 2 &&
                    !c.topology().oversubscribed &&
                    detail::coll_engine::of(c.impl()).single_copy_available();
  if (!pair) {
    EXPECT_EQ(online.source_of(tuned_op::gatherv, large_bytes), choice_source::unused);
    return;
  }
  expect_settled_online(c, tuned_op::gatherv, large_count);
}

TEST(OnlineSelection, ReChecksRunInLockstepAndAgreeOnEveryRankUnderRandomDelays) {
  comm c(MPI_COMM_WORLD,
         online_config().set("CACHECOMM_TUNING", "off").set("CACHECOMM_ONLINE_RECHECK", "on"));
  if (!online_applies(c)) GTEST_SKIP() << "online selection needs one node of several ranks";
  random_delays delays(c.rank());
  constexpr std::size_t count = 3;  // the slots: each call takes a microsecond or so
  constexpr std::size_t bytes = count * sizeof(long long);
  const detail::online_selector& online = selector_of(c);
  // The trial, then past the first re-check: a reduction, where the re-check must stay on one side
  // of the system MPI's call, and a broadcast, where it may cross it.
  const int calls =
      calls_per_size + static_cast<int>(detail::online_selector::recheck_first_calls) + 10;
  for (int iteration = 0; iteration < calls; ++iteration) {
    for (const tuned_op op : {tuned_op::allreduce, tuned_op::broadcast}) {
      if (iteration % 16 == 0) delays.pause();
      ASSERT_NO_FATAL_FAILURE(call_and_check(c, op, count, iteration));
    }
  }
  int rechecked = 0;
  for (const tuned_op op : {tuned_op::allreduce, tuned_op::broadcast}) {
    const std::string line = online.describe(op, bytes);
    rechecked += online.runner_up(op, bytes) != detail::tuning_choices::none ? 1 : 0;
    if (c.rank() == 0) std::printf("%s\n", line.c_str());
    ASSERT_EQ(online.source_of(op, bytes), choice_source::online) << line;
    // A bucket with a runner-up (an unpruned candidate of the same result: under load every other
    // candidate may have been pruned) was re-checked once, on every rank alike.
    const bool runner_up = online.runner_up(op, bytes) != detail::tuning_choices::none;
    EXPECT_EQ(line.find("re-checked 1x") != std::string::npos, runner_up) << line;
    if (runner_up && op == tuned_op::allreduce) {
      EXPECT_EQ(choice_of(c, op, bytes) == "mpi",
                online.runner_up(op, bytes) == detail::tuning_choices::system_mpi)
          << "a reduction's re-check stays on one side of the system MPI's call: " << line;
    }
    EXPECT_EQ(line.find("re-checking now"), std::string::npos) << line;
    expect_same_on_every_rank(line);
    expect_same_on_every_rank(choice_of(c, op, bytes));
  }
  // Under load every other candidate of both buckets may have been pruned (then nothing was
  // re-checked, and the assertions above held vacuously): say so rather than pass silently.
  if (rechecked == 0) GTEST_SKIP() << "no bucket had a runner-up this run: nothing re-checked";
}

TEST(OnlineSelection, EveryCandidateGivesCorrectResultsInPlace) {
  comm c(MPI_COMM_WORLD, online_config().set("CACHECOMM_TUNING", "off"));
  const int rank = c.rank();
  const int size = c.size();
  for (const std::size_t count : test_counts) {
    for (int iteration = 0; iteration < calls_per_size; ++iteration) {
      std::vector<long long> data(count);
      for (std::size_t i = 0; i < count; ++i) data[i] = static_cast<long long>(i) + rank;
      allreduce(c, in_place, data.data(), count, datatype::int64, reduce_op::sum);
      for (std::size_t i = 0; i < count; ++i)
        ASSERT_EQ(data[i], static_cast<long long>(i) * size + size * (size - 1) / 2);
      std::vector<long long> blocks(count * static_cast<std::size_t>(size), -1);
      for (std::size_t i = 0; i < count; ++i)
        blocks[static_cast<std::size_t>(rank) * count + i] = static_cast<long long>(i) - rank;
      allgather(c, in_place, blocks.data(), count, datatype::int64);
      for (int from = 0; from < size; ++from) {
        for (std::size_t i = 0; i < count; ++i)
          ASSERT_EQ(blocks[static_cast<std::size_t>(from) * count + i],
                    static_cast<long long>(i) - from);
      }
    }
  }
}

TEST(OnlineSelection, ForcedChoiceWins) {
  comm c(MPI_COMM_WORLD, online_config().set("CACHECOMM_BCAST", "central"));
  for (int iteration = 0; iteration < calls_per_size; ++iteration)
    ASSERT_NO_FATAL_FAILURE(call_and_check(c, tuned_op::broadcast, 1500, iteration));
  const detail::online_selector& online = selector_of(c);
  if (c.size() > 1) {
    EXPECT_EQ(online.source_of(tuned_op::broadcast, 12000), choice_source::forced);
    EXPECT_NE(
        online.describe(tuned_op::broadcast, 12000).find("central (forced by CACHECOMM_BCAST)"),
        std::string::npos)
        << online.describe(tuned_op::broadcast, 12000);
  }
  EXPECT_EQ(explain_broadcast(c, 12000).algorithm, "central");
  EXPECT_EQ(explain_broadcast(c, 12000).reason, "set by CACHECOMM_BCAST");
}

TEST(OnlineSelection, OffKeepsTheBuiltInRules) {
  comm c(MPI_COMM_WORLD, config::from_environment()
                             .set("CACHECOMM_ONLINE_SELECTION", "off")
                             .set("CACHECOMM_TUNING", "off"));
  for (int iteration = 0; iteration < calls_per_size; ++iteration)
    ASSERT_NO_FATAL_FAILURE(call_and_check(c, tuned_op::allreduce, 1500, iteration));
  if (c.size() > 1) {
    EXPECT_EQ(selector_of(c).source_of(tuned_op::allreduce, 12000), choice_source::builtin);
  }
  EXPECT_EQ(explain_allreduce(c, 12000).reason.find("online"), std::string::npos);
}

TEST(OnlineSelection, ByDefaultMeasuresFromSixteenKibibytesOnlyAndNotOversubscribed) {
  // The default setting (auto), whatever the environment says.
  comm c(MPI_COMM_WORLD, config::from_environment()
                             .set("CACHECOMM_ONLINE_SELECTION", "auto")
                             .set("CACHECOMM_TUNING", "off"));
  constexpr std::size_t small_count = 3;      // 24 B: the built-in rules
  constexpr std::size_t large_count = 40000;  // 320000 B: measured online
  // Paced by default: settled within online_selection_paced_calls.
  for (int iteration = 0; iteration < online_selection_paced_calls; ++iteration) {
    ASSERT_NO_FATAL_FAILURE(call_and_check(c, tuned_op::allreduce, small_count, iteration));
    ASSERT_NO_FATAL_FAILURE(call_and_check(c, tuned_op::allreduce, large_count, iteration));
  }
  const detail::online_selector& online = selector_of(c);
  const std::size_t small_bytes = small_count * sizeof(long long);
  const std::size_t large_bytes = large_count * sizeof(long long);
  EXPECT_NE(online.source_of(tuned_op::allreduce, small_bytes), choice_source::trial);
  EXPECT_NE(online.source_of(tuned_op::allreduce, small_bytes), choice_source::online);
  EXPECT_EQ(explain_allreduce(c, small_bytes).reason.find("online"), std::string::npos);
  if (online_applies(c) && !c.topology().oversubscribed) {
    ASSERT_EQ(online.source_of(tuned_op::allreduce, large_bytes), choice_source::online)
        << online.describe(tuned_op::allreduce, large_bytes);
    expect_same_on_every_rank(online.describe(tuned_op::allreduce, large_bytes));
  } else {  // oversubscribed: the rules (online_selector::automatic_off_here)
    if (online_applies(c)) {
      EXPECT_TRUE(online.automatic_off_here());
    }
    EXPECT_NE(online.source_of(tuned_op::allreduce, large_bytes), choice_source::online);
  }
}

/// A tuning file for this node choosing central (broadcast, allgather), reduce-scatter
/// (reductions) and binomial (barrier) at every size.
std::string write_tuning_file() {
  comm probe(MPI_COMM_WORLD, config::from_environment().set("CACHECOMM_TUNING", "off"));
  detail::tuning_table table;
  table.key = detail::key_of_this_node(probe.topology().node_size, probe.topology().oversubscribed);
  table.created = "test";
  for (std::size_t op = 0; op < detail::tuned_op_count; ++op) {
    const auto which = static_cast<tuned_op>(op);
    const std::string choice = which == tuned_op::barrier ? "binomial"
                               : which == tuned_op::reduce || which == tuned_op::allreduce
                                   ? "reduce-scatter"
                                   : "central";
    table.entries[op] = {{8, choice, {}, {}}, {1 << 20, choice, {}, {}}};
  }
  long pid = static_cast<long>(::getpid());
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  const std::string directory = "/tmp/cachecomm_online_test_" + std::to_string(pid);
  const std::string path = directory + "/tuning.json";
  if (probe.rank() == 0) {
    std::filesystem::create_directories(directory);
    std::ofstream(path) << detail::tuning_file_text({table});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

TEST(OnlineSelection, TuningFileWinsOverOnlineSelection) {
  const std::string path = write_tuning_file();
  {
    comm c(MPI_COMM_WORLD, online_config().set("CACHECOMM_TUNING", path));
    for (int iteration = 0; iteration < calls_per_size; ++iteration) {
      ASSERT_NO_FATAL_FAILURE(call_and_check(c, tuned_op::broadcast, 1500, iteration));
      ASSERT_NO_FATAL_FAILURE(call_and_check(c, tuned_op::allgather, 1500, iteration));
      ASSERT_NO_FATAL_FAILURE(call_and_check(c, tuned_op::allreduce, 1500, iteration));
    }
    if (c.topology().node_size > 1) {  // one rank reads no file
      const detail::online_selector& online = selector_of(c);
      EXPECT_EQ(online.source_of(tuned_op::broadcast, 12000), choice_source::tuning_file);
      EXPECT_EQ(online.source_of(tuned_op::allgather, 12000), choice_source::tuning_file);
      EXPECT_EQ(online.source_of(tuned_op::allreduce, 12000), choice_source::tuning_file);
      EXPECT_NE(online.describe(tuned_op::broadcast, 12000).find("central (tuning file)"),
                std::string::npos);
      EXPECT_EQ(explain_broadcast(c, 12000).algorithm, "central");
      EXPECT_NE(explain_broadcast(c, 12000).reason.find("cachecomm-tune"), std::string::npos);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

}  // namespace
}  // namespace cachecomm
