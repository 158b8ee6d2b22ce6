// Counts of intercepted calls: served by cachecomm or passed to PMPI, and why.
#pragma once

#include <array>
#include <string_view>

namespace cachecomm::detail::preload {

enum class call_kind {
  barrier,
  bcast,
  reduce,
  allreduce,
  allgather,
  win_allocate,
  win_fence,
  win_pscw,
  win_put,
  win_get,
  win_accumulate,
  win_free,
  win_get_accumulate,
  win_fetch_and_op,
  win_compare_and_swap,
  win_passive,  ///< MPI_Win_lock/unlock/lock_all/unlock_all: always MPI's, tracked on served
                ///< windows
  comm_dup,
  comm_split,
  comm_split_type,
  comm_create,
  comm_free,
  count_
};

/// What happened to one call. Everything but `served` went to PMPI.
enum class outcome {
  served,
  disabled,         ///< CACHECOMM_PRELOAD=0 or CACHECOMM_PRELOAD_<OP>=0
  thread_level,     ///< MPI initialized above MPI_THREAD_FUNNELED
  not_initialized,  ///< MPI was not initialized through this library
  intercommunicator,
  warming_up,  ///< fewer than CACHECOMM_PRELOAD_WARMUP collective calls on this communicator so far
  derived_datatype,   ///< not a predefined, gap-free datatype
  unmapped_datatype,  ///< predefined but with no cachecomm reduction type (MPI_CHAR, MPI_2INT...)
  user_op,            ///< user-defined operation (commutative or not)
  unmapped_op,        ///< predefined operation cachecomm does not reduce with (MPI_MAXLOC...)
  unsupported_pair,   ///< operation not defined on the type in cachecomm (MPI_LAND on a float...)
  empty,              ///< zero elements
  invalid_argument,   ///< left to MPI so that it reports the error exactly as it would
  state_failed,       ///< cachecomm could not set up this communicator (reported once)
  cachecomm_error,    ///< served, but cachecomm failed: reported through the error handler
  communicator_management,  ///< always MPI's; the new communicator gets cachecomm state lazily
  mpi_window,               ///< the window is MPI's (not allocated through cachecomm)
  outside_epoch,       ///< no fence or PSCW epoch open: a passive-target (lock) access, or an error
  packed_through_mpi,  ///< cachecomm window, but a derived type or an unmapped operation: done by
                       ///< MPI under a lock
  multi_node,          ///< the communicator spans nodes: windows stay MPI's
  needs_mpi_progress,  ///< MPICH: passive-target RMA needs the target inside MPI; windows stay
                       ///< MPI's
  no_mpi_window,   ///< MPI gives no shared memory for the window (MPI_Win_allocate_shared failed)
  passive_target,  ///< inside a passive-target epoch (MPI_Win_lock/lock_all): MPI's
  one_rank,        ///< a window of one rank: nothing to accelerate, MPI's own window
  count_
};

[[nodiscard]] std::string_view mpi_name(call_kind kind);
[[nodiscard]] std::string_view to_string(outcome reason);

using call_table = std::array<std::array<long long, static_cast<std::size_t>(outcome::count_)>,
                              static_cast<std::size_t>(call_kind::count_)>;

/// Process-wide counters (calls happen at most FUNNELED when anything is served).
class call_stats {
 public:
  // Atomic because above MPI_THREAD_FUNNELED several threads may pass calls through at once.
  void count(call_kind kind, outcome result) {
    __atomic_fetch_add(&m_table[static_cast<std::size_t>(kind)][static_cast<std::size_t>(result)],
                       1, __ATOMIC_RELAXED);
  }
  /// Only cachecomm-served calls, which happen at most at MPI_THREAD_FUNNELED: no atomic needed.
  void count_served(call_kind kind) { ++m_table[static_cast<std::size_t>(kind)][0]; }
  [[nodiscard]] const call_table& table() const { return m_table; }

 private:
  call_table m_table{};
};

/// Sums every rank's counters to rank 0 of MPI_COMM_WORLD (through PMPI), which prints them to
/// stderr.
void print_summary(const call_stats& stats, long long states_built, long long states_freed);

}  // namespace cachecomm::detail::preload
