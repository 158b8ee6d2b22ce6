// The online selection's schedule without MPI: which candidate each call of a bucket runs, when
// the ranks must agree, pruning, the settled choice and its report. The handshake is a fake that
// plays one other rank (it returns the larger and the average of this rank's value and the
// other's).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "coll/online_selection.hpp"

namespace cachecomm::detail {
namespace {

constexpr std::int8_t mpi = tuning_choices::system_mpi;

/// Runs calls of one bucket on one rank: `times` says how long each candidate's calls take here,
/// `other_rank` what the other rank reports at each handshake.
struct bucket_driver {
  online_selector selector{online_mode::on};
  tuned_op op = tuned_op::broadcast;
  std::size_t bytes = 4096;
  static constexpr std::array<std::int8_t, 4> default_candidates{1, 2, 3, mpi};
  std::vector<std::int8_t> candidates{default_candidates.begin(), default_candidates.end()};
  std::map<std::int8_t, std::uint64_t> times;
  /// Where set, a call's time from its candidate and how many calls of the same candidate came
  /// right before it (what a call leaves behind weighs on the next one); otherwise `times`.
  std::function<std::uint64_t(std::int8_t choice, int streak)> timing;
  std::int8_t previous = tuning_choices::none;  ///< the candidate of the last call
  int streak = 0;                               ///< calls of `previous` in a row
  /// What the other rank reports at a handshake where this rank reports a given time (the times of
  /// the candidates differ, so a time names its candidate); absent: the same time as this rank.
  std::map<std::uint64_t, std::uint64_t> other_rank;
  std::vector<std::int8_t> ran;         ///< the candidate of every timed trial call
  int warm_ups = 0;                     ///< untimed trial calls (warm-up and block starts)
  std::map<std::int8_t, int> calls_of;  ///< every call of each candidate, timed or not
  /// Every call while the bucket was on trial: its candidate, and whether it was timed.
  std::vector<std::pair<std::int8_t, bool>> trial_calls;
  int handshakes = 0;        ///< values agreed on (one per candidate a handshake is about)
  int handshake_events = 0;  ///< handshakes (each on one or more values)
  int candidate_lists = 0;

  online_plan call() {
    const online_plan plan = selector.plan(
        op, bytes,
        [&] {
          ++candidate_lists;
          return candidates;
        },
        [&](const online_selector::trial_values& mine, std::size_t count, unsigned parity) {
          // The parity alternates with every handshake of the selector.
          EXPECT_EQ(parity, static_cast<unsigned>(handshake_events % 2));
          EXPECT_GE(count, 1U);
          ++handshake_events;
          online_selector::trial_views views{};
          for (std::size_t k = 0; k < count; ++k) {
            ++handshakes;
            const auto found = other_rank.find(mine[k]);
            const std::uint64_t other = found == other_rank.end() ? mine[k] : found->second;
            if (mine[k] != online_selector::no_time && other != online_selector::no_time)
              views[k] = trial_view{std::max(mine[k], other), (mine[k] + other) / 2};
          }
          return views;
        });
    if (selector.source_of(op, bytes) == choice_source::trial)
      trial_calls.emplace_back(plan.choice, plan.trial);
    if (plan.warm_up) ++warm_ups;
    ++calls_of[plan.choice];
    if (plan.trial) {
      ran.push_back(plan.choice);
      const int before = plan.choice == previous ? streak : 0;
      selector.record(op, bytes, timing ? timing(plan.choice, before) : times[plan.choice]);
    }
    streak = plan.choice == previous ? streak + 1 : 1;
    previous = plan.choice;
    return plan;
  }
};

TEST(OnlineSelector, TriesEveryCandidateOncePerRoundInAnOrderThatChangesAndKeepsTheFastest) {
  bucket_driver driver;
  driver.times = {{1, 500}, {2, 400}, {3, 750}, {mpi, 450}};  // all within 2x: none pruned
  int calls = 0;
  while (driver.selector.source_of(driver.op, driver.bytes) != choice_source::online) {
    driver.call();
    ASSERT_LT(++calls, 100) << "never settles";
  }
  // 3 rounds of 4 candidates, then the confirmation's two blocks (comparison_calls each).
  constexpr std::size_t block = online_selector::comparison_calls;
  ASSERT_EQ(driver.ran.size(), 12U + 2 * block);
  // Round 0 in the registry's order, the built-in choice first; every round runs each once.
  const std::vector<std::int8_t> first_round{1, 2, 3, mpi};
  EXPECT_EQ(std::vector<std::int8_t>(driver.ran.begin(), driver.ran.begin() + 4), first_round);
  std::vector<std::vector<std::int8_t>> rounds;
  for (std::size_t start = 0; start < 12; start += 4) {
    std::vector<std::int8_t> round(driver.ran.begin() + static_cast<std::ptrdiff_t>(start),
                                   driver.ran.begin() + static_cast<std::ptrdiff_t>(start + 4));
    rounds.push_back(round);
    std::sort(round.begin(), round.end());
    std::vector<std::int8_t> sorted = first_round;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(round, sorted) << "round " << start / 4 << " runs every candidate once";
  }
  // Not one fixed order: some candidate follows a different one in a later round.
  EXPECT_TRUE(rounds[1] != rounds[0] || rounds[2] != rounds[0]);
  EXPECT_EQ(driver.candidate_lists, 1);
  // Values agreed on: after round 0 and round 1 (every candidate's first call and best of two,
  // to prune), after the last round, both candidates after the confirmation, and the lower
  // quartile of the system MPI's call, which lost the confirmation (note_warming_mpi).
  EXPECT_EQ(driver.handshakes, 4 + 4 + 4 + 2 + 1);
  // One handshake for each of those agreements, whatever its number of values.
  EXPECT_EQ(driver.handshake_events, 5);
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 2);
  // Settled: no more trials, no more handshakes.
  const online_plan next = driver.call();
  EXPECT_FALSE(next.trial);
  EXPECT_EQ(next.choice, 2);
  EXPECT_EQ(driver.handshakes, 15);
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("bcast 4 KiB..8 KiB: double-buffer (measured online:"), std::string::npos)
      << line;
  // From round 1 each timed call follows an untimed call of the same candidate: 4 + 2 x 8 calls,
  // then two blocks of one untimed and 8 timed calls.
  EXPECT_NE(line.find("38 trial calls"), std::string::npos) << line;
  EXPECT_NE(line.find("last compared in blocks of 8 calls: double-buffer 0.4 us, mpi 0.5 us"),
            std::string::npos)
      << line;
  ASSERT_EQ(driver.trial_calls.size(), 38U);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(driver.trial_calls[i].second) << i;
  for (std::size_t i = 4; i < 20; i += 2) {
    EXPECT_FALSE(driver.trial_calls[i].second) << i << ": the warm-up call is not timed";
    EXPECT_TRUE(driver.trial_calls[i + 1].second) << i + 1;
    EXPECT_EQ(driver.trial_calls[i].first, driver.trial_calls[i + 1].first)
        << i << ": the warm-up call runs the candidate it warms";
  }
  // The confirmation: the winner's block, then its closest rival's (the system MPI's call, 450 ns
  // against 400), each one untimed call and then timed ones.
  for (std::size_t i = 20; i < 38; ++i) {
    EXPECT_EQ(driver.trial_calls[i].first, i < 29 ? 2 : mpi) << i;
    EXPECT_EQ(driver.trial_calls[i].second, i != 20 && i != 29) << i;
  }
}

