#include "preload/nonblocking_requests.hpp"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/comm_impl.hpp"
#include "preload/runtime.hpp"
#include "sync/waiter.hpp"

namespace cachecomm::detail::preload {

std::atomic<int> g_nonblocking_attention{0};
std::atomic<int> g_nonblocking_pending{0};

namespace {

/// One served operation, from its start until MPI frees its generalized request (free_fn).
struct pending_operation {
  call_kind kind = call_kind::ibarrier;
  MPI_Comm comm = MPI_COMM_NULL;  ///< for MPI_Cancel's error (the program may free it meanwhile)
  std::shared_ptr<nonblocking_channel> channel;  ///< outlives a communicator freed meanwhile
  std::uint32_t sequence = 0;
  nonblocking_call call;
  bool contributed = false;
  bool finished = false;  ///< MPI_Grequest_complete is called (or due) for it
  /// MPI ran free_fn before the operation finished: MPICH does so in MPI_Request_free, where the
  /// standard defers it to the completion. The operation then deletes itself when it finishes.
  bool freed_early = false;
  int error = MPI_SUCCESS;  ///< what the completion call reports (query_fn)
  MPI_Request request = MPI_REQUEST_NULL;
  std::size_t live_index = 0;  ///< its place in live_operations()
};

/// The operations of one channel not finished yet, in operation order. A queue stays when it
/// empties (a program keeps using the same communicators; no allocation per operation); `channel`
/// is only compared, never followed, once its queue is empty (the channel may be gone).
struct channel_queue {
  const nonblocking_channel* channel = nullptr;
  std::vector<pending_operation*> operations;
};

// Process-wide; only one thread at a time calls MPI below MPI_THREAD_MULTIPLE.
std::vector<channel_queue>& queues() {
  static std::vector<channel_queue> instance;
  return instance;
}

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
  std::vector<std::unique_ptr<pending_operation>>& spare = spare_operations();
  if (spare.empty()) return std::make_unique<pending_operation>();
  std::unique_ptr<pending_operation> operation = std::move(spare.back());
  spare.pop_back();
  return operation;
}

void recycle(pending_operation* operation) {
  *operation = pending_operation{};  // drops its hold on the channel
  constexpr std::size_t kept = 64;
  if (spare_operations().size() < kept) {
    spare_operations().emplace_back(operation);
  } else {
    delete operation;
  }
}

void forget_live(pending_operation* operation) {
  std::vector<pending_operation*>& live = live_operations();
  const std::size_t index = operation->live_index;
  live[index] = live.back();
  live[index]->live_index = index;
  live.pop_back();
}

int query_status(void* extra, MPI_Status* status) {
  const auto* operation = static_cast<const pending_operation*>(extra);
  // What MPI's own nonblocking collectives report: no message, not cancelled.
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = operation->error;
  return operation->error;
}

int free_operation(void* extra) {
  auto* operation = static_cast<pending_operation*>(extra);
  forget_live(operation);
  if (!operation->finished) {
    operation->freed_early = true;  // still queued: recycled when it finishes
    return MPI_SUCCESS;
  }
  recycle(operation);
  return MPI_SUCCESS;
}

// MPI_Cancel is intercepted (a collective request cannot be cancelled); reached only through a
// path that bypasses the intercept, where doing nothing is what MPI allows for it.
int cancel_operation(void* /*extra*/, int /*complete*/) {
  return MPI_SUCCESS;
}

channel_queue& queue_of(const nonblocking_channel* channel) {
  for (channel_queue& queue : queues()) {
    if (queue.channel == channel) return queue;
  }
  // An empty queue is taken over (its channel may be gone): the list stays as long as the number
  // of communicators with operations pending at once.
  for (channel_queue& queue : queues()) {
    if (queue.operations.empty()) {
      queue.channel = channel;
      return queue;
    }
  }
  queues().push_back(channel_queue{channel, {}});
  return queues().back();
}

bool has_pending(const nonblocking_channel* channel) {
  return std::any_of(queues().begin(), queues().end(), [&](const channel_queue& queue) {
    return queue.channel == channel && !queue.operations.empty();
  });
}

/// Advances one channel's operations; appends the finished ones to `finished`.
void advance(channel_queue& queue, std::vector<pending_operation*>& finished) {
  if (queue.operations.empty()) return;
  nonblocking_channel& channel = *queue.operations.front()->channel;
  for (pending_operation* operation : queue.operations) {
    if (operation->contributed) continue;
    if (!channel.slot_free(operation->sequence)) break;  // in order: later ones wait too
    channel.contribute(operation->sequence, operation->call);
    operation->contributed = true;
  }
  std::size_t done = 0;
  for (; done < queue.operations.size(); ++done) {
    pending_operation* operation = queue.operations[done];
    if (!operation->contributed || !channel.ready(operation->sequence, operation->call)) break;
    std::string problem;
    operation->error = channel.finish(operation->sequence, operation->call, problem);
    if (operation->error != MPI_SUCCESS) {
      int rank = -1;
      PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
      std::fprintf(stderr, "cachecomm preload: %s failed on world rank %d: %s\n",
                   std::string(mpi_name(operation->kind)).c_str(), rank, problem.c_str());
      stats().count(operation->kind, outcome::cachecomm_error);
    }
    finished.push_back(operation);
    g_nonblocking_attention.fetch_sub(1, std::memory_order_relaxed);
    g_nonblocking_pending.fetch_sub(1, std::memory_order_relaxed);
  }
  queue.operations.erase(queue.operations.begin(),
                         queue.operations.begin() + static_cast<std::ptrdiff_t>(done));
}

}  // namespace

