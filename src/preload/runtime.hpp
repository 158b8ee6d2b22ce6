// Process-wide state of the preload library: settings, the attribute key that hangs cachecomm state
// on each communicator, the re-entrancy guard, the counters.
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "cachecomm/comm.hpp"
#include "cachecomm/config.hpp"
#include "coll/nonblocking_channel.hpp"
#include "preload/call_stats.hpp"

namespace cachecomm::detail::preload {

/// Pending nonblocking operations (nonblocking_requests.cpp).
extern std::atomic<int> g_nonblocking_attention;

/// cachecomm state of one user communicator, cached on it as an attribute and deleted with it.
/// Only the thread running a collective on the communicator touches it (MPI forbids concurrent
/// collectives on one communicator), so it needs no lock.
struct comm_state {
  long long collective_calls = 0;  ///< intercepted collective calls so far (same on every rank)
  /// Per data collective, the calls still to pass to MPI while it warms up (settings.hpp,
  /// mpi_warmup); counted down on every rank alike.
  std::array<std::uint16_t, static_cast<std::size_t>(call_kind::count_)> mpi_warmup_left{};
  /// Built after the warm-up calls. Shared: a window made on the communicator keeps it alive (MPI
  /// lets a program free a communicator while windows made from it live on).
  std::shared_ptr<cachecomm::comm> fast;
  std::optional<outcome> unusable;  ///< why this communicator always passes through
  /// The nonblocking collectives' shared memory (nonblocking_channel.hpp): built with `fast`, in
  /// the same blocking collective on every rank (prepare_channel). Shared: a pending operation
  /// keeps it alive when the program frees the communicator.
  std::shared_ptr<nonblocking_channel> nonblocking;
  bool nonblocking_failed = false;  ///< building it failed: nonblocking calls pass through
  /// Nonblocking collective calls routed on this communicator so far: the k-th call is the same
  /// call on every rank, wherever the program put it between its blocking collectives.
  long long nonblocking_calls = 0;
  /// The first call the channel serves: the most calls any rank had made when it was built (a
  /// rank that started call k before the build sent it to MPI; every rank's call k goes there).
  long long nonblocking_first = 0;
  /// For reuse by the next communicator of this group once this one is freed (state_pool.hpp).
  std::vector<int> members;
  std::uint64_t token = 0;  ///< 0: never kept
  /// Communicators made from this one by blocking creation calls (build_child_state).
  long long children_made = 0;

  comm_state() = default;
  comm_state(const comm_state&) = delete;
  comm_state& operator=(const comm_state&) = delete;
  comm_state(comm_state&&) = delete;
  comm_state& operator=(comm_state&&) = delete;
};

/// True while this thread runs cachecomm code: the MPI calls cachecomm makes go straight to PMPI.
extern constinit thread_local bool g_inside_cachecomm __attribute__((tls_model("initial-exec")));
inline bool inside_cachecomm() {
  return g_inside_cachecomm;
}

/// Which calls may be served at all: written once at MPI_Init, read-only afterwards.
extern std::array<bool, static_cast<std::size_t>(call_kind::count_)> g_armed;
/// Bumped whenever a communicator's state is deleted: a thread's hot entry made before refers to
/// a state that may be gone (and its handle may now name another communicator).
extern std::atomic<std::uint64_t> g_states_generation;

/// The hot path of one thread: the communicator it served last and its cachecomm communicator.
/// Per thread, so threads serving different communicators never write a shared line; a global
/// (not behind a function) because a served barrier costs ~150 ns and every indirection shows.
/// Constant-initialized (constinit): Open MPI's MPI_COMM_NULL is the address of a library object,
/// which made every access from another file call the variable's TLS init function first; the
/// value-initialized handle (null in Open MPI, 0 in MPICH) names no communicator either.
struct hot_entry {
  MPI_Comm comm{};
  cachecomm::comm* fast = nullptr;
  std::uint64_t generation = 0;
  /// The communicator's comm_state::mpi_warmup_left while the MPI warm-up is on, else null.
  const std::uint16_t* mpi_warmup_left = nullptr;
};
extern constinit thread_local hot_entry g_hot __attribute__((tls_model("initial-exec")));

/// The cachecomm communicator serving `comm` when it is the one this thread served last, else
/// null (then the caller takes the full route through `fast_comm`).
inline cachecomm::comm* hot_comm(call_kind kind, MPI_Comm comm) {
  if (!g_armed[static_cast<std::size_t>(kind)] || g_hot.comm != comm || g_inside_cachecomm ||
      g_hot.generation != g_states_generation.load(std::memory_order_acquire) ||
      (g_hot.mpi_warmup_left != nullptr &&
       g_hot.mpi_warmup_left[static_cast<std::size_t>(kind)] != 0))
    return nullptr;
  return g_hot.fast;
}

/// Sets the guard for its lifetime (nests).
class cachecomm_scope {
 public:
  cachecomm_scope() : m_previous(g_inside_cachecomm) { g_inside_cachecomm = true; }
  ~cachecomm_scope() { g_inside_cachecomm = m_previous; }
  cachecomm_scope(const cachecomm_scope&) = delete;
  cachecomm_scope& operator=(const cachecomm_scope&) = delete;