TEST(OnlineSelector, EveryRankRunsTheSameSchedule) {
  bucket_driver one;
  bucket_driver other;
  // (Each driver's handshake plays a partner with its own times, so the times here lead both to
  // the same decisions, as agreed times would: 2 wins, the system MPI's call is confirmed.)
  one.times = {{1, 500}, {2, 400}, {3, 750}, {mpi, 450}};
  other.times = {{1, 700}, {2, 500}, {3, 800}, {mpi, 650}};
  for (int i = 0; i < 40; ++i) {
    one.call();
    other.call();
  }
  EXPECT_EQ(one.ran, other.ran);
}

TEST(OnlineSelector, TheSlowestRankDecides) {
  bucket_driver driver;
  // Here candidate 2 is the fastest, but another rank saw it take 2000 ns each time.
  driver.times = {{1, 500}, {2, 100}, {3, 900}, {mpi, 440}};
  driver.other_rank = {{100, 2000}};
  for (int i = 0; i < 40; ++i) driver.call();
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), mpi);
}

/// A driver whose selector picks by the average rank (CACHECOMM_ONLINE_METRIC=average).
bucket_driver average_driver() {
  bucket_driver driver;
  driver.selector = online_selector{online_mode::on, true, online_metric::average};
  return driver;
}

TEST(OnlineSelector, TheAverageRankDecidesAmongCandidatesWhoseSlowestRankKeepsUp) {
  // Candidate 2: this rank (its root) leaves after 400 ns, the other takes 1050 (average 725,
  // slowest within 25 % of candidate 3's 850); candidate 3 takes 850 on both.
  bucket_driver driver = average_driver();
  driver.times = {{1, 1000}, {2, 400}, {3, 850}, {mpi, 1200}};
  driver.other_rank = {{400, 1050}};
  for (int i = 0; i < 40; ++i) driver.call();
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 2);
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("double-buffer 0.7 us (slowest 1.1)"), std::string::npos) << line;

  // By the slowest rank alone (the default), candidate 3 wins.
  bucket_driver slowest;
  slowest.times = driver.times;
  slowest.other_rank = driver.other_rank;
  for (int i = 0; i < 40; ++i) slowest.call();
  EXPECT_EQ(slowest.selector.settled(slowest.op, slowest.bytes), 3);
}

TEST(OnlineSelector, ACandidateWhoseSlowestRankLagsFarBehindNeverWinsOnItsAverage) {
  // Candidate 2's average (800) is the lowest, but its other rank takes 1500: 76 % behind 850.
  bucket_driver driver = average_driver();
  driver.times = {{1, 1000}, {2, 100}, {3, 850}, {mpi, 1200}};
  driver.other_rank = {{100, 1500}};
  for (int i = 0; i < 40; ++i) driver.call();
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 3);
}

TEST(OnlineSelector, ARulesChoiceWhoseSlowestRankLagsIsReplacedEvenByASlowerAverage) {
  // The rules' choice (1) averages 600 but its other rank takes 1100; candidate 3 averages 640
  // with both ranks alike.
  bucket_driver driver = average_driver();
  driver.times = {{1, 100}, {2, 5000}, {3, 640}, {mpi, 5100}};
  driver.other_rank = {{100, 1100}};
  for (int i = 0; i < 40; ++i) driver.call();
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 3);
}

TEST(OnlineSelector, TheSystemMpiFarSlowerThanTheFastestIsDroppedAfterTwoCalls) {
  // Its first call 15x the fastest's (an MPI's first call of a size), its second still 5x.
  bucket_driver driver;
  driver.times = {{1, 100}, {2, 180}, {3, 190}, {mpi, 1500}};
  for (int i = 0; i < 4; ++i) driver.call();  // round 0
  driver.times[mpi] = 500;
  for (int i = 0; i < 40; ++i) driver.call();
  // Rounds of 4, 4 and 3 candidates, then the confirmation (2 against the rules' choice: within
  // 2x).
  ASSERT_EQ(driver.ran.size(), 4U + 4U + 3U + 2 * online_selector::comparison_calls);
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), mpi), 2);
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), 3), 3);
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
  EXPECT_NE(
      driver.selector.describe(driver.op, driver.bytes).find("mpi 0.5 us [pruned after 2 calls]"),
      std::string::npos)
      << driver.selector.describe(driver.op, driver.bytes);
}

TEST(OnlineSelector, AnAlgorithmEightTimesSlowerInItsFirstCallGetsNoSecond) {
  // The single-copy broadcast at 16 ranks on a 16-core Xeon: 8-12x the double-buffer's time.
  bucket_driver driver;
  driver.times = {{1, 100}, {2, 810}, {3, 120}, {mpi, 1500}};
  for (int i = 0; i < 40; ++i) driver.call();
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), 2), 1);
  // The system MPI's call, 15x, keeps its second call (an MPI's slow first call), not a third.
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), mpi), 2);
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("double-buffer 0.8 us [pruned after 1 call]"), std::string::npos) << line;
  // Within 8x (a call timed right after another candidate's took up to 4.1x its settled time)
  // it gets a second call, and at 4x-8x no third.
  bucket_driver close;
  close.times = {{1, 100}, {2, 790}, {3, 120}, {mpi, 1500}};
  for (int i = 0; i < 40; ++i) close.call();
  EXPECT_EQ(std::count(close.ran.begin(), close.ran.end(), 2), 2);
}