int start_nonblocking(call_kind kind, MPI_Comm comm,
                      const std::shared_ptr<nonblocking_channel>& channel,
                      const nonblocking_call& call, MPI_Request* request) {
  std::unique_ptr<pending_operation> operation = new_operation();
  operation->kind = kind;
  operation->comm = comm;
  operation->channel = channel;
  operation->sequence = channel->next_sequence();
  operation->call = call;
  const int code = PMPI_Grequest_start(query_status, free_operation, cancel_operation,
                                       operation.get(), &operation->request);
  if (code != MPI_SUCCESS) return code;
  *request = operation->request;
  operation->live_index = live_operations().size();
  live_operations().push_back(operation.get());
  queue_of(channel.get()).operations.push_back(operation.release());
  g_nonblocking_attention.fetch_add(1, std::memory_order_relaxed);
  g_nonblocking_pending.fetch_add(1, std::memory_order_relaxed);
  // Contributes now when the slot is free (a rank that computes until its wait holds nobody up);
  // finishes at once what needs nothing more.
  progress_nonblocking();
  return MPI_SUCCESS;
}

int progress_nonblocking() {
  thread_local std::vector<pending_operation*> finished;
  finished.clear();
  for (channel_queue& queue : queues()) advance(queue, finished);
  // Last: completing a request the program freed already may run free_operation at once (which
  // deletes the operation), so nothing touches it after MPI_Grequest_complete.
  for (pending_operation* operation : finished) {
    const bool freed_early = operation->freed_early;
    const MPI_Request request = operation->request;
    operation->finished = true;
    PMPI_Grequest_complete(request);
    if (freed_early) recycle(operation);
  }
  return static_cast<int>(finished.size());
}

void back_off(unsigned round) {
  // The first pending channel's policy (all communicators of a process normally share one).
  wait_policy policy;
  policy.spin_iterations = 2000;
  policy.yield_iterations = 200;
  for (const channel_queue& queue : queues()) {
    if (!queue.operations.empty()) {
      policy = queue.operations.front()->channel->policy();
      break;
    }
  }
  if (round < policy.spin_iterations) {
    cpu_relax();
  } else if (round < policy.spin_iterations + policy.yield_iterations) {
    sched_yield();
  } else {
    // Oversubscribed or long waits: let the peer that has work run.
    const timespec pause{0, 20000};
    nanosleep(&pause, nullptr);
  }
}

void settle_before_blocking(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  comm_state* state = state_for(comm);
  if (state == nullptr) return;
  if (state->nonblocking && has_pending(state->nonblocking.get())) {
    const nonblocking_channel* channel = state->nonblocking.get();
    progress_until([channel] { return !has_pending(channel); });
  }
  if (state->nonblocking_wanted && state->fast) {
    state->nonblocking_wanted = false;
    g_nonblocking_attention.fetch_sub(1, std::memory_order_relaxed);
    // Every rank is in this same blocking call (the nonblocking call that asked came before it on
    // every rank), so building the segment collectively here cannot deadlock.
    cachecomm_scope scope;
    try {
      state->nonblocking = std::make_shared<nonblocking_channel>(
          state->fast->impl().node(), nonblocking_slot_bytes(), state->fast->waiting());
    } catch (const std::exception& e) {
      std::fprintf(stderr,
                   "cachecomm preload: no shared memory for nonblocking collectives (%s); they "
                   "pass through on this communicator\n",
                   e.what());
      state->nonblocking_failed = true;
    }
  }
}

void drain_nonblocking() {
  progress_until([] { return !nonblocking_pending(); });
}

namespace {
const pending_operation* live_operation(MPI_Request request) {
  for (const pending_operation* operation : live_operations()) {
    if (operation->request == request) return operation;
  }
  return nullptr;
}
}  // namespace

bool is_served_request(MPI_Request request) {
  return request != MPI_REQUEST_NULL && live_operation(request) != nullptr;
}

bool is_unfinished_served_request(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) return false;
  const pending_operation* operation = live_operation(request);
  return operation != nullptr && !operation->finished;
}

int refuse_cancel(MPI_Request request) {
  const pending_operation* operation = live_operation(request);
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(
      stderr,
      "cachecomm preload: MPI_Cancel failed on world rank %d: the request is a nonblocking "
      "collective (%s), which MPI does not allow to be cancelled; it still completes and "
      "must be waited for\n",
      rank, std::string(mpi_name(operation->kind)).c_str());
  PMPI_Comm_call_errhandler(operation->comm, MPI_ERR_REQUEST);
  return MPI_ERR_REQUEST;
}

}  // namespace cachecomm::detail::preload
