// Barrier algorithms (all from the collectives-on-MIC paper, in shared memory).
#pragma once

#include <string_view>
#include <vector>

namespace cachecomm {

enum class barrier_algorithm {
  automatic,      ///< chosen by rank count and oversubscription (see `cachecomm-info`)
  central_byte,   ///< Centralized-I: one byte flag per rank, set by the rank, reset by the root
  central_line,   ///< Centralized-II: one cache line per rank, released by the root
  dissemination,  ///< ceil(log2 P) rounds of pairwise signals, no root
  tree,           ///< k-ary combining tree (k = CACHECOMM_TREE_DEGREE)
  tournament,     ///< pairwise rounds up to the root, release down a k-ary tree
  binomial,       ///< binomial spanning tree (BST)
  counter,  ///< one shared counter: every rank adds one, the last to arrive releases all (no root)
};

[[nodiscard]] std::string_view to_string(barrier_algorithm algorithm);
/// Parses the names `to_string` prints ("auto", "central-byte", ...); throws invalid_argument.
[[nodiscard]] barrier_algorithm parse_barrier_algorithm(std::string_view text);
/// Every concrete algorithm (not `automatic`), in a stable order.
[[nodiscard]] const std::vector<barrier_algorithm>& all_barrier_algorithms();

}  // namespace cachecomm