TEST(OnlineSelector, ACandidateFarSlowerInItsFirstCallGetsNoSecond) {
  // The system MPI's call spins for 100x the fastest's time (an oversubscribed MPICH).
  bucket_driver driver;
  driver.times = {{1, 1000}, {2, 900}, {3, 950}, {mpi, 100000}};
  for (int i = 0; i < 40; ++i) driver.call();
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), mpi), 1);
  // 3 in the rounds, then a block of the confirmation (the closest rival of the rules' choice).
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), 2),
            3 + online_selector::comparison_calls);
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);  // 2 is within 10 %
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("mpi 100.0 us [pruned after 1 call]"), std::string::npos) << line;
  // 30x (an MPI's slow first call) is not enough after one call.
  bucket_driver first_call;
  first_call.times = {{1, 1000}, {2, 900}, {3, 950}, {mpi, 30000}};
  for (int i = 0; i < 40; ++i) first_call.call();
  EXPECT_EQ(std::count(first_call.ran.begin(), first_call.ran.end(), mpi), 2);
}

TEST(OnlineSelector, OversubscribedACandidateFourTimesSlowerGetsNoSecondCall) {
  bucket_driver driver;
  driver.selector = online_selector{online_mode::on, true, online_metric::slowest, true};
  driver.times = {{1, 1000}, {2, 900}, {3, 3400}, {mpi, 20000}};
  for (int i = 0; i < 60; ++i) driver.call();
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), mpi), 1);  // 22x
  // 3.8x: a second call (4x after one), none after the second (2x after two).
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), 3), 2);
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("mpi 20.0 us [pruned after 1 call]"), std::string::npos) << line;
  // The rules' choice is not pruned on its first call, however slow; after two, 2x behind, it is.
  bucket_driver rules;
  rules.selector = online_selector{online_mode::on, true, online_metric::slowest, true};
  rules.times = {{1, 50000}, {2, 900}, {3, 950}, {mpi, 20000}};
  for (int i = 0; i < 60; ++i) rules.call();
  EXPECT_EQ(std::count(rules.ran.begin(), rules.ran.end(), 1), 2);
}

TEST(OnlineSelector, ASlowFirstCallDoesNotPruneACandidate) {
  // Intel MPI's first broadcast of a size took 10-30x its later calls: pruning on it lost the
  // bucket to a slower candidate.
  bucket_driver driver;
  driver.times = {{1, 100}, {2, 400}, {3, 300}, {mpi, 1500}};
  for (int i = 0; i < 4; ++i) driver.call();  // round 0: MPI's call is its slow first one
  driver.times[mpi] = 60;
  for (int i = 0; i < 40; ++i) driver.call();
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), mpi),
            3 + online_selector::comparison_calls);  // the rounds, then the confirmation's block
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), mpi);
}

TEST(OnlineSelector, TheRulesChoiceIsNotPrunedByASlowFirstCall) {
  // The bucket's first call of the rules' choice carried the communicator's set-up.
  bucket_driver driver;
  driver.times = {{1, 100000}, {2, 401}, {3, 350}, {mpi, 300}};
  driver.call();  // round 0 starts with the rules' choice
  driver.times[1] = 100;
  for (int i = 0; i < 40; ++i) driver.call();
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), 1), 3);
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
}

TEST(OnlineSelector, ARulesChoiceFarBehindAfterTwoCallsIsPrunedLikeAnyOther) {
  // A rule measured on another node (the single-copy broadcast of 16 KiB on the Zen 5 VM).
  bucket_driver driver;
  driver.times = {{1, 2500}, {2, 400}, {3, 410}, {mpi, 600}};
  for (int i = 0; i < 60; ++i) driver.call();
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), 1), 2);  // rounds 0 and 1 only
  EXPECT_NE(driver.selector.settled(driver.op, driver.bytes), 1);
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("central 2.5 us [pruned after 2 calls]"), std::string::npos) << line;
}

TEST(OnlineSelector, OnlyAClearlyFasterCandidateReplacesTheRulesChoice) {
  bucket_driver close;
  close.times = {{1, 500}, {2, 460}, {3, 900}, {mpi, 470}};  // 8 % faster: noise
  for (int i = 0; i < 40; ++i) close.call();
  EXPECT_EQ(close.selector.settled(close.op, close.bytes), 1);
  bucket_driver clear;
  clear.times = {{1, 500}, {2, 440}, {3, 900}, {mpi, 470}};  // 12 % faster
  for (int i = 0; i < 40; ++i) clear.call();
  EXPECT_EQ(clear.selector.settled(clear.op, clear.bytes), 2);
}

TEST(OnlineSelector, TiesKeepTheRulesChoice) {
  bucket_driver driver;
  driver.times = {{1, 300}, {2, 300}, {3, 300}, {mpi, 300}};
  for (int i = 0; i < 40; ++i) driver.call();
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
}

TEST(OnlineSelector, FailedCallsNeverWin) {
  bucket_driver driver;
  driver.times = {{1, 300}, {2, online_selector::no_time}, {3, 500}, {mpi, 400}};
  for (int i = 0; i < 40; ++i) driver.call();
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
}

TEST(OnlineSelector, OneCandidateSettlesAtOnceAndBucketsAreSeparate) {
  bucket_driver driver;
  driver.candidates = {2};
  const online_plan plan = driver.call();
  EXPECT_FALSE(plan.trial);
  EXPECT_EQ(plan.choice, 2);
  EXPECT_EQ(driver.handshakes, 0);
  // Another bucket of the same operation, and the same bucket of another, start their own trial.
  EXPECT_EQ(driver.selector.settled(tuned_op::broadcast, 8192), tuning_choices::none);
  EXPECT_EQ(driver.selector.settled(tuned_op::allreduce, 4096), tuning_choices::none);
  EXPECT_EQ(driver.selector.settled(tuned_op::broadcast, 4096 + 4095), 2);
}

