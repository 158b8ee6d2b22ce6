// Counts of intercepted calls: served by cachecomm or passed to PMPI, and why.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace cachecomm::detail::preload {

enum class call_kind {
  barrier,
  bcast,
  reduce,
  allreduce,
  allgather,
  gather,
  scatter,
  alltoall,
  scan,
  exscan,
  reduce_scatter_block,
  reduce_scatter,  ///< MPI_Reduce_scatter (per-rank counts)
  allgatherv,
  gatherv,
  scatterv,
  alltoallv,
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
  ibarrier,  ///< the nonblocking collectives (nonblocking_requests.hpp)
  ibcast,
  ireduce,
  iallreduce,
  iallgather,
  ialltoall,
  igather,
  iscatter,
  ireduce_scatter_block,
  iscan,
  iexscan,
  iallgatherv,
  ireduce_scatter,
  count_
};

/// What happened to one call. Everything but `served` went to PMPI.
enum class outcome {
  served,
  disabled,         ///< CACHECOMM_PRELOAD=0 or CACHECOMM_PRELOAD_<OP>=0
  not_initialized,  ///< MPI was not initialized through this library
  intercommunicator,
  warming_up,  ///< fewer than CACHECOMM_PRELOAD_WARMUP collective calls on this communicator so far
  mpi_warming,       ///< among the first CACHECOMM_PRELOAD_MPI_WARMUP calls of this collective here
  derived_datatype,  ///< not a predefined, gap-free datatype
  unmapped_datatype,  ///< predefined but with no cachecomm reduction type (MPI_WCHAR, MPI_2INT...)
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
  mpi_faster,      ///< the automatic choice is the system MPI's own call (tuning file or rule)
  mpi_trial,       ///< online selection tries the system MPI's own call (a trial call)
  nonblocking_setup,  ///< started before the communicator's area for nonblocking calls existed on
                      ///< some rank (it is built with the state, in a blocking collective)
  beyond_slot,        ///< message larger than the nonblocking channel's ring of slots
  count_
};

/// The data collectives and the barrier (served at every thread level).
[[nodiscard]] constexpr bool is_collective(call_kind kind) {
  return kind == call_kind::barrier || kind == call_kind::bcast || kind == call_kind::reduce ||
         kind == call_kind::allreduce || kind == call_kind::allgather ||
         kind == call_kind::gather || kind == call_kind::scatter || kind == call_kind::alltoall ||
         kind == call_kind::scan || kind == call_kind::exscan ||
         kind == call_kind::reduce_scatter_block || kind == call_kind::reduce_scatter ||
         kind == call_kind::allgatherv || kind == call_kind::gatherv ||
         kind == call_kind::scatterv || kind == call_kind::alltoallv;
}

[[nodiscard]] std::string_view mpi_name(call_kind kind);
[[nodiscard]] std::string_view to_string(outcome reason);

using call_table = std::array<std::array<long long, static_cast<std::size_t>(outcome::count_)>,
                              static_cast<std::size_t>(call_kind::count_)>;

/// Process-wide counters. Each thread counts in a table of its own (no shared line is written on
/// the hot path, whatever the thread level); the tables are summed at the end.
class call_stats {
 public:
  void count(call_kind kind, outcome result) {
    bump(own()[static_cast<std::size_t>(kind)][static_cast<std::size_t>(result)]);
  }
  void count_served(call_kind kind) { count(kind, outcome::served); }
  /// Every thread's counts summed (threads that counted may still run: their counts so far).
  [[nodiscard]] call_table total() const;

 private:
  // Only the owning thread writes its table; relaxed atomics let the summing thread read it.
  static void bump(long long& counter) {
    __atomic_store_n(&counter, __atomic_load_n(&counter, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
  }
  call_table& own() {
    // Initial-exec, as every hot thread_local of the preload: the library is loaded with the
    // program (LD_PRELOAD or linked), so its TLS is static and an access costs no __tls_get_addr
    // call (general-dynamic, the default for shared objects, paid one on every served call).
    thread_local call_table* mine __attribute__((tls_model("initial-exec"))) = nullptr;
    if (mine == nullptr) mine = &add_table();
    return *mine;
  }
  call_table& add_table();

  mutable std::mutex m_tables_mutex;
  // Tables outlive their threads: a thread that counted and ended still counts in the summary.
  std::vector<std::unique_ptr<call_table>> m_tables;
};

/// How many communicator states this rank built, took from a freed communicator of the same
/// group (state_pool.hpp) and freed.
struct state_counts {
  long long built = 0;
  long long reused = 0;
  long long freed = 0;
};

/// Sums every rank's counters to rank 0 of MPI_COMM_WORLD (through PMPI), which prints them to
/// stderr.
void print_summary(const call_stats& stats, state_counts states, int thread_level);

}  // namespace cachecomm::detail::preload
