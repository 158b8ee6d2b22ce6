// The C++ API's nonblocking collectives (include/cachecomm/nonblocking.hpp): a comm's state and one
// request's state. The shared-memory path is the library's shared layer (nonblocking_progress.hpp),
// the same the preload library serves MPI_I* with; the other path is the system MPI's own call.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>

#include "cachecomm/error.hpp"
#include "cachecomm/nonblocking.hpp"
#include "cachecomm/wait_policy.hpp"
#include "coll/nonblocking_channel.hpp"
#include "coll/nonblocking_progress.hpp"

namespace cachecomm::detail {

class comm_impl;

/// One comm's nonblocking state (comm_impl::nonblocking()), made by its first nonblocking call or
/// explain_nonblocking.
struct nonblocking_state {
  std::size_t slot_bytes = 0;  ///< nonblocking_slot_bytes (CACHECOMM_NONBLOCKING_BYTES), set once
  std::uint32_t slots = 0;     ///< CACHECOMM_NONBLOCKING_SLOTS (0: automatic), read once
  std::uint32_t ring = 4;      ///< the channel's ring (nonblocking_ring_slots), set once
  /// Built collectively (settle_nonblocking, prepare_nonblocking); shared: a pending request keeps
  /// it alive when the comm goes first.
  std::shared_ptr<nonblocking_channel> channel;
  bool wanted = false;      ///< a nonblocking call asked for the channel
  std::string unavailable;  ///< why building the channel failed (then every call takes MPI's path)
};

/// Before a blocking collective on `impl`'s comm (every rank is in the same one): finishes the
/// comm's pending shared-memory requests and builds the channel when a nonblocking call asked.
void settle_nonblocking(comm_impl& impl);

/// The blocking call's checks of this rank's own arguments (collectives.cpp), for a nonblocking
/// start of ibarrier, ibcast, ireduce, iallreduce or iallgather (the others check with
/// block_arguments.hpp): throws invalid_argument or unsupported_error naming the nonblocking call.
void check_nonblocking_arguments(comm& c, nonblocking_collective collective, const void* send,
                                 const void* receive, std::size_t count, datatype type,
                                 reduce_op op, int root);

/// What a request holds from start to completion.
struct request_state {
  const char* what = "";  ///< "iallreduce", ... for messages
  nonblocking_path path = nonblocking_path::none;
  std::string reason;
  wait_policy policy;                  ///< the comm's (timeout, back-off)
  bool reported = false;               ///< test/wait reported completion (the request is inactive)
  nonblocking_operation operation;     ///< shared_memory: queued in the shared layer until finished
  MPI_Request mpi = MPI_REQUEST_NULL;  ///< system_mpi
};

/// The MPI count of a system-MPI call, or unsupported_error above INT_MAX.
int nonblocking_mpi_count(std::size_t count, const char* what);

/// Chooses the path of a call of `bytes` (what explain_nonblocking says) and, on the shared-memory
/// path, starts `call` on the comm's channel. On the system-MPI path the caller starts MPI's call
/// into the state's `mpi` (start_nonblocking).
std::unique_ptr<request_state> begin_nonblocking(comm& c, nonblocking_collective collective,
                                                 std::size_t bytes, const nonblocking_call& call);

/// begin_nonblocking, then `mpi_start(MPI_Request&)` (returning an MPI error code) when the call
/// takes the system MPI's path.
template <typename MpiStart>
collective_request start_nonblocking(comm& c, nonblocking_collective collective, std::size_t bytes,
                                     const nonblocking_call& call, MpiStart&& mpi_start) {
  std::unique_ptr<request_state> state = begin_nonblocking(c, collective, bytes, call);
  if (state->path == nonblocking_path::system_mpi) {
    const int code = mpi_start(state->mpi);
    if (code != MPI_SUCCESS) throw mpi_error(state->what, code);
  }
  return collective_request(std::move(state));
}

}  // namespace cachecomm::detail