 private:
  bool m_previous;
};

/// After PMPI_Init/PMPI_Init_thread succeeded: reads the settings, creates the attribute key,
/// then build_world_state().
void start(int provided_thread_level);
/// Run by start(): builds MPI_COMM_WORLD's state and nonblocking channel at once, where a
/// nonblocking collective may be served. MPI_Init is the one collective moment a program that
/// makes only nonblocking collectives on the world has (OSU's osu_ibarrier, a pipelined solver):
/// a start must stay local, so it cannot build the state, and without a blocking collective the
/// world's calls would all pass to MPI (warming-up).
void build_world_state();
/// After a blocking creation call on `parent` returned `child` (MPI_COMM_NULL on a rank outside
/// it), on every rank of `parent`: builds the child's state in that call, for the same reason as
/// the world's, for the first CACHECOMM_PRELOAD_EAGER_CHILDREN children of each parent, on one
/// node. Later children, and those made otherwise (MPI_Comm_idup, MPI_Comm_create_group), are
/// built lazily by their blocking collectives after the warm-up: a program that makes many
/// communicators and few collective calls on each pays no shared memory for them.
void build_child_state(MPI_Comm parent, MPI_Comm child, const char* call);
/// Before PMPI_Finalize: frees every cachecomm state, prints the summary when asked.
void stop();

call_stats& stats();

/// The thread level MPI provided.
[[nodiscard]] int thread_level();
/// The largest message served by a nonblocking collective on a communicator with `node_ranks`
/// ranks (CACHECOMM_PRELOAD_NONBLOCKING_BYTES, or automatic: coll/coll_settings.hpp).
[[nodiscard]] std::size_t nonblocking_slot_bytes(int node_ranks);
/// CACHECOMM_PRELOAD_NONBLOCKING_SLOTS (0: automatic, nonblocking_ring_slots).
[[nodiscard]] std::uint32_t nonblocking_slots_setting();
/// The ring of the nonblocking channel of a communicator with this topology.
[[nodiscard]] std::uint32_t nonblocking_ring(const node_topology& topology);
/// The largest call (what one rank puts in) the channel serves there: a whole ring of chunks
/// (coll/coll_settings.hpp, nonblocking_largest_call).
[[nodiscard]] std::size_t nonblocking_largest_call(const node_topology& topology,
                                                   bool block_per_rank);
/// The state hung on `comm` (made now if it has none), or null when `comm` is not a valid
/// communicator. Builds nothing and counts nothing.
[[nodiscard]] comm_state* state_for(MPI_Comm comm);

/// Whether `kind` may be served at all (library on, this operation on, thread level, initialized).
[[nodiscard]] std::optional<outcome> globally_blocked(call_kind kind);

/// For a collective call on `comm`: counts it, builds the state after the warm-up, and returns it
/// when cachecomm may serve the call. Otherwise returns null and sets `why_not`. When building the
/// state fails, the error went through the communicator's error handler: `error_code` is set and
/// the caller must return it. `skip_warmup`: build the state in this call (window allocation:
/// windows live long). `kind`: the collective, for the MPI's own warm-up (call_kind::count_: none).
[[nodiscard]] cachecomm::comm* fast_comm(MPI_Comm comm, outcome& why_not, int& error_code,
                                         bool skip_warmup = false,
                                         call_kind kind = call_kind::count_);
/// The shared owner of the state fast_comm returned for `comm` (null if none).
[[nodiscard]] std::shared_ptr<cachecomm::comm> shared_fast_comm(MPI_Comm comm);

/// The cachecomm communicator a window made on `comm` synchronizes on: the communicator's state
/// (shared_fast_comm), or at MPI_THREAD_MULTIPLE one of the window's own, built now (collective
/// over `comm`), because other threads may run collectives on `comm` or fence other windows made
/// from it while this window's fence runs its barrier.
[[nodiscard]] std::shared_ptr<cachecomm::comm> window_fast_comm(MPI_Comm comm);

/// Called by stop() before the communicator states are freed (windows use them).
void set_window_cleanup(void (*cleanup)());

/// Deletes the cachecomm state of `comm` (before the communicator itself is freed).
void forget(MPI_Comm comm);

/// Reports a failure of cachecomm the MPI way: message on stderr, then the communicator's error
/// handler with the matching MPI error class. Returns the code the MPI call must return.
int report_failure(MPI_Comm comm, const char* call);
/// Same for a window: the window's error handler; epoch misuse maps to MPI_ERR_RMA_SYNC.
int report_window_failure(MPI_Win win, const char* call);

}  // namespace cachecomm::detail::preload