/// Calls a settled bucket until its next trial call (a re-check), at most `limit` calls; returns
/// how many settled calls came before it.
std::uint64_t calls_until_recheck(bucket_driver& driver, std::uint64_t limit) {
  for (std::uint64_t calls = 0; calls < limit; ++calls) {
    const online_plan plan = driver.call();
    if (plan.trial || plan.warm_up) return calls;
  }
  return limit;
}

/// Calls until the bucket is settled and no re-check runs.
void settle(bucket_driver& driver) {
  for (int calls = 0; calls < 100; ++calls) {
    driver.call();
    if (driver.selector.source_of(driver.op, driver.bytes) == choice_source::online &&
        driver.selector.describe(driver.op, driver.bytes).find("re-checking now") ==
            std::string::npos)
      return;
  }
  FAIL() << "never settles";
}

TEST(OnlineSelector, TheConfirmationKeepsTheRivalThatRunsFasterInALoop) {
  // As Intel MPI's allgather of 16 KiB (the rules' choice here): fast after another candidate's
  // call (340 ns), slow after its own (820); candidate 1 takes 320 either way. The rounds' best
  // calls are 340 against 320, too close to replace the rules' choice; the blocks see 820 against
  // 320.
  bucket_driver driver;
  driver.op = tuned_op::allgather;
  driver.candidates = {mpi, 1, 2};
  driver.timing = [](std::int8_t choice, int streak) -> std::uint64_t {
    if (choice == mpi) return streak > 0 ? 820 : 340;
    return choice == 1 ? 320 : 900;
  };
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("last compared in blocks of 8 calls: mpi 0.8 us, central 0.3 us"),
            std::string::npos)
      << line;
  // The re-checks later compare the same two, the same way.
  EXPECT_EQ(driver.selector.runner_up(driver.op, driver.bytes), mpi);
}

/// Calls until the bucket has settled again after a re-check that `start` more calls begin (at
/// most `limit`); the untimed calls it made.
int run_recheck(bucket_driver& driver, int limit = 2000) {
  const int warm_before = driver.warm_ups;
  for (int calls = 0; calls < limit; ++calls) {
    driver.call();
    if (calls > 0 && driver.selector.describe(driver.op, driver.bytes).find("re-checking now") ==
                         std::string::npos)
      return driver.warm_ups - warm_before;
  }
  ADD_FAILURE() << "the re-check never ends";
  return -1;
}

/// As Intel MPI 2021's first calls of an operation: of every four calls in a row the first and
/// the fourth slow (1000 ns), the middle two fast (250), for its first `warm_up` calls of the
/// operation (all sizes), then 250 every call. Candidate 1 takes 300, 2 and 3 are slower.
void time_warming_mpi(bucket_driver& driver, int warm_up) {
  driver.times = {{1, 300}, {2, 500}, {3, 550}};
  driver.timing = [&driver, warm_up](std::int8_t choice, int streak) -> std::uint64_t {
    if (choice != mpi) return driver.times[choice];
    const int phase = streak % 4;  // calls of MPI in a row before this one
    return driver.calls_of[mpi] > warm_up || (phase != 0 && phase != 3) ? 250 : 1000;
  };
}

TEST(OnlineSelector, AnMpiStillWarmingUpLosesTheTrialAndWinsTheWarmingReCheck) {
  // The trial's block of MPI's calls is half slow: its mean (571 ns) keeps candidate 1, as a loop
  // of those calls would pay. Its lower quartile (250) marks it as warming: the first re-check,
  // 1024 calls later, runs recheck_warm_calls untimed calls of it first, and then it wins.
  bucket_driver driver;
  driver.op = tuned_op::alltoall;
  time_warming_mpi(driver, 250);
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  ASSERT_EQ(driver.selector.settled(driver.op, driver.bytes), 1)
      << driver.selector.describe(driver.op, driver.bytes);
  EXPECT_EQ(driver.selector.runner_up(driver.op, driver.bytes), mpi);
  // A short program keeps candidate 1: nothing changes before the first re-check.
  EXPECT_EQ(calls_until_recheck(driver, 5000), online_selector::recheck_first_calls - 1);
  EXPECT_EQ(run_recheck(driver), static_cast<int>(1 + online_selector::recheck_warm_calls) - 1)
      << "the choice's block starts with one untimed call (counted by calls_until_recheck), MPI's "
         "with recheck_warm_calls";
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), mpi)
      << driver.selector.describe(driver.op, driver.bytes);
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("re-checked 1x, 1 switched"), std::string::npos) << line;
}

TEST(OnlineSelector, AWarmingReCheckRunsOncePerOperationAndNeverForAReduction) {
  // MPI's calls never settle here: the warming re-check keeps candidate 1, and a second bucket of
  // the same operation, marked alike, gets plain re-checks.
  // Both buckets settle (and are marked) before either is re-checked, as in a program that
  // calls both sizes from the start.
  bucket_driver driver;
  driver.op = tuned_op::allgather;
  time_warming_mpi(driver, 1 << 30);
  for (const std::size_t bytes : {4096, 65536}) {
    driver.bytes = bytes;
    ASSERT_NO_FATAL_FAILURE(settle(driver));
    ASSERT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
    EXPECT_EQ(driver.selector.runner_up(driver.op, driver.bytes), mpi);
  }
  driver.bytes = 4096;
  calls_until_recheck(driver, 5000);
  EXPECT_EQ(run_recheck(driver), static_cast<int>(online_selector::recheck_warm_calls));
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
  driver.bytes = 65536;
  calls_until_recheck(driver, 5000);
  EXPECT_EQ(run_recheck(driver), 1) << "one untimed call before the runner-up's block";
  // A reduction settled on a rank-order algorithm never re-checks against MPI's call, so it
  // neither warms it nor asks for its quartile (no handshake beyond the confirmation's two).
  bucket_driver reduction;
  reduction.op = tuned_op::allreduce;
  reduction.candidates = {1, mpi, 2};
  time_warming_mpi(reduction, 1 << 30);
  ASSERT_NO_FATAL_FAILURE(settle(reduction));
  ASSERT_EQ(reduction.selector.settled(reduction.op, reduction.bytes), 1);
  EXPECT_EQ(reduction.selector.runner_up(reduction.op, reduction.bytes), 2);
  EXPECT_EQ(reduction.handshakes, 3 + 3 + 3 + 2);
}

