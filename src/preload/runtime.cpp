#include "preload/runtime.hpp"

#include <cerrno>
#include <cstdio>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "cachecomm/error.hpp"
#include "coll/coll_settings.hpp"
#include "coll/mismatch_error.hpp"
#include "preload/mpi_identity.hpp"
#include "preload/nonblocking_requests.hpp"
#include "preload/settings.hpp"
#include "preload/state_pool.hpp"

namespace cachecomm::detail::preload {

namespace {

struct runtime {
  bool started = false;
  bool enabled = false;
  bool summary = false;
  int thread_level = MPI_THREAD_SINGLE;
  long long warmup = 3;
  long long eager_children = 8;       ///< CACHECOMM_PRELOAD_EAGER_CHILDREN
  std::uint16_t mpi_warmup = 0;       ///< resolved CACHECOMM_PRELOAD_MPI_WARMUP
  std::size_t nonblocking_bytes = 0;  ///< the setting (0: automatic)
  std::uint32_t nonblocking_slots = 0;
  int keyval = MPI_KEYVAL_INVALID;
  std::array<bool, static_cast<std::size_t>(call_kind::count_)> op_enabled{};
  config settings;
  call_stats counters;
  std::atomic<long long> states_built{0};
  std::atomic<long long> states_reused{0};  ///< taken from a freed communicator (state_pool.hpp)
  std::atomic<long long> states_freed{0};
  void (*window_cleanup)() = nullptr;
  // Taken only where states are made or deleted, never on the hot path.
  std::mutex tracked_mutex;
  std::vector<MPI_Comm> tracked;  ///< communicators carrying a state, for the clean-up at finalize
};

runtime& rt() {
  static runtime instance;
  return instance;
}

void drop_tracking(MPI_Comm comm) {
  runtime& r = rt();
  // Every thread's hot entry is stale from here on (this thread's too: cleared at once).
  g_states_generation.fetch_add(1, std::memory_order_acq_rel);
  g_hot = hot_entry{};
  const std::lock_guard<std::mutex> lock(r.tracked_mutex);
  for (auto it = r.tracked.begin(); it != r.tracked.end(); ++it) {
    if (*it == comm) {
      r.tracked.erase(it);
      break;
    }
  }
}

// Attribute delete callback: MPI calls it when the communicator is freed (or the attribute
// deleted).
int delete_state(MPI_Comm comm, int /*keyval*/, void* attribute, void* /*extra*/) {
  auto* state = static_cast<comm_state*>(attribute);
  drop_tracking(comm);
  if (state->fast) ++rt().states_freed;
  cachecomm_scope scope;  // the MPI_Comm_free calls inside cachecomm go to PMPI
  try {
    if (state->token != 0 && rt().started) {
      (void)keep_for_reuse({std::move(state->members), state->token, std::move(state->fast),
                            std::move(state->nonblocking)});
    }
    delete state;
  } catch (...) {
    return MPI_ERR_OTHER;
  }
  return MPI_SUCCESS;
}

int error_class_of(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const cachecomm::detail::mismatch_error& e) {
    // Ranks disagreeing on one call: the classes MPI itself reports for it.
    switch (e.differs()) {
      case cachecomm::detail::mismatch_error::field::size: return MPI_ERR_TRUNCATE;
      case cachecomm::detail::mismatch_error::field::operation: return MPI_ERR_OP;
      case cachecomm::detail::mismatch_error::field::datatype: return MPI_ERR_TYPE;
      case cachecomm::detail::mismatch_error::field::collective: return MPI_ERR_OTHER;
      case cachecomm::detail::mismatch_error::field::root: return MPI_ERR_ROOT;
    }
    return MPI_ERR_OTHER;
  } catch (const cachecomm::mpi_error& e) {
    int error_class = MPI_ERR_OTHER;
    if (PMPI_Error_class(e.mpi_code(), &error_class) != MPI_SUCCESS) error_class = MPI_ERR_OTHER;
    return error_class;
  } catch (const cachecomm::invalid_argument&) {
    return MPI_ERR_ARG;
  } catch (const cachecomm::unsupported_error&) {
    return MPI_ERR_UNSUPPORTED_OPERATION;
  } catch (const cachecomm::system_error& e) {
    return e.errno_value() == ENOMEM || e.errno_value() == ENOSPC ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
  } catch (const std::bad_alloc&) {
    return MPI_ERR_NO_MEM;
  } catch (const cachecomm::error&) {
    return MPI_ERR_OTHER;  // usage errors, peer failures and timeouts
  } catch (...) {
    return MPI_ERR_INTERN;
  }
}

std::string message_of(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

// The state hung on `comm`, made at its first collective call. Threads calling collectives on
// different communicators at once each reach their own communicator's attribute.
comm_state* state_of(MPI_Comm comm) {
  runtime& r = rt();
  void* attribute = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, r.keyval, &attribute, &found) != MPI_SUCCESS) return nullptr;
  auto* state = static_cast<comm_state*>(attribute);
  if (found == 0) {
    auto owned = std::make_unique<comm_state>();
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return nullptr;
    if (inter != 0) owned->unusable = outcome::intercommunicator;
    for (std::size_t kind = 0; kind < owned->mpi_warmup_left.size(); ++kind) {
      const auto k = static_cast<call_kind>(kind);
      if (is_collective(k) && k != call_kind::barrier) owned->mpi_warmup_left[kind] = r.mpi_warmup;
    }
    if (PMPI_Comm_set_attr(comm, r.keyval, owned.get()) != MPI_SUCCESS) return nullptr;
    state = owned.release();
    const std::lock_guard<std::mutex> lock(r.tracked_mutex);
    r.tracked.push_back(comm);
  }
  return state;
}

}  // namespace

