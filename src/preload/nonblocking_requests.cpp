#include "preload/nonblocking_requests.hpp"

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cachecomm/error.hpp"
#include "coll/coll_settings.hpp"
#include "core/comm_impl.hpp"
#include "preload/runtime.hpp"

namespace cachecomm::detail::preload {

std::atomic<int> g_nonblocking_attention{0};
std::atomic<int> g_nonblocking_pending{0};

namespace {

/// One served operation, from its start until MPI frees its generalized request (free_fn).
struct pending_operation {
  nonblocking_operation operation;  ///< the shared layer's part (queued while unfinished)
  call_kind kind = call_kind::ibarrier;
  MPI_Comm comm = MPI_COMM_NULL;  ///< for MPI_Cancel's error (the program may free it meanwhile)
  /// No request holds the operation any more while it is unfinished: MPI ran free_fn early (MPICH
  /// does so in MPI_Request_free, where the standard defers it to the completion), or its start
  /// could not make one. The operation then deletes itself when it finishes.
  bool freed_early = false;
  /// The finish callback has taken over (set under the bookkeeping lock): from here free_fn
  /// recycles the operation itself, and the callback touches only what it copied out.
  bool completing = false;
  /// The operation is queued before its generalized request exists (start_nonblocking). Set under
  /// the bookkeeping lock: once the request is made and listed; a finish that came first (in the
  /// start's own pass, or in another thread's at MPI_THREAD_MULTIPLE) only marks
  /// finished_unrequested and leaves the rest to the starter.
  bool request_made = false;
  bool finished_unrequested = false;
  MPI_Request request = MPI_REQUEST_NULL;
  std::size_t live_index = 0;  ///< its place in live_operations()
  staged_buffers staged;       ///< sides whose datatypes are not dense (unused by dense calls)

