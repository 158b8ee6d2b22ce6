// The tuning file (round trip, corrupt, partial, mismatched) and how its choices enter the pure
// selection functions (a forced choice still wins; the system MPI only on one node).
#include <gtest/gtest.h>

#include <string>

#include "coll/selection.hpp"
#include "coll/tuning_table.hpp"

namespace {

using namespace cachecomm::detail;
using cachecomm::allgather_algorithm;
using cachecomm::allgatherv_algorithm;
using cachecomm::barrier_algorithm;
using cachecomm::broadcast_algorithm;
using cachecomm::gather_algorithm;
using cachecomm::reduce_algorithm;

tuning_key sample_key() {
  return {"AMD EPYC", 2, "L1d 32K, L2 1M, L3 32M", 2, false, "Open MPI 4.1.4"};
}

/// A table with two measured sizes per operation: `small` up to 512 B and `large` from 32 KiB.
tuning_table sample_table(const char* small_bcast, const char* large_bcast) {
  tuning_table table;
  table.key = sample_key();
  table.created = "2026-11-24T06:00:00Z";
  table.entries[static_cast<std::size_t>(tuned_op::barrier)] = {
      {0, "dissemination", {{"mpi", 0.2}, {"dissemination", 0.05}}, {}}};
  table.entries[static_cast<std::size_t>(tuned_op::broadcast)] = {
      {512, small_bcast, {{"mpi", 0.5}, {"slots", 0.1}}, {{"mpi", 0.6}, {"slots", 0.2}}},
      {32768, large_bcast, {{"mpi", 3.0}, {"central", 4.0}}, {{"mpi", 5.0}, {"central", 6.5}}}};
  table.entries[static_cast<std::size_t>(tuned_op::reduce)] = {{8, "slots", {}, {}},
                                                               {1 << 20, "mpi", {}, {}}};
  table.entries[static_cast<std::size_t>(tuned_op::allreduce)] = {
      {8, "slots", {}, {}}, {1 << 20, "reduce-scatter", {}, {}}};
  table.entries[static_cast<std::size_t>(tuned_op::allgather)] = {{8, "central", {}, {}},
                                                                  {1 << 20, "mpi", {}, {}}};
  return table;
}

TEST(tuning_file, round_trip_keeps_key_choices_and_times) {
  const std::string text = tuning_file_text({sample_table("slots", "mpi")});
  const auto tables = parse_tuning_file(text);
  ASSERT_EQ(tables.size(), 1U);
  EXPECT_EQ(tables[0].key, sample_key());
  EXPECT_EQ(tables[0].created, "2026-11-24T06:00:00Z");
  const auto& bcast = tables[0].entries[static_cast<std::size_t>(tuned_op::broadcast)];
  ASSERT_EQ(bcast.size(), 2U);
  EXPECT_EQ(bcast[1].bytes, 32768U);
  EXPECT_EQ(bcast[1].choice, "mpi");
  ASSERT_EQ(bcast[1].cold_us.size(), 2U);
  EXPECT_DOUBLE_EQ(bcast[1].cold_us[1].second, 6.5);
  // Written again, the text is the same (nothing lost or reordered).
  EXPECT_EQ(tuning_file_text(tables), text);
}

TEST(tuning_file, buckets_take_the_nearest_measured_size) {
  const tuning_choices choices = choices_of(sample_table("slots", "central"));
  const auto slots = static_cast<std::int8_t>(broadcast_algorithm::slots);
  const auto central = static_cast<std::int8_t>(broadcast_algorithm::central);
  EXPECT_EQ(choices.at(tuned_op::broadcast, 1), slots);           // below the smallest size
  EXPECT_EQ(choices.at(tuned_op::broadcast, 512), slots);         // measured
  EXPECT_EQ(choices.at(tuned_op::broadcast, 4095), slots);        // 2^11: 2 from 2^9, 4 from 2^15
  EXPECT_EQ(choices.at(tuned_op::broadcast, 8192), central);      // 2^13: 4 from 2^9, 2 from 2^15
  EXPECT_EQ(choices.at(tuned_op::broadcast, 1U << 30), central);  // above the largest
  EXPECT_EQ(choices.at(tuned_op::reduce, 4U << 20), tuning_choices::system_mpi);
  EXPECT_EQ(choices.at(tuned_op::barrier, 0),
            static_cast<std::int8_t>(barrier_algorithm::dissemination));
  EXPECT_FALSE(choices.empty());
  EXPECT_TRUE(tuning_choices{}.empty());
}

void expect_rejected(const std::string& text, const std::string& names) {
  try {
    (void)parse_tuning_file(text);
    ADD_FAILURE() << "accepted: " << text.substr(0, 80);
  } catch (const tuning_file_error& failure) {
    EXPECT_NE(std::string(failure.what()).find(names), std::string::npos) << failure.what();
  }
}

TEST(tuning_file, corrupt_files_are_rejected_with_the_reason) {
  const std::string good = tuning_file_text({sample_table("slots", "central")});
  expect_rejected("", "not JSON");
  expect_rejected(good.substr(0, good.size() / 2), "not JSON");  // cut off while written
  expect_rejected("[1, 2]", "format");
  std::string future = good;
  future.replace(future.find("\"format\": 1"), 11, "\"format\": 9");
  expect_rejected(future, "format 9");
  std::string unknown = good;
  unknown.replace(unknown.find("\"central\""), 9, "\"quantum\"");
  expect_rejected(unknown, "unknown bcast algorithm 'quantum'");
  std::string no_key = good;
  no_key.replace(no_key.find("\"ranks_per_node\""), 16, "\"ranks\"");
  expect_rejected(no_key, "missing field 'ranks_per_node'");
}

TEST(tuning_file, partial_files_are_rejected) {
  tuning_table partial = sample_table("slots", "central");
  partial.entries[static_cast<std::size_t>(tuned_op::allgather)].clear();
  expect_rejected(tuning_file_text({partial}), "allgather: no measured sizes");
  std::string missing = tuning_file_text({sample_table("slots", "central")});
  missing.replace(missing.find("\"allgather\""), 11, "\"gathering\"");
  expect_rejected(missing, "missing field 'allgather'");
}

TEST(tuning_file, block_collectives_are_optional_and_round_trip) {
  // A file without them (written before they were tuned) is complete: the built-in rules decide.
  const std::string older = tuning_file_text({sample_table("slots", "central")});
  EXPECT_EQ(older.find("\"gather\""), std::string::npos);
  const tuning_choices none = choices_of(parse_tuning_file(older).at(0));
  for (const tuned_op op :
       {tuned_op::gather, tuned_op::scatter, tuned_op::alltoall, tuned_op::allgatherv})
    EXPECT_EQ(none.at(op, 1 << 20), tuning_choices::none) << to_string(op);

  tuning_table table = sample_table("slots", "central");
  table.entries[static_cast<std::size_t>(tuned_op::gather)] = {{8, "central", {}, {}},
                                                               {1 << 20, "mpi", {}, {}}};
  table.entries[static_cast<std::size_t>(tuned_op::allgatherv)] = {
      {1 << 20, "single-copy", {}, {}}};
  const std::string text = tuning_file_text({table});
  const auto tables = parse_tuning_file(text);
  EXPECT_EQ(tuning_file_text(tables), text);
  const tuning_choices choices = choices_of(tables.at(0));
  EXPECT_EQ(choices.at(tuned_op::gather, 8), static_cast<std::int8_t>(gather_algorithm::central));
  EXPECT_EQ(choices.at(tuned_op::gather, 4 << 20), tuning_choices::system_mpi);
  EXPECT_EQ(choices.at(tuned_op::allgatherv, 8),
            static_cast<std::int8_t>(allgatherv_algorithm::single_copy));
  EXPECT_EQ(choices.at(tuned_op::scatter, 8), tuning_choices::none);

  std::string unknown = text;
  unknown.replace(unknown.find("\"central\"", unknown.find("\"gather\"")), 9, "\"quantum\"");
  expect_rejected(unknown, "unknown gather algorithm 'quantum'");
}

TEST(tuning_file, only_a_table_of_this_node_matches) {
  tuning_table four = sample_table("slots", "central");
  four.key.ranks_per_node = 4;
  tuning_table intel = sample_table("slots", "central");
  intel.key.cpu_model = "Intel Xeon";
  intel.key.mpi_library = "MPICH 4.0";
  const auto tables = parse_tuning_file(tuning_file_text({intel, four}));
  std::string why;
  EXPECT_EQ(matching_table(tables, sample_key(), why), nullptr);
  // The nearest table is named: one field differs.
  EXPECT_NE(why.find("ranks_per_node '2' (file: '4')"), std::string::npos) << why;
  tuning_key four_ranks = sample_key();
  four_ranks.ranks_per_node = 4;
  const tuning_table* found = matching_table(tables, four_ranks, why);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->key.ranks_per_node, 4);
}

