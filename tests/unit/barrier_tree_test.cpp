#include <gtest/gtest.h>

#include <algorithm>

#include "coll/algorithm_registry.hpp"
#include "coll/node_barrier.hpp"

using cachecomm::barrier_algorithm;
using cachecomm::detail::make_barrier_tree;

namespace {

// Every rank but the root has exactly one gather parent and one releaser, each listing it as a
// child, and both trees reach every rank from the root.
void check_consistent(barrier_algorithm algorithm, int size, int degree) {
  std::vector<int> gathered_by(static_cast<std::size_t>(size), -1);
  std::vector<int> released_by(static_cast<std::size_t>(size), -1);
  for (int rank = 0; rank < size; ++rank) {
    auto tree = make_barrier_tree(algorithm, size, rank, degree);
    for (int child : tree.gather_children) {
      ASSERT_GT(child, 0);
      ASSERT_LT(child, size);
      ASSERT_EQ(gathered_by[static_cast<std::size_t>(child)], -1)
          << "two gather parents for " << child;
      gathered_by[static_cast<std::size_t>(child)] = rank;
    }
    for (int child : tree.release_children) {
      ASSERT_EQ(released_by[static_cast<std::size_t>(child)], -1) << "two releasers for " << child;
      released_by[static_cast<std::size_t>(child)] = rank;
    }
  }
  for (int rank = 1; rank < size; ++rank) {
    auto tree = make_barrier_tree(algorithm, size, rank, degree);
    EXPECT_EQ(gathered_by[static_cast<std::size_t>(rank)], tree.gather_parent)
        << cachecomm::to_string(algorithm) << " size " << size << " rank " << rank;
    EXPECT_EQ(released_by[static_cast<std::size_t>(rank)], tree.release_parent)
        << cachecomm::to_string(algorithm) << " size " << size << " rank " << rank;
    // Parents have lower ranks, so both trees are acyclic and rooted at 0.
    EXPECT_LT(tree.gather_parent, rank);
    EXPECT_LT(tree.release_parent, rank);
  }
}

}  // namespace

TEST(barrier_tree, every_tree_algorithm_covers_every_rank_once) {
  for (auto algorithm : {barrier_algorithm::central_line, barrier_algorithm::tree,
                         barrier_algorithm::tournament, barrier_algorithm::binomial}) {
    for (int size = 1; size <= 70; ++size) {
      for (int degree : {2, 3, 6}) check_consistent(algorithm, size, degree);
    }
  }
}

TEST(barrier_tree, shapes_match_the_paper) {
  // k-ary: children of r are k*r+1 .. k*r+k.
  auto kary = make_barrier_tree(barrier_algorithm::tree, 20, 1, 4);
  EXPECT_EQ(kary.gather_children, (std::vector<int>{5, 6, 7, 8}));
  // BST: children of 1 are 1+2 and 1+4 (and 1+8 when it exists).
  auto bst = make_barrier_tree(barrier_algorithm::binomial, 8, 1, 4);
  EXPECT_EQ(bst.gather_children, (std::vector<int>{3, 5}));
  auto bst_root = make_barrier_tree(barrier_algorithm::binomial, 8, 0, 4);
  EXPECT_EQ(bst_root.gather_children, (std::vector<int>{1, 2, 4}));
  // Tournament: rank 4 beats 5 in round 0 and 6 in round 1, then loses to 0.
  auto tournament = make_barrier_tree(barrier_algorithm::tournament, 8, 4, 2);
  EXPECT_EQ(tournament.gather_children, (std::vector<int>{5, 6}));
  EXPECT_EQ(tournament.gather_parent, 0);
}

namespace {

// Barrier entries carry their phases like the other collectives' entries carry their functions;
// only dissemination and the counter, whose gather already synchronizes everyone, skip their
// release on one node.
TEST(barrier_registry, every_entry_carries_both_phases) {
  for (const auto& entry : cachecomm::detail::barrier_registry()) {
    EXPECT_NE(entry.run.arrive, nullptr) << entry.name;
    EXPECT_NE(entry.run.depart, nullptr) << entry.name;
    EXPECT_EQ(entry.run.gather_is_complete, entry.id == barrier_algorithm::dissemination ||
                                                entry.id == barrier_algorithm::counter)
        << entry.name;
  }
}

}  // namespace
