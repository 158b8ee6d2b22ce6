// The adaptive store mode's decision logic, fed with made-up call times: when it probes, when it
// switches, and what it ignores (hysteresis, one slow call).
#include "coll/store_mode.hpp"

#include <gtest/gtest.h>

#include <cstddef>

namespace {

using cachecomm::detail::size_classes;
using cachecomm::detail::store_mode;
using cachecomm::detail::store_mode_chooser;
using cachecomm::detail::store_mode_choosers;
using cachecomm::detail::store_mode_policy;

// Runs `calls` calls whose time depends only on the mode used; returns the calls made in ordinary.
std::size_t run(store_mode_chooser& chooser, std::size_t calls, double streaming, double ordinary) {
  std::size_t in_ordinary = 0;
  for (std::size_t i = 0; i < calls; ++i) {
    const bool is_ordinary = chooser.mode() == store_mode::ordinary;
    in_ordinary += is_ordinary ? 1 : 0;
    chooser.record(is_ordinary ? ordinary : streaming);
  }
  return in_ordinary;
}

TEST(StoreMode, StartsOrdinaryUnlessToldOtherwise) {
  EXPECT_EQ(store_mode_chooser().mode(), store_mode::ordinary);
  store_mode_choosers choosers;
  EXPECT_EQ(choosers.of(1 << 20).settled(), store_mode::ordinary);
  EXPECT_EQ(choosers.of(100000).settled(), store_mode::ordinary);
}

TEST(StoreMode, StartsStreamingAndProbesOrdinaryAfterTheFirstInterval) {
  store_mode_chooser chooser(store_mode_policy{}, store_mode::streaming);
  const store_mode_policy policy;
  for (std::uint32_t i = 0; i < policy.first_probe_after; ++i) {
    EXPECT_EQ(chooser.mode(), store_mode::streaming) << "call " << i;
    chooser.record(100);
  }
  // The probe: probe_calls calls in the other mode.
  for (std::uint32_t i = 0; i < policy.probe_calls; ++i) {
    EXPECT_EQ(chooser.mode(), store_mode::ordinary) << "probe call " << i;
    EXPECT_EQ(chooser.settled(), store_mode::streaming);
    chooser.record(50);
  }
  EXPECT_EQ(chooser.settled(), store_mode::ordinary);
  EXPECT_EQ(chooser.mode(), store_mode::ordinary);
  EXPECT_EQ(chooser.switches(), 1U);
  EXPECT_EQ(chooser.probes(), 1U);
}

TEST(StoreMode, KeepsStreamingWhenOrdinaryIsNotClearlyFaster) {
  store_mode_chooser chooser(store_mode_policy{}, store_mode::streaming);
  // 90 is faster than 100, but not below the 80 % margin: no switch, and probes get rarer.
  run(chooser, 5000, 100, 90);
  EXPECT_EQ(chooser.settled(), store_mode::streaming);
  EXPECT_EQ(chooser.switches(), 0U);
  EXPECT_EQ(chooser.probe_interval(), store_mode_policy{}.longest_probe_interval);
}

TEST(StoreMode, ProbesOfASlowModeCostAtMostAboutOnePercentOfCalls) {
  store_mode_chooser chooser(store_mode_policy{}, store_mode::streaming);
  const std::size_t calls = 100000;
  const std::size_t in_ordinary = run(chooser, calls, 100, 500);
  EXPECT_EQ(chooser.settled(), store_mode::streaming);
  EXPECT_EQ(chooser.switches(), 0U);
  EXPECT_GT(in_ordinary, 0U);                // it did look
  EXPECT_LT(in_ordinary, calls / 100 + 20);  // intervals double up to 2048 calls
}

TEST(StoreMode, LeavesOrdinaryWhenItBecomesSlowAndComesBackWhenItRecovers) {
  store_mode_chooser chooser(store_mode_policy{}, store_mode::streaming);
  run(chooser, 100, 100, 50);
  ASSERT_EQ(chooser.settled(), store_mode::ordinary);
  // The placement changes: ordinary calls now take 4x streaming's. Two slow calls make the median
  // of the last three slow: back to streaming at once, without waiting for a probe.
  chooser.record(400);
  EXPECT_EQ(chooser.settled(), store_mode::ordinary) << "one slow call must not switch";
  chooser.record(400);
  EXPECT_EQ(chooser.settled(), store_mode::streaming);
  const std::uint32_t switches = chooser.switches();
  // It stays there while ordinary stays slow (probes find it slow)...
  run(chooser, 500, 100, 400);
  EXPECT_EQ(chooser.settled(), store_mode::streaming);
  EXPECT_EQ(chooser.switches(), switches);
  // ...and the next probe after the placement changes back finds ordinary fast again.
  run(chooser, 1100, 100, 50);
  EXPECT_EQ(chooser.settled(), store_mode::ordinary);
  EXPECT_EQ(chooser.switches(), switches + 1);
}

TEST(StoreMode, OneSlowCallInTheSettledModeChangesNothing) {
  store_mode_chooser chooser(store_mode_policy{}, store_mode::streaming);
  run(chooser, 100, 100, 50);
  ASSERT_EQ(chooser.settled(), store_mode::ordinary);
  for (int i = 0; i < 50; ++i) {
    chooser.record(i % 10 == 0 ? 5000 : 50);  // a preempted call now and then
  }
  EXPECT_EQ(chooser.settled(), store_mode::ordinary);
  EXPECT_EQ(chooser.switches(), 1U);
}

TEST(StoreMode, NoiseAroundTheMarginDoesNotFlipFlop) {
  store_mode_chooser chooser(store_mode_policy{}, store_mode::streaming);
  // Both modes within 10 % of each other, alternating: never 20 % apart in median.
  for (int i = 0; i < 20000; ++i) {
    const double jitter = i % 2 == 0 ? 1.0 : 1.1;
    chooser.record(chooser.mode() == store_mode::ordinary ? 95 * jitter : 100 * jitter);
  }
  EXPECT_EQ(chooser.switches(), 0U);
}

TEST(StoreMode, AStartInOrdinaryProbesStreaming) {
  store_mode_chooser chooser(store_mode_policy{}, store_mode::ordinary);
  run(chooser, 100, 50, 200);
  EXPECT_EQ(chooser.settled(), store_mode::streaming);
}

TEST(StoreMode, SizeClasses) {
  EXPECT_EQ(store_mode_choosers::class_of(16384), 0U);
  EXPECT_EQ(store_mode_choosers::class_of(65535), 0U);
  EXPECT_EQ(store_mode_choosers::class_of(65536), 1U);
  EXPECT_EQ(store_mode_choosers::class_of(262144), 2U);
  EXPECT_EQ(store_mode_choosers::class_of(1048575), 2U);
  EXPECT_EQ(store_mode_choosers::class_of(1048576), 3U);
  EXPECT_EQ(store_mode_choosers::class_of(1U << 30), 3U);
  EXPECT_EQ(store_mode_choosers::octave_of(1), 0U);
  EXPECT_EQ(store_mode_choosers::octave_of(32767), 0U);
  EXPECT_EQ(store_mode_choosers::octave_of(32768), 1U);
  EXPECT_EQ(store_mode_choosers::octave_of(65536), 2U);
  EXPECT_EQ(store_mode_choosers::octave_of((4U << 20) - 1), 7U);
  EXPECT_EQ(store_mode_choosers::octave_of(4U << 20), 8U);
  EXPECT_EQ(store_mode_choosers::octave_of(std::size_t{1} << 40), 8U);
  store_mode_choosers octaves("ring", store_mode::ordinary, {}, size_classes::octaves);
  octaves.of(40000).record(10);
  ASSERT_EQ(octaves.report().size(), 1U);
  EXPECT_NE(octaves.report()[0].find("ring, messages 32-64 KiB: ordinary after 1 calls"),
            std::string::npos)
      << octaves.report()[0];
  store_mode_choosers choosers("staging stores", store_mode::streaming);
  EXPECT_TRUE(choosers.report().empty());  // nothing used, nothing reported
  choosers.of(1 << 20).record(10);
  ASSERT_EQ(choosers.report().size(), 1U);
  EXPECT_NE(choosers.report()[0].find("from 1 MiB: streaming after 1 calls"), std::string::npos)
      << choosers.report()[0];
}

}  // namespace