constinit thread_local bool g_inside_cachecomm __attribute__((tls_model("initial-exec"))) = false;
std::array<bool, static_cast<std::size_t>(call_kind::count_)> g_armed{};
std::atomic<std::uint64_t> g_states_generation{1};
constinit thread_local hot_entry g_hot __attribute__((tls_model("initial-exec")));

namespace {
void remember_hot(MPI_Comm comm, const comm_state& state) {
  g_hot = {comm, state.fast.get(), g_states_generation.load(std::memory_order_acquire),
           rt().mpi_warmup != 0 ? state.mpi_warmup_left.data() : nullptr};
}

// The built state for a call of `kind`, or null while the MPI's warm-up of `kind` on this
// communicator lasts (the call counted against it).
cachecomm::comm* serving(MPI_Comm comm, comm_state& state, call_kind kind, outcome& why_not) {
  remember_hot(comm, state);
  if (kind != call_kind::count_) {
    std::uint16_t& left = state.mpi_warmup_left[static_cast<std::size_t>(kind)];
    if (left != 0) {
      --left;
      why_not = outcome::mpi_warming;
      return nullptr;
    }
  }
  return state.fast.get();
}
}  // namespace

call_stats& stats() {
  return rt().counters;
}

int thread_level() {
  return rt().thread_level;
}

std::size_t nonblocking_slot_bytes(int node_ranks) {
  return cachecomm::detail::nonblocking_slot_bytes(rt().nonblocking_bytes, node_ranks);
}

std::uint32_t nonblocking_slots_setting() {
  return rt().nonblocking_slots;
}

std::uint32_t nonblocking_ring(const node_topology& topology) {
  return cachecomm::detail::nonblocking_ring_slots(
      nonblocking_slot_bytes(topology.node_size), topology.node_size, topology.l2_cache_bytes,
      topology.oversubscribed, nonblocking_slots_setting());
}

std::size_t nonblocking_largest_call(const node_topology& topology, bool block_per_rank) {
  return cachecomm::detail::nonblocking_largest_call(nonblocking_slot_bytes(topology.node_size),
                                                     nonblocking_ring(topology), topology.node_size,
                                                     block_per_rank);
}

comm_state* state_for(MPI_Comm comm) {
  return state_of(comm);
}