TEST(OnlineSelector, ABlocksFigureLeavesOutItsSlowestCall) {
  // The rival's second timed call of its block is 10x (a preempted call): the block's figure, the
  // mean of its other calls, is not.
  bucket_driver driver;
  driver.times = {{1, 500}, {2, 700}, {3, 800}, {mpi, 420}};
  int mpi_calls = 0;
  driver.timing = [&](std::int8_t choice, int) -> std::uint64_t {
    const bool in_block = driver.ran.size() > 12;
    if (choice == mpi && in_block && ++mpi_calls == 2) return 4200;
    return driver.times[choice];
  };
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), mpi);
  EXPECT_EQ(mpi_calls, static_cast<int>(online_selector::comparison_calls));
}

TEST(OnlineSelector, ACandidateMoreThanTwiceAsSlowAfterTwoCallsGetsNoThird) {
  // The broadcast of 512 KiB at 2 ranks: tree, slots and double-buffer 2.5-3x single copy's time.
  bucket_driver driver;
  driver.candidates = {1, 2, 3, 4, mpi};
  driver.times = {{1, 250}, {2, 620}, {3, 770}, {4, 800}, {mpi, 300}};
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  for (const std::int8_t slow : {2, 3, 4})
    EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), slow), 2) << int{slow};
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), mpi),
            3 + online_selector::comparison_calls);  // every round, then the confirmation
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("[pruned after 2 calls]"), std::string::npos) << line;
}

TEST(OnlineSelector, WhereCallsAreLongAnAlgorithmHalfAgainAsSlowAfterTwoCallsGetsNoThird) {
  // The broadcast of 4 MiB under Intel MPI: single copy and central 1.7-1.8x the ring's 77 us.
  // The system MPI's call as far behind keeps its calls (its first calls of a size run slow); one
  // of cachecomm's own within 1.5x too.
  const auto count = [](const bucket_driver& driver, std::int8_t choice) {
    return std::count(driver.ran.begin(), driver.ran.end(), choice);
  };
  bucket_driver driver;
  driver.bytes = std::size_t{4} << 20;
  driver.candidates = {1, 2, 3, 4, mpi};
  driver.times = {{1, 77'000}, {2, 132'000}, {3, 139'000}, {4, 110'000}, {mpi, 132'000}};
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  for (const std::int8_t slow : {2, 3}) EXPECT_EQ(count(driver, slow), 2) << int{slow};
  EXPECT_EQ(count(driver, 4), 3 + online_selector::comparison_calls);  // the closest rival
  EXPECT_EQ(count(driver, mpi), 3);
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
  // Short calls: the same ratios prune nothing (set-up may decide there).
  bucket_driver short_calls;
  short_calls.candidates = driver.candidates;
  for (const auto& [choice, time] : driver.times) short_calls.times[choice] = time / 10;
  ASSERT_NO_FATAL_FAILURE(settle(short_calls));
  for (const std::int8_t choice : {std::int8_t{2}, std::int8_t{3}, mpi})
    EXPECT_EQ(count(short_calls, choice), 3) << int{choice};
  EXPECT_EQ(count(short_calls, 4), 3 + online_selector::comparison_calls);
}

/// Settles the bucket of `bytes`, then points the driver at the bucket of twice the size (the times
/// doubled).
void settle_and_double(bucket_driver& driver) {
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  driver.bytes *= 2;
  for (auto& [choice, time] : driver.times) time *= 2;
  driver.ran.clear();
}

TEST(OnlineSelector, ABucketSkipsOwnCandidatesFarBehindInTheTwoBelowWhereCallsAreLong) {
  // Broadcast of 512 KiB, 1 MiB, then 2 MiB: tree and double-buffer 3.2-3.6x single copy's time;
  // ring 2.5x, pruned too, but close enough to win once the data leaves the cache: tried again.
  // The system MPI's call 3x, but an MPI may change protocol with the size: tried again.
  bucket_driver driver;
  driver.bytes = std::size_t{512} << 10;
  driver.candidates = {1, 2, 3, 4, mpi};
  driver.times = {{1, 25'000}, {2, 62'500}, {3, 80'000}, {4, 90'000}, {mpi, 75'000}};
  ASSERT_NO_FATAL_FAILURE(settle_and_double(driver));
  ASSERT_NO_FATAL_FAILURE(settle_and_double(driver));
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  for (const std::int8_t slow : {3, 4})
    EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), slow), 0) << int{slow};
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), 2), 2);    // pruned after 2 calls
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), mpi), 2);  // pruned after 2 calls
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("tree [not tried: pruned at 1 MiB]"), std::string::npos) << line;
  EXPECT_NE(line.find("mpi 300.0 us [pruned after 2 calls]"), std::string::npos) << line;
  // 1 MiB skipped nothing: no trial at 256 KiB.
  const std::string below = driver.selector.describe(driver.op, driver.bytes / 2);
  EXPECT_EQ(below.find("not tried"), std::string::npos) << below;
}

