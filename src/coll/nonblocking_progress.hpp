// The pending nonblocking collectives of the process, shared by the C++ API (nonblocking.hpp) and
// the preload library (src/preload/nonblocking_requests.*, which adds only MPI's generalized
// requests around them): each operation is a state machine over its communicator's
// nonblocking_channel that only ever polls.
//
// Progress: a rank's data goes into shared memory when it starts the operation (unless all
// nonblocking_channel::ring slots are still in use by earlier operations), and its peers read it
// themselves, so a rank that computes between start and wait never holds its peers up. Only an
// operation (or a chunk of one larger than a slot) started while the ring was full waits for its
// owner's next progress pass (any test, wait, start or blocking collective of the process; in the
// preload also a blocking send, receive or probe) to be contributed.
//
// A pass advances every communicator's operations, not only the caller's: a rank waiting on one
// communicator may hold a contribution a peer waits for on another. The queues are guarded by one
// mutex; the finish callbacks run after it is released.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "coll/nonblocking_channel.hpp"

namespace cachecomm::detail {

/// One started operation, owned by its starter (a C++ request, a preload request) until it has
/// finished; the queues only point at it meanwhile.
struct nonblocking_operation {
  std::shared_ptr<nonblocking_channel> channel;  ///< outlives a communicator freed meanwhile
  std::uint32_t sequence = 0;  ///< its first chunk's number (nonblocking_channel::chunks)
  nonblocking_call call;
  std::uint32_t chunks = 1;       ///< set by start_operation
  std::uint32_t contributed = 0;  ///< chunks this rank has put in, in order
  std::uint32_t finished_chunks = 0;
  [[nodiscard]] bool fully_contributed() const { return contributed == chunks; }
  /// Set after the pass that finished it, just before `on_finished` runs.
  std::atomic<bool> finished{false};
  int error = 0;        ///< MPI_SUCCESS, or the error class when the ranks' calls differed
  std::string problem;  ///< what differed (error != MPI_SUCCESS)
  /// Runs once, after the pass that finished the operation, outside the queues' lock; it may
  /// delete the operation but must not run a progress pass. Null: nothing to do.
  void (*on_finished)(nonblocking_operation& operation, void* context) = nullptr;
  void* context = nullptr;
  /// The pass's list of operations it finished (their callbacks run after the lock is released):
  /// linked through the operations, so a pass allocates nothing and touches no thread-local.
  nonblocking_operation* next_finished = nullptr;
};

/// Numbers `operation` on its channel, queues it, and runs one progress pass (which contributes it
/// when its slot is free). The caller has run `channel->prepare(call)` first, where a failure can
/// still be the call's own error.
void start_operation(nonblocking_operation& operation);

/// One pass over every pending operation of the process: contributes and finishes what it can,
/// never waits. Returns how many finished.
int progress_operations();

/// Whether any operation of the process is pending (a relaxed read: the hot-path check).
[[nodiscard]] bool operations_pending();

/// Whether `channel` has operations not finished yet.
[[nodiscard]] bool channel_has_pending(const nonblocking_channel* channel);

/// Before a blocking collective on the channel's communicator: runs passes until every operation
/// pending on it has finished (MPI orders collectives per communicator; a peer may need this rank's
/// contribution to leave its own wait).
void settle_channel(const nonblocking_channel* channel);

/// Before a blocking collective, where the ranks may have started the channel's pending operations
/// on either side of it (the preload library: programs cross them): runs passes until each has
/// this rank's contribution in shared memory, so no peer waits on this rank for it; finishing them
/// is left to their completion calls.
void settle_contributions(const nonblocking_channel* channel);

/// Backs off one step in a waiting loop (round counts the steps taken): spin, yield, then sleep,
/// per the first pending channel's wait policy.
void progress_back_off(unsigned round);

/// Runs progress passes until `done()` is true, backing off between them.
template <typename Done>
void progress_until(Done&& done) {
  for (unsigned round = 0;; ++round) {
    progress_operations();
    if (done()) return;
    progress_back_off(round);
  }
}

}  // namespace cachecomm::detail
