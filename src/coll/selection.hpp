// The automatic choice of every collective as pure functions of a plain description of the call
// and the node: no engine, no MPI. tests/unit/selection_test.cpp pins every rule's boundary.
//
// Measured selection (issue 12) plugs in here: a tuning table or online measurements become one
// more member of `selection_input` that the rules consult before the fixed thresholds below, and
// the system MPI becomes one more candidate id of each collective's registry. The callers
// (collectives.cpp, cachecomm-info, the benchmark) already go through these functions only.
#pragma once

#include <cstddef>
#include <string_view>

#include "cachecomm/barrier.hpp"
#include "cachecomm/collectives.hpp"
#include "coll/algorithm_registry.hpp"

namespace cachecomm::detail {

/// Every threshold of the automatic choice, in one place (the measurements behind each are in
/// selection.cpp, next to the rule that uses it).
namespace thresholds {
/// Payload of one 4 KiB slot: messages up to this size go through slots (coll_engine checks that
/// its layout agrees).
inline constexpr std::size_t slot_message_bytes = 4096 - 16;
/// Up to this many ranks per node one level of flags beats a tree (barrier, small broadcast).
inline constexpr int flat_max_ranks = 8;
/// Single-copy broadcast from this size (2 ranks per node on their own cores).
inline constexpr std::size_t single_copy_broadcast_min_bytes = 128U << 10;
/// Single-copy allgather from this block size (2 ranks per node on their own cores).
inline constexpr std::size_t single_copy_allgather_min_bytes = 64U << 10;
/// The system MPI's own allgather from this block size (2 ranks on their own cores, one node).
inline constexpr std::size_t system_allgather_min_bytes = 1U << 20;
/// Oversubscribed rooted reduce through slots up to this size.
inline constexpr std::size_t oversubscribed_slot_reduce_max_bytes = 128U << 10;
}  // namespace thresholds

/// Whether the caller's buffers are in this core's cache. Today's rules hold for both (they were
/// measured both ways); a measured selection may tell them apart.
enum class buffer_state { unknown, hot, cold };

struct selection_input {
  std::size_t bytes = 0;  ///< message bytes (allgather: one rank's block)
  int node_count = 1;     ///< nodes the communicator spans
  node_shape node;        ///< ranks per node, oversubscription, single-copy support
  buffer_state buffer = buffer_state::unknown;
};

template <typename Algorithm>
struct selection {
  Algorithm algorithm;
  std::string_view reason;
};

/// `requested` is the setting's value (CACHECOMM_BCAST...); anything but `automatic` wins.
[[nodiscard]] selection<broadcast_algorithm> select_broadcast(const selection_input& input,
                                                              broadcast_algorithm requested);
/// `rooted`: reduce (CACHECOMM_REDUCE) rather than allreduce (CACHECOMM_ALLREDUCE).
[[nodiscard]] selection<reduce_algorithm> select_reduce(const selection_input& input,
                                                        reduce_algorithm requested, bool rooted);
[[nodiscard]] selection<allgather_algorithm> select_allgather(const selection_input& input,
                                                              allgather_algorithm requested);
/// Whether the automatic allgather hands the call to the system MPI's own MPI_Allgather (the one
/// built-in case where MPI is the candidate; a measured selection generalizes it).
[[nodiscard]] bool system_allgather_preferred(const selection_input& input,
                                              allgather_algorithm requested);
inline constexpr std::string_view system_allgather_reason =
    "blocks from 1 MiB, 2 ranks on their own cores: the system MPI's own allgather (its "
    "cross-memory attach was faster than cachecomm's single copy there)";
/// The node phase of the barrier (`bytes` is not read).
[[nodiscard]] selection<barrier_algorithm> select_barrier(const selection_input& input,
                                                          barrier_algorithm requested);

}  // namespace cachecomm::detail