selection_input pair_input(std::size_t bytes, const tuning_choices* measured) {
  selection_input input;
  input.bytes = bytes;
  input.node = {2, false, true, true};
  input.measured = measured;
  return input;
}

TEST(tuning_selection, measured_choice_beats_the_built_in_rules) {
  const tuning_choices choices = choices_of(sample_table("central", "tree"));
  const auto measured = select_broadcast(pair_input(8, &choices), broadcast_algorithm::automatic);
  EXPECT_EQ(measured.algorithm, broadcast_algorithm::central);
  EXPECT_EQ(measured.reason, measured_reason);
  EXPECT_EQ(select_broadcast(pair_input(8, nullptr), broadcast_algorithm::automatic).algorithm,
            broadcast_algorithm::slots);
  EXPECT_EQ(
      select_reduce(pair_input(1 << 22, &choices), reduce_algorithm::automatic, false).algorithm,
      reduce_algorithm::reduce_scatter);
  EXPECT_EQ(select_barrier(pair_input(0, &choices), barrier_algorithm::automatic).algorithm,
            barrier_algorithm::dissemination);
}

TEST(tuning_selection, forced_choice_beats_tuning) {
  const tuning_choices choices = choices_of(sample_table("central", "mpi"));
  const auto forced = select_broadcast(pair_input(8, &choices), broadcast_algorithm::tree);
  EXPECT_EQ(forced.algorithm, broadcast_algorithm::tree);
  EXPECT_EQ(forced.reason, "set by CACHECOMM_BCAST");
  EXPECT_EQ(select_barrier(pair_input(0, &choices), barrier_algorithm::binomial).algorithm,
            barrier_algorithm::binomial);
  // The measured MPI is not taken when the setting forces an algorithm.
  EXPECT_TRUE(system_mpi_reason(pair_input(1 << 20, &choices), tuned_op::broadcast, false).empty());
  EXPECT_FALSE(system_mpi_reason(pair_input(1 << 20, &choices), tuned_op::broadcast, true).empty());
}

