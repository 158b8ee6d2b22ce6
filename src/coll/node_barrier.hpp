// Barrier algorithms among the ranks of one node, over flags in the node's control segment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cachecomm/barrier.hpp"
#include "shm/cache_line.hpp"
#include "sync/waiter.hpp"

namespace cachecomm::detail {

/// Parent and children of one rank in the trees an algorithm uses for its two phases.
struct barrier_tree {
  int gather_parent = -1;             ///< -1 at the root
  int release_parent = -1;            ///< who releases this rank; -1 at the root
  std::vector<int> gather_children;   ///< whose arrival this rank waits for
  std::vector<int> release_children;  ///< whom this rank releases
};

/// Tree shapes, exposed for unit tests.
[[nodiscard]] barrier_tree make_barrier_tree(barrier_algorithm algorithm, int size, int rank,
                                             int degree);

class node_barrier {
 public:
  [[nodiscard]] static std::size_t bytes_needed(int node_size);

  node_barrier() = default;
  /// `area` is `bytes_needed(node_size)` zeroed, cache-line-aligned bytes shared by the node.
  /// `flat_release`: the root releases every rank itself (used when oversubscribed, where each
  /// tree level costs a round of the scheduler before the ranks below it may run).
  node_barrier(std::byte* area, int node_size, int node_rank, int tree_degree, bool flat_release,
               waiter* wait);

  /// Gather phase: on the root (node rank 0) returns once every rank has arrived; elsewhere
  /// returns once this rank's arrival is visible to its parent.
  void arrive(barrier_algorithm algorithm);
  /// Release phase: returns once the root has released this rank.
  void depart(barrier_algorithm algorithm);
  /// Both phases (only the gather where it is already a complete barrier).
  void full(barrier_algorithm algorithm);

  // The algorithms' phases, called by their registry entries (algorithm_registry.cpp).
  void arrive_tree(barrier_algorithm algorithm);
  void depart_tree(barrier_algorithm algorithm);
  void arrive_central_byte();
  void depart_central_byte();
  void dissemination();
  /// No root to release from: a second round of signals orders everything after the gather.
  void dissemination_release();
  /// A complete barrier: every rank adds one to the node's counter, and the one that brings it to
  /// size x (its barriers so far) stores the release. Nobody waits for a particular rank, so when
  /// ranks outnumber cores no release waits for a root to be scheduled after the last arrival.
  /// Across nodes, a second one after the leaders' MPI barrier holds the node.
  void counter();

 private:
  [[nodiscard]] const barrier_tree& tree_for(barrier_algorithm algorithm) const;

  int m_size = 1;
  int m_rank = 0;
  int m_rounds = 0;  // dissemination rounds: ceil(log2 size)
  bool m_flat_release = false;
  waiter* m_wait = nullptr;
  // Number of node barriers this rank has begun; flags hold values derived from it so that
  // nothing ever needs resetting (rank r's flag: 2e-1 "arrived at e", 2e "released from e").
  std::uint32_t m_epoch = 0;
  slot_array<padded_flag> m_flags;
  slot_array<padded_flag> m_dissemination;  // [rank * rounds + round] = last epoch signalled
  // [0]: arrivals at counter barriers, size per barrier (wrapping); [1]: the last one released.
  slot_array<padded_flag> m_counter;
  std::uint32_t m_counter_epoch = 0;  // counter barriers this rank has begun
  std::uint8_t* m_bytes = nullptr;    // Centralized-I flags, padded to 8-byte groups
  std::vector<barrier_tree> m_trees;  // indexed by barrier_algorithm
};

}  // namespace cachecomm::detail
