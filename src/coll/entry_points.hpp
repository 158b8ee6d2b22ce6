// What the public entry points of every collective (collectives.cpp, block_collectives.cpp,
// vector_collectives.cpp) share: the comm's engine, the automatic choice's input for one call, and
// the explain_* answer.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"
#include "coll/coll_engine.hpp"
#include "coll/nonblocking_state.hpp"
#include "coll/selection.hpp"
#include "core/comm_impl.hpp"

namespace cachecomm::detail {

/// The comm's collective engine (built on first use). Inline where it exists: every call asks two
/// or three times, and the out-of-line call cost 26 instructions each.
inline coll_engine& engine_of(comm& c) {
  if (const std::shared_ptr<coll_engine>& built = c.impl().collectives_state(); built) [[likely]]
    return *built;
  return coll_engine::of(c.impl());
}

/// The comm's engine for a blocking collective: first finishes the comm's pending nonblocking
/// operations and builds its nonblocking channel when a nonblocking call asked for one
/// (settle_nonblocking).
inline coll_engine& blocking_engine_of(comm& c) {
  if (c.impl().nonblocking()) settle_nonblocking(c.impl());
  return engine_of(c);
}

/// The input of the pure selection functions for a call of `bytes` on `c`: node shape, node count
/// and the node's tuning data.
[[nodiscard]] selection_input selection_for(comm& c, const coll_engine& engine, std::size_t bytes);

/// explain_* of gather, scatter, alltoall and allgatherv: the system MPI where the automatic choice
/// gives it the call, otherwise `rules` (the select_* answer), either way with what online
/// selection measured or will measure (as explain_broadcast...).
[[nodiscard]] algorithm_choice explain_automatic(comm& c, tuned_op op, std::size_t bytes,
                                                 algorithm_choice rules);

/// What the explain_* functions return for a selection: the algorithm's name and the reason.
template <typename Algorithm>
algorithm_choice explained(const selection<Algorithm>& chosen) {
  return {std::string(to_string(chosen.algorithm)), std::string(chosen.reason)};
}

}  // namespace cachecomm::detail
