// Windows the preload serves: the registry, and the routing every one-sided call shares (which
// epoch is open, whether cachecomm or MPI does the access).
//
// A served window is MPI's own window from MPI_Win_allocate_shared on the program's communicator
// (one node), and a cachecomm::window over the same memory. MPI answers every query and does
// every call cachecomm does not accelerate (passive target, request-based operations, derived
// datatypes) on the same bytes; cachecomm serves fence and PSCW epochs and the accesses in them.
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "cachecomm/window.hpp"
#include "preload/call_stats.hpp"
#include "preload/runtime.hpp"

namespace cachecomm::detail::preload {

/// Under MPI_THREAD_MULTIPLE several threads may issue accesses on one window inside one epoch,
/// lock different targets at once, and use different windows at once; synchronization calls on
/// one window come from one thread at a time (MPI's rule). So the epoch fields, read by every
/// access, are atomic; the rest is written only at creation and freeing.
struct served_window {
  MPI_Win win = MPI_WIN_NULL;             ///< MPI's window: the handle the program holds
  MPI_Group comm_group = MPI_GROUP_NULL;  ///< for translating post/start groups to ranks
  /// Keeps the cachecomm communicator alive. At MPI_THREAD_MULTIPLE it is the window's own (over a
  /// duplicate of the program's communicator): a fence is a barrier on it, and other threads may
  /// meanwhile run collectives on the program's communicator or fence other windows made from it.
  std::shared_ptr<cachecomm::comm> owner;
  std::unique_ptr<cachecomm::window> window;
  std::atomic<bool> fence_epoch{false};   ///< a fence opened an epoch (not closed by NOSUCCEED)
  std::atomic<bool> access_epoch{false};  ///< between start and complete
  std::atomic<int> passive_locks{0};  ///< MPI_Win_lock and MPI_Win_lock_all epochs this rank holds
  /// One MPI lock epoch per target at a time in a process: threads doing accesses through MPI
  /// (through_mpi) on this window take turns.
  std::mutex mpi_access_mutex;
};

/// The served window behind `win`, or null (also inside cachecomm: its calls are MPI's). Safe
/// against other threads adding and freeing windows; the window this thread used last is found
/// without touching any shared line that is written.
[[nodiscard]] served_window* find_window(MPI_Win win);
/// Takes ownership; MPI_Finalize frees windows the program left.
void add_window(std::unique_ptr<served_window> record);
/// Forgets the record, then frees cachecomm's side and MPI's window (collective).
void free_window(served_window& record);
/// Frees what a record holds, for a window that was never added.
void destroy_window(served_window& record);

/// The served window of a one-sided call that cachecomm may serve (a fence or PSCW epoch is open
/// and no passive-target epoch), or null with the reason counted: then the call is MPI's.
[[nodiscard]] served_window* window_in_epoch(call_kind kind, MPI_Win win);

/// Runs `body` as cachecomm; a failure goes to the window's error handler.
template <typename Body>
int serve_window(call_kind kind, served_window& record, const char* call, Body&& body) {
  try {
    cachecomm_scope scope;
    body();
  } catch (...) {
    stats().count(kind, outcome::cachecomm_error);
    return report_window_failure(record.win, call);
  }
  stats().count_served(kind);
  return MPI_SUCCESS;
}

/// Waits (PSCW) until `target` has posted, so that an MPI access lands inside its exposure epoch.
int await_target_post(call_kind kind, served_window& record, int target);

/// An access cachecomm does not express, inside a cachecomm epoch: MPI does it under a shared lock
/// on the same window, after the target's post (PSCW); it is complete when this returns, so the
/// closing fence or complete orders it like cachecomm's own accesses.
template <typename Access>
int through_mpi(call_kind kind, served_window& record, int target, Access&& access) {
  if (const int code = await_target_post(kind, record, target); code != MPI_SUCCESS) return code;
  stats().count(kind, outcome::packed_through_mpi);
  const std::lock_guard<std::mutex> turn(record.mpi_access_mutex);
  int code = PMPI_Win_lock(MPI_LOCK_SHARED, target, 0, record.win);
  if (code != MPI_SUCCESS) return code;
  code = access();
  const int unlock = PMPI_Win_unlock(target, record.win);
  return code != MPI_SUCCESS ? code : unlock;
}

}  // namespace cachecomm::detail::preload