TEST(tuning_selection, system_mpi_where_measured_on_one_node_only) {
  const tuning_choices choices = choices_of(sample_table("slots", "mpi"));
  selection_input input = pair_input(1 << 20, &choices);
  EXPECT_EQ(system_mpi_reason(input, tuned_op::reduce, true), measured_mpi_reason);
  EXPECT_EQ(system_mpi_reason(input, tuned_op::allgather, true), measured_mpi_reason);
  EXPECT_TRUE(system_mpi_reason(input, tuned_op::allreduce, true).empty());  // reduce-scatter
  // Where MPI is measured, the cachecomm algorithm used otherwise is the built-in one.
  EXPECT_EQ(select_reduce(input, reduce_algorithm::automatic, true).algorithm,
            reduce_algorithm::gather_reduce);
  input.node_count = 2;  // the node's table cannot decide for the whole comm
  EXPECT_TRUE(system_mpi_reason(input, tuned_op::reduce, true).empty());
  input.node_count = 1;
  input.bytes = std::size_t{1} << 32;  // MPI counts are ints
  EXPECT_TRUE(system_mpi_reason(input, tuned_op::reduce, true).empty());
  // Without a table: the built-in allgather rule only.
  EXPECT_EQ(system_mpi_reason(pair_input(1 << 20, nullptr), tuned_op::allgather, true),
            system_allgather_reason);
  EXPECT_TRUE(system_mpi_reason(pair_input(1 << 20, nullptr), tuned_op::broadcast, true).empty());
  // A table that measured a cachecomm algorithm overrides the built-in MPI rule.
  const tuning_choices central = choices_of(sample_table("slots", "central"));
  tuning_choices no_mpi_allgather = central;
  no_mpi_allgather.choice[static_cast<std::size_t>(tuned_op::allgather)].fill(
      static_cast<std::int8_t>(allgather_algorithm::single_copy));
  EXPECT_TRUE(
      system_mpi_reason(pair_input(1 << 20, &no_mpi_allgather), tuned_op::allgather, true).empty());
}

TEST(tuning_selection, many_rank_rules_name_the_node_they_were_measured_on) {
  selection_input four;
  four.bytes = 1 << 20;
  four.node = {4, false, true, true};
  const std::string measured_there = "on a 16-core Xeon";
  EXPECT_NE(std::string(select_broadcast(four, broadcast_algorithm::automatic).reason)
                .find(measured_there),
            std::string::npos);
  EXPECT_NE(std::string(select_reduce(four, reduce_algorithm::automatic, false).reason)
                .find(measured_there),
            std::string::npos);
  EXPECT_NE(std::string(select_allgather(four, allgather_algorithm::automatic).reason)
                .find(measured_there),
            std::string::npos);
  four.node.oversubscribed = true;  // measured on 2 cores, 4 and 8 ranks
  EXPECT_EQ(std::string(select_allgather(four, allgather_algorithm::automatic).reason)
                .find(measured_there),
            std::string::npos);
}

}  // namespace
