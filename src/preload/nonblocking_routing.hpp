// Which path a nonblocking collective the preload intercepts takes (intercept_nonblocking*.cpp):
// the communicator's nonblocking channel, or PMPI with the reason counted. Every decision depends
// only on what MPI requires to match on all ranks (the communicator, its state after the same
// collectives, the bytes one rank puts in) so every rank takes the same path.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <optional>

#include "coll/nonblocking_channel.hpp"
#include "preload/call_stats.hpp"
#include "preload/runtime.hpp"

namespace cachecomm::detail::preload {

/// The channel to serve a nonblocking call with, or why not (`why`).
struct nonblocking_route {
  std::shared_ptr<nonblocking_channel> channel;
  cachecomm::comm* fast = nullptr;  ///< the communicator's cachecomm comm, once it has one
  comm_state* state = nullptr;
  outcome why = outcome::served;
};

/// The communicator's part of the decision: `fast` is set when its state could serve nonblocking
/// calls (single node, built, served at this thread level); `channel` stays empty until
/// admit_nonblocking. For calls whose bytes depend on this rank's place (a root's).
[[nodiscard]] nonblocking_route route_communicator(call_kind kind, MPI_Comm comm);

/// The message's part: `channel` set when `bytes` (what one rank puts in) fit the slot and the
/// channel is built; otherwise asks for the channel at the communicator's next blocking
/// collective, or says why not.
void admit_nonblocking(nonblocking_route& route, std::size_t bytes);

/// Both parts.
[[nodiscard]] inline nonblocking_route route_nonblocking(call_kind kind, MPI_Comm comm,
                                                         std::size_t bytes) {
  nonblocking_route route = route_communicator(kind, comm);
  if (route.fast != nullptr) admit_nonblocking(route, bytes);
  return route;
}

/// The bytes of `count` elements of `type` when the channel can carry them as they lie, or nothing
/// with the reason in `why`: a type that is not dense passes through (the data of a receive is
/// written when the operation finishes, and MPI lets the program free the datatype meanwhile).
[[nodiscard]] std::optional<std::size_t> dense_bytes(MPI_Datatype type, int count, outcome& why);

/// Starts `call` on the route's channel as a generalized request and counts it.
int serve_nonblocking(call_kind kind, MPI_Comm comm, const nonblocking_route& route,
                      const nonblocking_call& call, MPI_Request* request);

}  // namespace cachecomm::detail::preload