TEST(OnlineSelector, ACandidateFarBehindInOneBucketOnlyIsTriedInTheNext) {
  // Gather under Intel MPI: central fastest at 512 KiB, 5x behind MPI's call in the two calls it
  // had at 1 MiB (the VM slowed down for them), so pruned there; at 2 MiB it runs again.
  bucket_driver driver;
  driver.op = tuned_op::gather;
  driver.bytes = std::size_t{512} << 10;
  driver.candidates = {mpi, 1, 2};
  driver.times = {{mpi, 30'000}, {1, 22'000}, {2, 50'000}};
  ASSERT_NO_FATAL_FAILURE(settle_and_double(driver));
  driver.times = {{mpi, 46'000}, {1, 223'000}, {2, 237'000}};
  ASSERT_NO_FATAL_FAILURE(settle_and_double(driver));
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  EXPECT_GE(std::count(driver.ran.begin(), driver.ran.end(), 1), 2);
  // Single copy, pruned in both buckets below (2x at 512 KiB, 5x at 1 MiB): skipped.
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), 2), 0);
}

TEST(OnlineSelector, ShortCallsPassNoPruneOnAndTheRulesChoiceRunsInTheNextBucket) {
  // Below inherit_min_ns a candidate's set-up may decide, and it may win at twice the size.
  bucket_driver driver;
  driver.bytes = std::size_t{16} << 10;
  driver.candidates = {1, 2, 3};
  driver.times = {{1, 4'000}, {2, 1'000}, {3, 3'000}};  // the rules' choice 4x behind
  ASSERT_NO_FATAL_FAILURE(settle_and_double(driver));
  ASSERT_NO_FATAL_FAILURE(settle_and_double(driver));
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  for (const std::int8_t each : {1, 2, 3})
    EXPECT_GE(std::count(driver.ran.begin(), driver.ran.end(), each), 2) << int{each};
  // Long calls: the rules' choice (candidate 0) still runs, though it was 4x behind.
  driver.bytes = std::size_t{512} << 10;
  driver.times = {{1, 100'000}, {2, 25'000}, {3, 80'000}};
  ASSERT_NO_FATAL_FAILURE(settle_and_double(driver));
  ASSERT_NO_FATAL_FAILURE(settle_and_double(driver));
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  EXPECT_GE(std::count(driver.ran.begin(), driver.ran.end(), 1), 1);
  EXPECT_EQ(std::count(driver.ran.begin(), driver.ran.end(), 3), 0);
}

TEST(OnlineSelector, NoConfirmationAgainstARivalMoreThanTwiceAsSlow) {
  // Every candidate within 2x after two calls (none pruned); in the last round the rules' choice
  // runs faster, and every other one ends more than 2x behind it.
  bucket_driver driver;
  driver.times = {{1, 300}, {2, 550}, {3, 580}, {mpi, 590}};
  while (driver.ran.size() < 8) driver.call();
  driver.times[1] = 200;
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  EXPECT_EQ(driver.ran.size(), 12U);
  EXPECT_EQ(driver.handshakes, 12);
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
  EXPECT_EQ(driver.selector.describe(driver.op, driver.bytes).find("last compared"),
            std::string::npos);
}

TEST(OnlineSelector, AReductionsConfirmationMayCrossTheSystemMpisCallItsReChecksNever) {
  // Nothing is settled before the confirmation ends, so it compares the trial's winner (a
  // rank-order algorithm) with the system MPI's call; settled on MPI's call, no re-check follows.
  bucket_driver driver;
  driver.op = tuned_op::allreduce;
  driver.candidates = {1, 2, mpi};
  driver.timing = [](std::int8_t choice, int streak) -> std::uint64_t {
    if (choice == mpi) return streak > 1 ? 250 : 420;  // faster from its third call in a row
    return choice == 1 ? 500 : 400;
  };
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), mpi);
  EXPECT_EQ(driver.selector.runner_up(driver.op, driver.bytes), tuning_choices::none);
  EXPECT_EQ(calls_until_recheck(driver, 20000), 20000U);
}

TEST(OnlineSelector, ASettledBucketIsReCheckedRarelyAgainstTheRunnerUpOnly) {
  bucket_driver driver;
  driver.times = {{1, 500}, {2, 400}, {3, 900}, {mpi, 450}};
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  ASSERT_EQ(driver.selector.settled(driver.op, driver.bytes), 2);
  EXPECT_EQ(driver.selector.runner_up(driver.op, driver.bytes), mpi);
  const int handshakes = driver.handshakes;
  // The call that settled is not counted: the 1024th call after it starts the re-check.
  EXPECT_EQ(calls_until_recheck(driver, 5000), online_selector::recheck_first_calls - 1);
  // Now the system MPI's call (the runner-up) is clearly faster here.
  driver.times[mpi] = 300;
  const std::size_t before = driver.ran.size();
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  // A block of the choice, then one of the runner-up, as a loop runs them (the call that
  // started it was the choice's untimed first call).
  constexpr std::size_t block = online_selector::comparison_calls;
  std::vector<std::int8_t> expected(2 * block, mpi);
  std::fill_n(expected.begin(), block, std::int8_t{2});
  EXPECT_EQ(std::vector<std::int8_t>(driver.ran.begin() + static_cast<std::ptrdiff_t>(before),
                                     driver.ran.end()),
            expected);
  EXPECT_EQ(driver.handshakes, handshakes + 2) << "one per candidate, after the last block";
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), mpi);
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("re-checked 1x, 1 switched"), std::string::npos) << line;
  // The next re-check comes 8x later, now against the old choice.
  EXPECT_EQ(calls_until_recheck(driver, 20000),
            online_selector::recheck_first_calls * online_selector::recheck_growth - 1);
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  const std::vector<std::int8_t> second(driver.ran.end() - 2 * block, driver.ran.end());
  EXPECT_EQ(std::count(second.begin(), second.end(), mpi), block);
  EXPECT_EQ(std::count(second.begin(), second.end(), 2), block);
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), mpi);
}

TEST(OnlineSelector, AReCheckKeepsTheChoiceUnlessTheRunnerUpIsClearlyFaster) {
  bucket_driver driver;
  driver.times = {{1, 500}, {2, 400}, {3, 900}, {mpi, 450}};
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  driver.times[mpi] = 370;  // 7.5 % faster: noise
  calls_until_recheck(driver, 5000);
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 2);
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("re-checked 1x, 0 switched"), std::string::npos) << line;
}

