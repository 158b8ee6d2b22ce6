// Oversubscription from the ranks' affinity masks (topo/unit_placement.hpp): the union's size and
// whether each rank can have a processing unit of its own.
#include "topo/unit_placement.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

namespace cachecomm::detail {
namespace {

unit_mask units(std::initializer_list<std::size_t> list) {
  unit_mask mask;
  for (std::size_t unit : list) mask.add(unit);
  return mask;
}

TEST(unit_placement, ranks_on_units_of_their_own_fit) {
  const std::vector<unit_mask> masks = {units({0}), units({1}), units({2}), units({3})};
  const unit_placement placement = place_ranks(masks);
  EXPECT_EQ(placement.units, 4);
  EXPECT_TRUE(placement.own_unit_each);
}

TEST(unit_placement, unbound_ranks_fit_while_there_are_units_enough) {
  const unit_mask any = units({0, 1, 2, 3});
  EXPECT_TRUE(place_ranks(std::vector<unit_mask>(4, any)).own_unit_each);
  const unit_placement crowded = place_ranks(std::vector<unit_mask>(5, any));
  EXPECT_EQ(crowded.units, 4);
  EXPECT_FALSE(crowded.own_unit_each);
}

TEST(unit_placement, two_ranks_pinned_to_one_unit_do_not_fit_on_a_larger_machine) {
  // taskset -c 0 mpirun -np 2 on a 2-core machine: the union is one unit.
  const unit_placement pair = place_ranks(std::vector<unit_mask>{units({0}), units({0})});
  EXPECT_EQ(pair.units, 1);
  EXPECT_FALSE(pair.own_unit_each);
  // The union has a unit for each rank, but two ranks share their only one.
  const unit_placement shared =
      place_ranks(std::vector<unit_mask>{units({0}), units({0}), units({1, 2, 3}), units({1, 2})});
  EXPECT_EQ(shared.units, 4);
  EXPECT_FALSE(shared.own_unit_each);
}

TEST(unit_placement, a_rank_placed_first_moves_to_leave_a_unit_to_a_pinned_one) {
  // The first rank takes unit 0 at once; the second can only run there, so the first must move
  // to unit 1 (an augmenting path), and the third to unit 2.
  const std::vector<unit_mask> masks = {units({0, 1}), units({0}), units({1, 2})};
  EXPECT_TRUE(place_ranks(masks).own_unit_each);
  EXPECT_EQ(place_ranks(masks).units, 3);
}

TEST(unit_placement, units_past_the_first_word_count) {
  const std::vector<unit_mask> masks = {units({70}), units({1023}), units({64, 70})};
  const unit_placement placement = place_ranks(masks);
  EXPECT_EQ(placement.units, 3);
  EXPECT_TRUE(placement.own_unit_each);
}

TEST(unit_placement, an_unknown_mask_leaves_the_machine_count_to_decide) {
  const unit_placement placement = place_ranks(std::vector<unit_mask>{units({0}), unit_mask{}});
  EXPECT_EQ(placement.units, 0);
  EXPECT_TRUE(placement.own_unit_each);
}

TEST(unit_placement, this_process_has_a_mask) {
  const unit_mask mine = allowed_units();
  EXPECT_TRUE(mine.known());
}

}  // namespace
}  // namespace cachecomm::detail