  [[nodiscard]] bool finished() const { return operation.finished.load(std::memory_order_relaxed); }
  /// As new, for reuse; drops its hold on the channel.
  void reset() {
    operation.channel.reset();
    operation.sequence = 0;
    operation.call = nonblocking_call{};
    operation.chunks = 1;
    operation.contributed = 0;
    operation.finished_chunks = 0;
    operation.finished.store(false, std::memory_order_relaxed);
    operation.error = MPI_SUCCESS;
    operation.problem.clear();
    kind = call_kind::ibarrier;
    comm = MPI_COMM_NULL;
    freed_early = false;
    completing = false;
    request_made = false;
    finished_unrequested = false;
    request = MPI_REQUEST_NULL;
    live_index = 0;
    staged.release();
  }
};

// Process-wide bookkeeping (the live and spare lists, each operation's freed_early/completing).
// At MPI_THREAD_MULTIPLE threads start, complete and free requests at once (MPI runs free_fn in
// whichever thread frees or completes one), so it is guarded there; below that level only one
// thread at a time is inside MPI and the lock is not taken.
std::mutex g_bookkeeping_mutex;

/// Holds the bookkeeping lock at MPI_THREAD_MULTIPLE, nothing below it.
class bookkeeping_guard {
 public:
  bookkeeping_guard() : lock_(g_bookkeeping_mutex, std::defer_lock) {
    if (thread_level() == MPI_THREAD_MULTIPLE) lock_.lock();
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

/// Operations whose request MPI has not freed yet (MPI_Cancel looks here): few at a time.
std::vector<pending_operation*>& live_operations() {
  static std::vector<pending_operation*> instance;
  return instance;
}

/// Finished operations kept for reuse: a start then allocates nothing.
std::vector<std::unique_ptr<pending_operation>>& spare_operations() {
  static std::vector<std::unique_ptr<pending_operation>> instance;
  return instance;
}

std::unique_ptr<pending_operation> new_operation() {
  const bookkeeping_guard guard;
  std::vector<std::unique_ptr<pending_operation>>& spare = spare_operations();
  if (spare.empty()) return std::make_unique<pending_operation>();
  std::unique_ptr<pending_operation> operation = std::move(spare.back());
  spare.pop_back();
  return operation;
}

/// The caller holds the bookkeeping guard.
void recycle_locked(pending_operation* operation) {
  operation->reset();
  constexpr std::size_t kept = 64;
  if (spare_operations().size() < kept) {
    spare_operations().emplace_back(operation);
  } else {
    delete operation;
  }
}

void recycle(pending_operation* operation) {
  const bookkeeping_guard guard;
  recycle_locked(operation);
}

/// The caller holds the bookkeeping guard.
void forget_live(pending_operation* operation) {
  std::vector<pending_operation*>& live = live_operations();
  const std::size_t index = operation->live_index;
  live[index] = live.back();
  live[index]->live_index = index;
  live.pop_back();
}

int query_status(void* extra, MPI_Status* status) {
  const auto* served = static_cast<const pending_operation*>(extra);
  const int error = served->operation.error;
  // What MPI's own nonblocking collectives report: no message, not cancelled.
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = error;
  return error;
}

int free_operation(void* extra) {
  auto* operation = static_cast<pending_operation*>(extra);
  const bookkeeping_guard guard;
  forget_live(operation);
  if (!operation->completing) {
    operation->freed_early = true;  // still queued: recycled when it finishes
    return MPI_SUCCESS;
  }
  recycle_locked(operation);
  return MPI_SUCCESS;
}

// MPI_Cancel is intercepted (a collective request cannot be cancelled); reached only through a
// path that bypasses the intercept, where doing nothing is what MPI allows for it.
int cancel_operation(void* /*extra*/, int /*complete*/) {
  return MPI_SUCCESS;
}

/// The shared layer's finish callback: reports an error, then completes the generalized request.
/// Completing a request the program freed already may run free_operation at once (which recycles
/// the operation), so nothing touches it after MPI_Grequest_complete.
void operation_finished(nonblocking_operation& /*operation*/, void* context) {
  auto* served = static_cast<pending_operation*>(context);
  // Every way an operation ends (a completion call, a freed request, MPI_Finalize's drain) comes
  // here, so the program's buffer is written and the held datatype released on each.
  if (served->staged.holds_result()) {
    std::string problem;
    const int code = served->staged.unpack_result(problem);
    if (code != MPI_SUCCESS && served->operation.error == MPI_SUCCESS) {
      served->operation.error = code;
      served->operation.problem = "unpacking the result: " + problem;
    }
  }
  if (served->operation.error != MPI_SUCCESS) {
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "cachecomm preload: %s failed on world rank %d: %s\n",
                 std::string(mpi_name(served->kind)).c_str(), rank,
                 served->operation.problem.c_str());
    stats().count(served->kind, outcome::cachecomm_error);
  }
  g_nonblocking_attention.fetch_sub(1, std::memory_order_relaxed);
  g_nonblocking_pending.fetch_sub(1, std::memory_order_relaxed);
  bool freed_early = false;
  MPI_Request request = MPI_REQUEST_NULL;
  {
    // From here another thread's free_fn may recycle the operation: only the copies are used.
    const bookkeeping_guard guard;
    freed_early = served->freed_early;
    if (!served->request_made && !freed_early) {
      served->finished_unrequested = true;  // no request yet: the starter completes it
      return;
    }
    served->completing = true;
    request = served->request;
  }
  // Not under the guard: MPI may run free_fn (which takes it) inside the completion.
  if (request != MPI_REQUEST_NULL) PMPI_Grequest_complete(request);
  if (freed_early) recycle(served);
}

void count_started() {
  g_nonblocking_attention.fetch_add(1, std::memory_order_relaxed);
  g_nonblocking_pending.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

int start_nonblocking(call_kind kind, MPI_Comm comm,
                      const std::shared_ptr<nonblocking_channel>& channel,
                      const nonblocking_call& call, MPI_Request* request,
                      const nonblocking_staging* staging) {
  try {
    channel->prepare(call);  // here, where a failure can still be the call's error
  } catch (...) {
    return report_failure(comm, std::string(mpi_name(kind)).c_str());
  }
  std::unique_ptr<pending_operation> served = new_operation();
  served->kind = kind;
  served->comm = comm;
  served->operation.channel = channel;
  served->operation.call = call;
  if (staging != nullptr) {
    try {
      served->staged.stage(*staging, served->operation.call);
    } catch (...) {
      recycle(served.release());
      return report_failure(comm, std::string(mpi_name(kind)).c_str());
    }
  }
  served->operation.on_finished = operation_finished;
  served->operation.context = served.get();
  // Queued first, its request made after the first pass: an operation that pass finishes (a
  // broadcast's root, a small call whose peers came first) gets MPI's own completed request, which
  // costs a fraction of a generalized one's start, completion and free.
  pending_operation* const operation = served.release();
  count_started();
  start_operation(operation->operation);
  bool finished_at_start = false;
  {
    const bookkeeping_guard guard;
    finished_at_start =
        operation->finished_unrequested && operation->operation.error == MPI_SUCCESS;
    if (finished_at_start) recycle_locked(operation);
  }
  // Not under the guard (nor is any MPI call here): MPI may hold its own lock while it runs
  // free_fn, which takes the guard.
  if (finished_at_start) return PMPI_Irecv(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, request);
  MPI_Request made = MPI_REQUEST_NULL;
  const int code =
      PMPI_Grequest_start(query_status, free_operation, cancel_operation, operation, &made);
  bool finished_meanwhile = false;
  {
    const bookkeeping_guard guard;
    if (code != MPI_SUCCESS) {
      if (operation->finished_unrequested)
        recycle_locked(operation);
      else
        operation->freed_early = true;  // its finish recycles it
      return code;
    }
    operation->request = made;
    operation->request_made = true;
    operation->live_index = live_operations().size();
    live_operations().push_back(operation);
    // Finished before its request: with an error (reported already, the request carries it to the
    // completion call), or at MPI_THREAD_MULTIPLE in another thread's pass since the check above.
    finished_meanwhile = operation->finished_unrequested;
    if (finished_meanwhile) operation->completing = true;
  }
  *request = made;
  if (finished_meanwhile) PMPI_Grequest_complete(made);
  return MPI_SUCCESS;
}

int progress_nonblocking() {
  return progress_operations();
}

bool nonblocking_may_serve() {
  for (auto kind = static_cast<std::size_t>(call_kind::ibarrier);
       kind < static_cast<std::size_t>(call_kind::count_); ++kind) {
    if (g_armed[kind]) return true;
  }
  return false;
}

void settle_before_blocking(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  comm_state* state = state_for(comm);
  if (state == nullptr) return;
  if (state->nonblocking) settle_contributions(state->nonblocking.get());
}

void prepare_channel(comm_state& state) {
  // A channel nothing could use: the same answer on every rank (settings, nodes).
  if (state.fast->topology().node_count != 1) return;
  if (!nonblocking_may_serve()) return;
  // Every rank is in the blocking call that built `fast`, so building collectively cannot
  // deadlock. Whether a rank's earlier nonblocking calls came before this call or after it on
  // the others (programs may cross them), the ones numbered below every rank's count went to MPI.
  cachecomm_scope scope;
  try {
    if (!state.nonblocking) {  // a state taken from a freed communicator may bring its own
      const node_topology& topology = state.fast->topology();
      state.nonblocking =
          make_nonblocking_channel(state.fast->impl(), nonblocking_slot_bytes(topology.node_size),
                                   nonblocking_ring(topology), state.fast->waiting());
    }
    const int code = PMPI_Allreduce(&state.nonblocking_calls, &state.nonblocking_first, 1,
                                    MPI_LONG_LONG, MPI_MAX, state.fast->impl().node());
    if (code != MPI_SUCCESS)
      throw cachecomm::mpi_error("cachecomm preload: agreeing on the first nonblocking call", code);
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "cachecomm preload: no shared memory for nonblocking collectives (%s); they "
                 "pass through on this communicator\n",
                 e.what());
    state.nonblocking.reset();
    state.nonblocking_failed = true;
  }
}

void drain_nonblocking() {
  progress_until([] { return !nonblocking_pending(); });
}

namespace {
/// The caller holds the bookkeeping guard (the operation may be recycled once it is released).
const pending_operation* live_operation(MPI_Request request) {
  for (const pending_operation* operation : live_operations()) {
    if (operation->request == request) return operation;
  }
  return nullptr;
}
}  // namespace

bool is_served_request(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) return false;
  const bookkeeping_guard guard;
  return live_operation(request) != nullptr;
}

bool is_unfinished_served_request(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) return false;
  const bookkeeping_guard guard;
  const pending_operation* operation = live_operation(request);
  return operation != nullptr && !operation->finished();
}

int refuse_cancel(MPI_Request request) {
  MPI_Comm comm = MPI_COMM_NULL;
  call_kind kind = call_kind::ibarrier;
  {
    const bookkeeping_guard guard;
    const pending_operation* operation = live_operation(request);
    if (operation == nullptr) return PMPI_Cancel(&request);  // freed meanwhile by another thread
    comm = operation->comm;
    kind = operation->kind;
  }
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(
      stderr,
      "cachecomm preload: MPI_Cancel failed on world rank %d: the request is a nonblocking "
      "collective (%s), which MPI does not allow to be cancelled; it still completes and "
      "must be waited for\n",
      rank, std::string(mpi_name(kind)).c_str());
  PMPI_Comm_call_errhandler(comm, MPI_ERR_REQUEST);
  return MPI_ERR_REQUEST;
}

}  // namespace cachecomm::detail::preload