TEST(OnlineSelector, AReductionIsNeverReCheckedAcrossTheSystemMpisCall) {
  // Settled on a rank-order algorithm: the runner-up is the other rank-order algorithm, although
  // the system MPI's call measured faster than it.
  bucket_driver driver;
  driver.op = tuned_op::allreduce;
  driver.candidates = {1, 2, mpi};
  driver.times = {{1, 500}, {2, 400}, {mpi, 420}};
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  ASSERT_EQ(driver.selector.settled(driver.op, driver.bytes), 2);
  driver.times[mpi] = 100;
  EXPECT_EQ(calls_until_recheck(driver, 5000), online_selector::recheck_first_calls - 1);
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  constexpr std::size_t block = online_selector::comparison_calls;
  const std::vector<std::int8_t> recheck(driver.ran.end() - 2 * block, driver.ran.end());
  EXPECT_EQ(std::count(recheck.begin(), recheck.end(), mpi), 0);
  EXPECT_EQ(std::count(recheck.begin(), recheck.end(), 1), block);
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 2);
  // Settled on the system MPI's call: no other candidate gives its bytes, so no re-check ever.
  bucket_driver on_mpi;
  on_mpi.op = tuned_op::reduce;
  on_mpi.candidates = {1, 2, mpi};
  on_mpi.times = {{1, 500}, {2, 400}, {mpi, 200}};
  ASSERT_NO_FATAL_FAILURE(settle(on_mpi));
  ASSERT_EQ(on_mpi.selector.settled(on_mpi.op, on_mpi.bytes), mpi);
  EXPECT_EQ(on_mpi.selector.runner_up(on_mpi.op, on_mpi.bytes), tuning_choices::none);
  EXPECT_EQ(calls_until_recheck(on_mpi, 20000), 20000U);
}

TEST(OnlineSelector, ABucketWhoseOtherCandidatesWereAllPrunedIsNeverReChecked) {
  bucket_driver driver;
  driver.times = {{1, 100}, {2, 500}, {3, 900}, {mpi, 450}};  // all > 4x the rules' calls
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  ASSERT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
  EXPECT_EQ(driver.selector.runner_up(driver.op, driver.bytes), tuning_choices::none);
  EXPECT_EQ(calls_until_recheck(driver, 20000), 20000U);
}

TEST(OnlineSelector, ReChecksOffKeepTheChoiceForever) {
  bucket_driver driver;
  driver.selector = online_selector(online_mode::on, false);
  EXPECT_FALSE(driver.selector.rechecks());
  driver.times = {{1, 500}, {2, 400}, {3, 900}, {mpi, 450}};
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  EXPECT_EQ(driver.selector.runner_up(driver.op, driver.bytes), tuning_choices::none);
  EXPECT_EQ(calls_until_recheck(driver, 20000), 20000U);
}

TEST(OnlineSelector, TheFastPathCountsSettledCallsAndHandsTheReCheckToPlan) {
  bucket_driver driver;
  driver.times = {{1, 500}, {2, 400}, {3, 900}, {mpi, 450}};
  ASSERT_NO_FATAL_FAILURE(settle(driver));
  for (std::uint64_t i = 1; i < online_selector::recheck_first_calls; ++i)
    ASSERT_EQ(driver.selector.settled_call(driver.op, driver.bytes), 2) << i;
  // The due call: the fast path declines, plan() (which counts it again) starts the re-check
  // with the choice's untimed first call.
  EXPECT_EQ(driver.selector.settled_call(driver.op, driver.bytes), tuning_choices::none);
  const online_plan plan = driver.call();
  EXPECT_TRUE(plan.warm_up);
  EXPECT_FALSE(plan.trial);
  EXPECT_EQ(plan.choice, 2);
  // While re-checking, explain_* still names the current choice.
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 2);
  EXPECT_EQ(driver.selector.settled_call(driver.op, driver.bytes), tuning_choices::none);
}

/// The calls of a paced trial until it settles: each call's candidate and whether it was timed.
std::vector<std::pair<std::int8_t, bool>> paced_schedule(bucket_driver& driver,
                                                         unsigned budget_percent = 5) {
  driver.selector =
      online_selector(online_mode::on, true, online_metric::slowest, false, budget_percent);
  driver.handshake_events = 0;
  std::vector<std::pair<std::int8_t, bool>> calls;
  while (driver.selector.source_of(driver.op, driver.bytes) != choice_source::online) {
    const online_plan plan = driver.call();
    calls.emplace_back(plan.choice, plan.trial || plan.warm_up);
    if (calls.size() > 5000) break;
  }
  return calls;
}

/// Counts the untimed calls of `leader` in a row that start at `from`.
std::size_t pause_at(const std::vector<std::pair<std::int8_t, bool>>& calls, std::size_t from,
                     std::int8_t leader) {
  std::size_t length = 0;
  while (from + length < calls.size() && !calls[from + length].second &&
         calls[from + length].first == leader)
    ++length;
  return length;
}

TEST(OnlineSelector, APacedTrialRunsTheLeaderBeforeItsLastRoundAndConfirmationWithinItsBudget) {
  bucket_driver driver;
  driver.times = {{1, 100'000}, {2, 100'000}, {3, 300'000}, {mpi, 150'000}};
  const auto calls = paced_schedule(driver);
  ASSERT_EQ(driver.selector.source_of(driver.op, driver.bytes), choice_source::online);
  // Rounds 0 and 1 back to back: every candidate once, then twice (a warm-up call and a timed
  // one); 3 is pruned after them (2x behind).
  for (std::size_t i = 0; i < 12; ++i) EXPECT_TRUE(calls[i].second) << i;
  // Before round 2, the rules' choice (2 is not clearly faster): round 2's calls of the system
  // MPI's cost 50 us x 2 beyond the leader's, 5 % of 20 of the leader's calls of 100 us.
  EXPECT_EQ(pause_at(calls, 12, 1), 20U);
  // Round 2 and the confirmation against 2, as fast as the leader: no pause before it. The last
  // call settles (its handshake ends the confirmation) and runs the choice.
  for (std::size_t i = 32; i + 1 < calls.size(); ++i) EXPECT_TRUE(calls[i].second) << i;
  EXPECT_EQ(calls.size(), 32U + 6 + 18 + 1);
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 1);
  const std::string line = driver.selector.describe(driver.op, driver.bytes);
  EXPECT_NE(line.find("36 trial calls paced over 56"), std::string::npos) << line;
}

TEST(OnlineSelector, APacedTrialRunsACandidateClearlyFasterThanTheRulesChoiceInItsPauses) {
  bucket_driver driver;
  driver.times = {{1, 200'000}, {2, 100'000}, {3, 110'000}, {mpi, 150'000}};
  const auto calls = paced_schedule(driver);
  ASSERT_EQ(driver.selector.source_of(driver.op, driver.bytes), choice_source::online);
  // The leader is 2, and the rules' choice, 2x behind after two calls, is pruned: round 2 costs
  // (10 + 50 us) x 2 beyond the leader, 5 % of 24 calls of 100 us.
  EXPECT_EQ(pause_at(calls, 12, 2), 24U);
  // Round 2 (three candidates), then the confirmation against 3: 10 us x 9 beyond the winner, 5 %
  // of 18 calls.
  EXPECT_EQ(pause_at(calls, 12 + 24 + 6, 2), 18U);
  EXPECT_EQ(driver.selector.settled(driver.op, driver.bytes), 2);
}

