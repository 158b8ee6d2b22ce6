// The barrier of a comm: node-local algorithms (node_barrier) over the control segment, chosen by
// select_barrier, composed across nodes through the leaders. Owned here, not by core: core keeps
// the state as an opaque control_state.
#pragma once

#include <string_view>

#include "cachecomm/barrier.hpp"

namespace cachecomm::detail {

class comm_impl;
struct node_tuning;

/// The comm's tuning file choices, loaded when the comm was built (the same on every node rank).
[[nodiscard]] const node_tuning& tuning_of(comm_impl& impl);
/// Why the comm's automatic barrier is the system MPI's MPI_Barrier, or empty.
[[nodiscard]] std::string_view system_barrier_reason(comm_impl& impl);

/// Gather on the node, leaders synchronize over MPI, release on the node. `automatic`: the
/// comm's default (CACHECOMM_BARRIER or the automatic choice).
void node_aware_barrier(comm_impl& impl,
                        barrier_algorithm algorithm = barrier_algorithm::automatic);

}  // namespace cachecomm::detail