void start(int provided_thread_level) {
  if (!runs_on_built_mpi()) return;  // another MPI: its handles are not ours, serve nothing
  runtime& r = rt();
  r.thread_level = provided_thread_level;
  try {
    r.settings = config::from_environment();
    const preload_settings read = read_preload_settings(r.settings);
    r.enabled = read.enabled;
    r.summary = read.summary;
    r.warmup = read.warmup;
    r.eager_children = read.eager_children;
    r.mpi_warmup = static_cast<std::uint16_t>(read.mpi_warmup);
    r.op_enabled = read.serve;
    r.nonblocking_bytes = read.nonblocking_bytes;
    r.nonblocking_slots = read.nonblocking_slots;
  } catch (const std::exception& e) {
    // A bad setting must not break a program that never asked for cachecomm: pass everything
    // through.
    std::fprintf(stderr, "cachecomm preload: %s; passing every call to MPI\n", e.what());
    r.enabled = false;
  }
  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &r.keyval, nullptr) !=
      MPI_SUCCESS) {
    r.enabled = false;
  }
  r.started = true;
  for (std::size_t kind = 0; kind < g_armed.size(); ++kind) {
    g_armed[kind] = !globally_blocked(static_cast<call_kind>(kind)).has_value();
  }
  build_world_state();
}

void stop() {
  runtime& r = rt();
  if (!r.started) return;
  if (r.window_cleanup != nullptr) r.window_cleanup();
  // Free the states while MPI still works; user communicators that were never freed included.
  for (;;) {
    MPI_Comm comm = MPI_COMM_NULL;
    {
      const std::lock_guard<std::mutex> lock(r.tracked_mutex);
      if (r.tracked.empty()) break;
      comm = r.tracked.back();
    }
    // The delete callback takes the lock itself.
    if (PMPI_Comm_delete_attr(comm, r.keyval) != MPI_SUCCESS) drop_tracking(comm);
  }
  free_kept_states();
  if (r.summary) {
    print_summary(r.counters,
                  {r.states_built.load(), r.states_reused.load(), r.states_freed.load()},
                  r.thread_level);
  }
  PMPI_Comm_free_keyval(&r.keyval);
  r.started = false;
  g_armed = {};
  g_states_generation.fetch_add(1, std::memory_order_acq_rel);
}

std::optional<outcome> globally_blocked(call_kind kind) {
  const runtime& r = rt();
  if (!r.started) return outcome::not_initialized;
  if (!r.enabled || !r.op_enabled[static_cast<std::size_t>(kind)]) return outcome::disabled;
  // Every thread level: state shared between communicators and windows is per thread, atomic, or
  // behind a lock off the hot path (docs/architecture.md, "Thread levels").
  return std::nullopt;
}

void set_window_cleanup(void (*cleanup)()) {
  rt().window_cleanup = cleanup;
}

std::shared_ptr<cachecomm::comm> shared_fast_comm(MPI_Comm comm) {
  comm_state* state = state_of(comm);
  return state != nullptr ? state->fast : nullptr;
}

std::shared_ptr<cachecomm::comm> window_fast_comm(MPI_Comm comm) {
  if (rt().thread_level == MPI_THREAD_MULTIPLE)
    return std::make_shared<cachecomm::comm>(comm, rt().settings);
  return shared_fast_comm(comm);
}

namespace {

/// Builds `state` for `comm` (collective over it: every rank calls this in the same call), or
/// takes a kept state of the same group; then the nonblocking channel where one could serve.
void build_state(MPI_Comm comm, comm_state& state) {
  // At every thread level: a state a thread proposes is reserved for it until the ranks
  // agree (state_pool.cpp), so threads building communicators of one group at once never
  // take the same state.
  state.members = world_members(comm);
  reusable_state kept = take_for(comm, state.members);
  if (kept.fast) {
    state.fast = std::move(kept.fast);
    state.nonblocking = std::move(kept.nonblocking);
    state.token = kept.token;
    ++rt().states_reused;
  }
  if (!state.fast) {
    state.fast = std::make_shared<cachecomm::comm>(comm, rt().settings);
    ++rt().states_built;
    if (!state.members.empty()) state.token = draw_token(*state.fast);
  }
  prepare_channel(state);
}

/// Whether a creation call may build the state of what it makes: the same answer on every rank
/// (settings, the world's state), never inside cachecomm's own calls.
bool may_build_at_creation() {
  const runtime& r = rt();
  return r.started && r.enabled && nonblocking_may_serve() && !inside_cachecomm();
}

/// Builds `comm`'s state inside `call`, a creation call every member of `comm` is in. A failure
/// prints a warning and the communicator's calls pass to MPI; the creation call still succeeds.
void build_at_creation(MPI_Comm comm, const char* call) {
  comm_state* state = state_for(comm);
  if (state == nullptr || state->unusable || state->fast) return;
  cachecomm_scope scope;
  try {
    build_state(comm, *state);
  } catch (...) {
    state->unusable = outcome::state_failed;
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr,
                 "cachecomm preload: building a communicator's state in %s failed on world rank "
                 "%d (%s); its collectives pass to MPI\n",
                 call, rank, message_of(std::current_exception()).c_str());
  }
}

}  // namespace

