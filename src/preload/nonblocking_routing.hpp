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
#include "preload/nonblocking_requests.hpp"
#include "preload/runtime.hpp"
#include "preload/type_layout.hpp"

namespace cachecomm::detail::preload {

/// The channel to serve a nonblocking call with, or why not (`why`).
struct nonblocking_route {
  std::shared_ptr<nonblocking_channel> channel;
  cachecomm::comm* fast = nullptr;  ///< the communicator's cachecomm comm, once it has one
  comm_state* state = nullptr;
  outcome why = outcome::served;
  long long index = 0;  ///< the call's number on its communicator (comm_state::nonblocking_calls)
  call_kind kind = call_kind::ibarrier;  ///< the call being routed
};

/// The communicator's part of the decision: `fast` is set when its state could serve nonblocking
/// calls (single node, built, served at this thread level); `channel` stays empty until
/// admit_nonblocking. For calls whose bytes depend on this rank's place (a root's).
[[nodiscard]] nonblocking_route route_communicator(call_kind kind, MPI_Comm comm);

/// The message's part: `channel` set when `bytes` (what one rank puts in: a block per rank where
/// `block_per_rank`, alltoall and reduce_scatter_block) fit the channel's ring and the channel is
/// built; otherwise asks for the channel at the communicator's next blocking collective, or says
/// why not.
void admit_nonblocking(nonblocking_route& route, std::size_t bytes, bool block_per_rank = false);

/// Both parts.
[[nodiscard]] inline nonblocking_route route_nonblocking(call_kind kind, MPI_Comm comm,
                                                         std::size_t bytes) {
  nonblocking_route route = route_communicator(kind, comm);
  if (route.fast != nullptr) admit_nonblocking(route, bytes);
  return route;
}

/// `count` elements of a datatype, one side of a call: the bytes of its signature (what MPI
/// requires to match across ranks) and how they lie. Whether a side is dense never changes the
/// path, only whether its data goes through a buffer of the request (nonblocking_staging).
struct typed_side {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::size_t count = 0;
  type_layout layout;
  [[nodiscard]] std::size_t bytes() const { return count * layout.size; }
  [[nodiscard]] bool dense() const { return layout.dense; }
  /// The side as data to pack at the start (from `buffer`) or to unpack at the finish (into it).
  [[nodiscard]] staged_data staged(const void* buffer) const {
    return {buffer, count, type, layout};
  }
  /// Block `index` of a buffer holding such sides one after another (a rank's place in the result
  /// of a gather, in place).
  [[nodiscard]] staged_data staged_block(const void* buffer, std::size_t index) const {
    const MPI_Aint at = static_cast<MPI_Aint>(index * count) * layout.extent;
    return {static_cast<const std::byte*>(buffer) + at, count, type, layout};
  }
};

/// The side of `count` elements of `type`, or nothing with the reason in `why` (an invalid handle
/// or count: MPI reports it).
[[nodiscard]] std::optional<typed_side> side_of(MPI_Datatype type, int count, outcome& why);

/// Stages the result of a call that receives every rank's block in rank order (an allgather, a
/// gather's root) when `received`, one block, is not dense: `ranks` blocks go to the request's
/// buffer and are unpacked into `recvbuf` at the finish; in place, this rank's block is packed
/// from its `place` in `recvbuf` into the same place of that buffer.
void stage_gathered_result(nonblocking_staging& staging, const typed_side& received, void* recvbuf,
                           std::size_t ranks, bool in_place, std::size_t place);

/// Starts `call` on the route's channel as a generalized request and counts it. `staging`: the
/// sides whose datatypes are not dense (null when every side is).
int serve_nonblocking(call_kind kind, MPI_Comm comm, const nonblocking_route& route,
                      const nonblocking_call& call, MPI_Request* request,
                      const nonblocking_staging* staging = nullptr);

}  // namespace cachecomm::detail::preload