TEST(OnlineSelector, APauseCountsEveryLiveCandidateAndNoBudgetMeansNoPause) {
  bucket_driver driver;
  driver.candidates = {1, 2, 3, 4, 5, 6, 7, mpi};
  driver.times = {{1, 100'000}, {2, 140'000}, {3, 140'000}, {4, 140'000},
                  {5, 140'000}, {6, 140'000}, {7, 140'000}, {mpi, 190'000}};
  const auto calls = paced_schedule(driver, 1);
  ASSERT_EQ(driver.selector.source_of(driver.op, driver.bytes), choice_source::online);
  // None pruned (cachecomm's within 1.5x, the system MPI's within 2x). After rounds 0 and 1 (8 +
  // 16 calls), round 2 costs (6 x 40 + 90 us) x 2 beyond the leader: at 1 %, 660 of its calls; the
  // confirmation against a rival 40 us behind, 40 x 9 / 1 % = 360.
  EXPECT_EQ(pause_at(calls, 24, 1), 660U);
  EXPECT_EQ(pause_at(calls, 24 + 660 + 16, 1), 360U);
  bucket_driver unpaced;
  unpaced.times = {{1, 100'000}, {2, 100'000}, {3, 300'000}, {mpi, 150'000}};
  int count = 0;
  while (unpaced.selector.source_of(unpaced.op, unpaced.bytes) != choice_source::online) {
    const online_plan plan = unpaced.call();
    const bool settling =
        unpaced.selector.source_of(unpaced.op, unpaced.bytes) == choice_source::online;
    EXPECT_TRUE(plan.trial || plan.warm_up || settling) << count;
    ASSERT_LT(++count, 100);
  }
}

TEST(OnlineSelector, ShortCallsAreNotPaced) {
  bucket_driver driver;
  // The same ratios as above, in calls of a few microseconds: the rounds back to back.
  driver.times = {{1, 1000}, {2, 1000}, {3, 3000}, {mpi, 1500}};
  const auto calls = paced_schedule(driver);
  ASSERT_EQ(driver.selector.source_of(driver.op, driver.bytes), choice_source::online);
  for (std::size_t i = 0; i + 1 < calls.size(); ++i) EXPECT_TRUE(calls[i].second) << i;
  EXPECT_EQ(calls.size(), 36U + 1);
}

TEST(OnlineSelector, AutoDecidesFromItsThresholdOnOffEverywhereOrNowhere) {
  constexpr std::size_t threshold = online_selector::automatic_min_bytes;
  const online_selector automatic{online_mode::automatic};
  EXPECT_EQ(automatic.mode(), online_mode::automatic);
  EXPECT_FALSE(automatic.decides(8));
  EXPECT_FALSE(automatic.decides(threshold - 1));
  EXPECT_TRUE(automatic.decides(threshold));
  EXPECT_TRUE(automatic.decides(std::size_t{16} << 20));
  const online_selector on{online_mode::on};
  EXPECT_TRUE(on.decides(1));
  EXPECT_TRUE(on.decides(threshold));
  // Oversubscribed, auto leaves every size to the rules; on still measures.
  const online_selector crowded{online_mode::automatic, true, online_metric::slowest, true};
  EXPECT_TRUE(crowded.automatic_off_here());
  EXPECT_FALSE(crowded.decides(threshold));
  EXPECT_FALSE(crowded.decides(std::size_t{16} << 20));
  const online_selector crowded_on{online_mode::on, true, online_metric::slowest, true};
  EXPECT_FALSE(crowded_on.automatic_off_here());
  EXPECT_TRUE(crowded_on.decides(threshold));
  EXPECT_FALSE(automatic.automatic_off_here());
  const online_selector off{online_mode::off};
  EXPECT_EQ(off.mode(), online_mode::off);
  EXPECT_FALSE(off.decides(1));
  EXPECT_FALSE(off.decides(std::size_t{16} << 20));
}

TEST(OnlineSelector, RemembersTheRulesChoiceOfTheLastSizePerOperation) {
  online_selector selector{online_mode::off};
  EXPECT_EQ(selector.remembered_rule(tuned_op::broadcast, 64), tuning_choices::none);
  selector.remember_rule(tuned_op::broadcast, 64, 2);
  selector.remember_rule(tuned_op::allgather, 1 << 20, mpi);
  EXPECT_EQ(selector.remembered_rule(tuned_op::broadcast, 64), 2);
  EXPECT_EQ(selector.remembered_rule(tuned_op::allgather, 1 << 20), mpi);
  // Another size of the same bucket, and the same size of another operation, select again.
  EXPECT_EQ(selector.remembered_rule(tuned_op::broadcast, 65), tuning_choices::none);
  EXPECT_EQ(selector.remembered_rule(tuned_op::reduce, 64), tuning_choices::none);
  selector.remember_rule(tuned_op::broadcast, 4096, 1);
  EXPECT_EQ(selector.remembered_rule(tuned_op::broadcast, 64), tuning_choices::none);
  EXPECT_EQ(selector.remembered_rule(tuned_op::broadcast, 4096), 1);
}

TEST(OnlineSelector, ReportNamesWhyEachBucketTookItsAlgorithm) {
  online_selector selector(online_mode::on);
  selector.note(tuned_op::allreduce, 8, choice_source::forced, 1);
  selector.note(tuned_op::reduce, 1 << 20, choice_source::tuning_file, mpi);
  selector.note(tuned_op::allgather, 64, choice_source::builtin, 2);
  const std::vector<std::string> lines = selector.report();
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0], "reduce 1 MiB..2 MiB: mpi (tuning file)");
  EXPECT_EQ(lines[1], "allreduce 8 B..16 B: slots (forced by CACHECOMM_ALLREDUCE)");
  EXPECT_EQ(lines[2], "allgather 64 B..128 B: single-copy (built-in rule)");
}

}  // namespace
}  // namespace cachecomm::detail
