// The tuner's choice from one size's medians: robust over hot and cold buffers, the built-in
// rules kept within a tolerance, and the system MPI's call only where it is clearly faster.
#include <gtest/gtest.h>

#include <string>

#include "tune/tuning_choice.hpp"

namespace cachecomm::bench {
namespace {

detail::tuning_entry entry_of(std::vector<std::pair<std::string, double>> hot,
                              std::vector<std::pair<std::string, double>> cold) {
  detail::tuning_entry entry;
  entry.bytes = 65536;
  entry.hot_us = std::move(hot);
  entry.cold_us = std::move(cold);
  return entry;
}

TEST(TuningChoice, TheRobustChoiceGivesNeitherBufferModeAway) {
  // central is fastest hot but 2x behind cold; ring is 1.1x behind in both.
  const auto entry = entry_of({{"central", 1.0}, {"ring", 1.1}, {"mpi", 3.0}},
                              {{"central", 4.0}, {"ring", 2.2}, {"mpi", 2.0}});
  EXPECT_EQ(robust_choice(entry), "ring");
}

TEST(TuningChoice, TheBuiltInRulesStayWithinTheTolerance) {
  const auto entry = entry_of({{"central", 1.04}, {"ring", 1.0}}, {});
  EXPECT_EQ(choice_keeping_built_in(entry, "central", keep_built_in_tolerance), "central");
  EXPECT_EQ(choice_keeping_built_in(entry, "central", 1.0), "ring");
}

TEST(TuningChoice, TheSystemMpiNeedsItsMarginOverCachecommsFastest) {
  // 20 % faster than central in both modes: within the margin, central is kept.
  const auto close = entry_of({{"central", 1.2}, {"ring", 1.5}, {"mpi", 1.0}},
                              {{"central", 2.4}, {"ring", 3.0}, {"mpi", 2.0}});
  EXPECT_EQ(robust_choice(close), "mpi");
  EXPECT_EQ(choice_preferring_own(close, "mpi", system_mpi_margin), "central");
  // 1.5x faster: the system MPI's call.
  const auto clear = entry_of({{"central", 1.5}, {"mpi", 1.0}}, {{"central", 3.0}, {"mpi", 2.0}});
  EXPECT_EQ(choice_preferring_own(clear, "mpi", system_mpi_margin), "mpi");
  // Another choice is left alone, and so is the MPI's call where nothing else was measured.
  EXPECT_EQ(choice_preferring_own(close, "ring", system_mpi_margin), "ring");
  EXPECT_EQ(choice_preferring_own(entry_of({{"mpi", 1.0}}, {}), "mpi", system_mpi_margin), "mpi");
}

TEST(TuningChoice, ATableKeepsCachecommsAlgorithmWhereTheSystemMpiIsOnlyALittleFaster) {
  json rows = json::array();
  auto row = [&](const char* impl, const char* algorithm, std::size_t bytes, double median) {
    rows.push_back({{"op", "allgather"},
                    {"impl", impl},
                    {"algorithm", algorithm},
                    {"bytes", bytes},
                    {"median_us", median},
                    {"buffers", "hot"},
                    {"timing", "per-call"}});
  };
  row("cachecomm", "auto:mpi", 65536, 4.0);
  row("cachecomm", "central", 65536, 4.6);
  row("mpi", "default", 65536, 4.0);
  row("cachecomm", "central", 1048576, 90.0);
  row("mpi", "default", 1048576, 60.0);
  const detail::tuning_table table = table_from_rows(rows, detail::tuning_key{}, "test");
  const auto& allgather = table.entries[static_cast<std::size_t>(detail::tuned_op::allgather)];
  ASSERT_EQ(allgather.size(), 2U);
  EXPECT_EQ(allgather[0].choice, "central");  // 1.15x: within the margin, rules or not
  EXPECT_EQ(allgather[1].choice, "mpi");      // 1.5x
}

}  // namespace
}  // namespace cachecomm::bench