void build_world_state() {
  if (may_build_at_creation()) build_at_creation(MPI_COMM_WORLD, "MPI_Init");
}

void build_child_state(MPI_Comm parent, MPI_Comm child, const char* call) {
  if (!may_build_at_creation()) return;
  comm_state* parent_state = state_for(parent);
  if (parent_state == nullptr) return;
  // Counted on every rank of the parent, whether or not it is in a child: every rank of the
  // parent makes the same creation calls on it in the same order, so the members of any child
  // agree on its number. (Nothing that differs between them, such as the children they have
  // freed, may enter the decision: a member that builds while another does not deadlocks both.)
  if (parent_state->children_made++ >= rt().eager_children || child == MPI_COMM_NULL) return;
  // Where the job spans nodes, nonblocking calls are not served (multi-node): stay lazy.
  const comm_state* world = state_for(MPI_COMM_WORLD);
  if (world == nullptr || !world->fast || world->fast->topology().node_count != 1) return;
  build_at_creation(child, call);
}

cachecomm::comm* fast_comm(MPI_Comm comm, outcome& why_not, int& error_code, bool skip_warmup,
                           call_kind kind) {
  error_code = MPI_SUCCESS;
  if (comm == MPI_COMM_NULL) {
    why_not = outcome::invalid_argument;
    return nullptr;
  }
  comm_state* state = state_of(comm);
  if (state == nullptr) {
    why_not = outcome::invalid_argument;  // not a valid communicator: MPI will say so
    return nullptr;
  }
  if (state->unusable) {
    why_not = *state->unusable;
    return nullptr;
  }
  if (state->fast) return serving(comm, *state, kind, why_not);
  // Every rank makes the same collective calls on a communicator in the same order, so every rank
  // builds the state in the same call.
  if (++state->collective_calls <= rt().warmup && !skip_warmup) {
    why_not = outcome::warming_up;
    return nullptr;
  }
  cachecomm_scope scope;
  try {
    build_state(comm, *state);
    return serving(comm, *state, kind, why_not);
  } catch (...) {
    state->unusable = outcome::state_failed;
    why_not = outcome::state_failed;
    error_code = report_failure(comm, "building cachecomm state");
    return nullptr;
  }
}

void forget(MPI_Comm comm) {
  runtime& r = rt();
  if (!r.started || comm == MPI_COMM_NULL) return;
  void* attribute = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, r.keyval, &attribute, &found) == MPI_SUCCESS && found != 0) {
    PMPI_Comm_delete_attr(comm, r.keyval);
  }
}

int report_failure(MPI_Comm comm, const char* call) {
  // A state that failed a call goes to no other communicator (state_pool.hpp): what the failed
  // call left behind (a trial half done on some ranks) must not decide another's calls.
  void* attribute = nullptr;
  int found = 0;
  if (rt().started && PMPI_Comm_get_attr(comm, rt().keyval, &attribute, &found) == MPI_SUCCESS &&
      found != 0) {
    static_cast<comm_state*>(attribute)->token = 0;
  }
  std::exception_ptr failure = std::current_exception();
  const int error_class = error_class_of(failure);
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "cachecomm preload: %s failed on world rank %d: %s\n", call, rank,
               message_of(failure).c_str());
  PMPI_Comm_call_errhandler(comm, error_class);
  return error_class;
}

int report_window_failure(MPI_Win win, const char* call) {
  std::exception_ptr failure = std::current_exception();
  int error_class = error_class_of(failure);
  try {
    std::rethrow_exception(failure);
  } catch (const cachecomm::usage_error&) {
    error_class = MPI_ERR_RMA_SYNC;
  } catch (...) {
  }
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "cachecomm preload: %s failed on world rank %d: %s\n", call, rank,
               message_of(failure).c_str());
  PMPI_Win_call_errhandler(win, error_class);
  return error_class;
}

}  // namespace cachecomm::detail::preload
