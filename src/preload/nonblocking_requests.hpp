// The nonblocking collectives the preload serves, as MPI requests: each is a generalized request
// (MPI_Grequest_start), so it can sit in any array next to MPI's own requests. Its operation lives
// in the library's shared layer (coll/nonblocking_progress.hpp: queues, progress passes, the
// channel's protocol); this file adds only the MPI glue. Every MPI completion call (MPI_Wait*,
// MPI_Test*) first runs a progress pass, which completes the generalized requests of the
// operations that finished, then hands the array to the system MPI.
//
// Progress: see nonblocking_progress.hpp (data goes in at the start; only an operation started
// while the ring was full waits for its owner's next MPI call to be contributed).
//
// Served at every thread level. The live requests are process-wide: at MPI_THREAD_MULTIPLE a lock
// guards them (threads start, complete and free requests at once, and MPI runs free_fn in
// whichever thread frees or completes one); the shared layer's queues have their own.
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>

#include "coll/nonblocking_channel.hpp"
#include "coll/nonblocking_progress.hpp"
#include "preload/call_stats.hpp"
#include "preload/nonblocking_staging.hpp"

namespace cachecomm::detail::preload {

struct comm_state;

/// Pending operations plus communicators waiting for their channel; zero on the hot path of every
/// blocking collective and completion call.
extern std::atomic<int> g_nonblocking_attention;
[[nodiscard]] inline bool nonblocking_needs_attention() {
  return g_nonblocking_attention.load(std::memory_order_relaxed) != 0;
}
/// Pending operations only: the completion calls go straight to MPI while there are none.
extern std::atomic<int> g_nonblocking_pending;
[[nodiscard]] inline bool nonblocking_pending() {
  return g_nonblocking_pending.load(std::memory_order_relaxed) != 0;
}

/// Starts a served operation on `channel`: returns the generalized request in `request`.
/// `staging`: null when every side is dense. Returns MPI_SUCCESS, the error of
/// MPI_Grequest_start, or a packing failure reported through `comm`'s error handler.
int start_nonblocking(call_kind kind, MPI_Comm comm,
                      const std::shared_ptr<nonblocking_channel>& channel,
                      const nonblocking_call& call, MPI_Request* request,
                      const nonblocking_staging* staging);

/// One pass over every pending operation: contributes and finishes what it can, never waits.
/// Returns how many finished.
int progress_nonblocking();

/// Runs progress passes until `done()` is true, backing off (spin, yield, sleep) per the
/// communicators' wait policy: the blocking completion calls.
template <typename Done>
void progress_until(Done&& done);

/// Before a blocking collective on `comm` (route_call): contributes the operations pending on it (a
/// peer may need this rank's data to leave its own wait). It does not wait for them to finish: a
/// program may start an operation on one rank before a blocking collective and on another after
/// it (mpi4py's fallback Comm.Iagree does; the system MPI lets the two pass each other).
void settle_before_blocking(MPI_Comm comm);

/// Whether some nonblocking collective may be served in this process (its switch on, MPI
/// initialized): otherwise no channel is ever built.
[[nodiscard]] bool nonblocking_may_serve();

/// Right after `state.fast` was built (a blocking collective, every rank in it): builds the
/// channel when the communicator could serve nonblocking calls, and agrees on the first call it
/// serves (comm_state::nonblocking_first). Collective over the communicator.
void prepare_channel(comm_state& state);

/// At MPI_Finalize: finishes every pending operation (freed requests included).
void drain_nonblocking();

/// Whether `request` is a live request of a served operation (MPI_Cancel refuses those).
[[nodiscard]] bool is_served_request(MPI_Request request);
/// Whether `request` is a served operation that has not finished yet.
[[nodiscard]] bool is_unfinished_served_request(MPI_Request request);

/// MPI_Cancel on a served request: reports the error (a collective request cannot be cancelled)
/// through the communicator's error handler and returns MPI_ERR_REQUEST; the operation goes on.
int refuse_cancel(MPI_Request request);

/// Backs off one step in a waiting loop (round counts the steps taken).
inline void back_off(unsigned round) {
  progress_back_off(round);
}

template <typename Done>
void progress_until(Done&& done) {
  for (unsigned round = 0;; ++round) {
    progress_nonblocking();
    if (done()) return;
    back_off(round);
  }
}

}  // namespace cachecomm::detail::preload
