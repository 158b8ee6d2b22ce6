// Freed communicators' states, kept for the next communicator of the same group.
//
// Building a communicator's state costs hundreds of microseconds (its own communicators, three
// shared segments, the single-copy probe), and a program that makes short-lived communicators
// (mpi4py's test suite; codes that duplicate or split one per phase) paid that for every one:
// dup, 10 allreduces of 8 B and free took 0.45 ms a round preloaded against 7-11 us plain (2
// ranks, docs/results/session22.md). A state depends only on its group (the world ranks, in rank
// order), never on the handle: its communicators are its own copies. So a freed communicator's
// state waits here, and the next communicator of that group to reach its warm-up takes it,
// online selection's decisions included, once every rank of the group agrees to (one allreduce
// on the new communicator: the ranks may have freed and built in different orders). At every
// thread level: a state proposed for one communicator is reserved until its agreement ends, so
// threads building communicators of one group at once never both take it.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "cachecomm/comm.hpp"
#include "coll/nonblocking_channel.hpp"

namespace cachecomm::detail::preload {

/// What a communicator's state is and what it needs to be reused.
struct reusable_state {
  std::vector<int> members;  ///< the group: world ranks in rank order (empty: never pooled)
  std::uint64_t token = 0;   ///< the same on every rank of the group, drawn when it was built
  std::shared_ptr<cachecomm::comm> fast;
  std::shared_ptr<nonblocking_channel> nonblocking;
};

/// The world ranks of `comm`'s members in its rank order; empty when one of them is not in
/// MPI_COMM_WORLD (spawned processes) or MPI fails.
[[nodiscard]] std::vector<int> world_members(MPI_Comm comm);

/// A token for a state just built: rank 0 of the state's own copy of the communicator draws it
/// and every rank receives it (collective over the state).
[[nodiscard]] std::uint64_t draw_token(const cachecomm::comm& fast);

/// Keeps `state` for reuse when nothing else holds it (no window, no pending nonblocking
/// operation); returns whether it did. The oldest states beyond a few are freed.
bool keep_for_reuse(reusable_state&& state);

/// Collective over `comm` (every rank in the call that builds its state): the kept state every
/// rank of `comm` agrees to take, or an empty one (then they build anew).
[[nodiscard]] reusable_state take_for(MPI_Comm comm, const std::vector<int>& members);

/// Frees every kept state (at MPI_Finalize, while MPI still works).
void free_kept_states();

}  // namespace cachecomm::detail::preload
