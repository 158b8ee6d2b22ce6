#include "coll/nonblocking_progress.hpp"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "sync/mpi_progress.hpp"
#include "sync/waiter.hpp"

namespace cachecomm::detail {

namespace {

/// The operations of one channel not finished yet, in operation order. A queue stays when it
/// empties (a program keeps using the same communicators; no allocation per operation); `channel`
/// is only compared, never followed, once its queue is empty (the channel may be gone).
struct channel_queue {
  const nonblocking_channel* channel = nullptr;
  std::vector<nonblocking_operation*> operations;
};

struct registry {
  std::mutex lock;
  std::vector<channel_queue> queues;
};

registry& the_registry() {
  static registry instance;
  return instance;
}

std::atomic<int> g_pending{0};

channel_queue& queue_of(std::vector<channel_queue>& queues, const nonblocking_channel* channel) {
  for (channel_queue& queue : queues) {
    if (queue.channel == channel) return queue;
  }
  // An empty queue is taken over (its channel may be gone): the list stays as long as the number
  // of communicators with operations pending at once.
  for (channel_queue& queue : queues) {
    if (queue.operations.empty()) {
      queue.channel = channel;
      return queue;
    }
  }
  queues.push_back(channel_queue{channel, {}});
  return queues.back();
}

/// The operations a pass finished, in order (linked through next_finished).
struct finished_list {
  nonblocking_operation* first = nullptr;
  nonblocking_operation** end = &first;
  void append(nonblocking_operation* operation) {
    operation->next_finished = nullptr;
    *end = operation;
    end = &operation->next_finished;
  }
};

/// Finishes what is ready, chunk by chunk, in order; appends the operations whose last chunk
/// finished to `finished` and drops them from the queue. Returns whether it released a slot (a
/// chunk finished, or a single-copy operation completed).
bool finish_ready(channel_queue& queue, nonblocking_channel& channel, finished_list& finished) {
  bool released = false;
  nonblocking_call chunk;  // a chunk of a call larger than a slot, while it is finished
  std::size_t done = 0;
  for (; done < queue.operations.size(); ++done) {
    nonblocking_operation* operation = queue.operations[done];
    while (operation->finished_chunks < operation->contributed) {
      const std::uint32_t index = operation->finished_chunks;
      const std::uint32_t sequence = operation->sequence + index;
      // Polled on every pass: a call of one chunk (nearly all) is used as it is, not copied.
      const nonblocking_call& part = operation->chunks == 1
                                         ? operation->call
                                         : (chunk = channel.chunk(operation->call, index));
      if (!channel.ready(sequence, part)) break;
      std::string problem;
      const int error = channel.finish(sequence, part, problem);
      // The first chunk that differs names the problem; the others still release their slots.
      if (error != MPI_SUCCESS && operation->error == MPI_SUCCESS) {
        operation->error = error;
        operation->problem = std::move(problem);
      }
      ++operation->finished_chunks;
      released = true;
    }
    if (operation->finished_chunks < operation->chunks) break;
    // Single copy: blocks this rank owns or reads may not have moved yet.
    int error = MPI_SUCCESS;
    std::string problem;
    if (!channel.complete(operation->sequence, operation->call, error, problem)) break;
    if (error != MPI_SUCCESS && operation->error == MPI_SUCCESS) {
      operation->error = error;
      operation->problem = std::move(problem);
    }
    finished.append(operation);
    g_pending.fetch_sub(1, std::memory_order_relaxed);
    released = true;
  }
  queue.operations.erase(queue.operations.begin(),
                         queue.operations.begin() + static_cast<std::ptrdiff_t>(done));
  return released;
}

/// Contributes the queue's chunks whose slots are free, in order: a chunk whose slot is still in
/// use holds up the later ones too. Returns whether every chunk is in.
bool contribute_ready(channel_queue& queue, nonblocking_channel& channel) {
  for (nonblocking_operation* operation : queue.operations) {
    for (; !operation->fully_contributed(); ++operation->contributed) {
      const std::uint32_t sequence = operation->sequence + operation->contributed;
      if (!channel.slot_free(sequence)) return false;
      if (operation->chunks == 1)
        channel.contribute(sequence, operation->call);
      else
        channel.contribute(sequence, channel.chunk(operation->call, operation->contributed));
    }
  }
  return true;
}

/// Advances one channel's operations; appends the finished ones to `finished`. A finish releases
/// this rank's slots, which may be the last a waiting contribution needed: the pass then tries the
/// contributions again rather than leaving them to the next pass (a peer may be waiting for them).
void advance(channel_queue& queue, finished_list& finished) {
  if (queue.operations.empty()) return;
  nonblocking_channel& channel = *queue.operations.front()->channel;
  for (;;) {
    const bool all_in = contribute_ready(queue, channel);
    if (!finish_ready(queue, channel, finished) || all_in) return;
  }
}

/// Runs the callbacks of the operations a pass finished; returns how many. Last, and unlocked: a
/// callback may delete its operation (it must not run a pass itself).
int run_callbacks(const finished_list& finished) {
  int count = 0;
  for (nonblocking_operation* operation = finished.first; operation != nullptr; ++count) {
    nonblocking_operation* const next = operation->next_finished;
    auto* const callback = operation->on_finished;
    void* const context = operation->context;
    operation->finished.store(true, std::memory_order_release);
    if (callback != nullptr) callback(*operation, context);
    operation = next;
  }
  return count;
}

/// The waits' side work (sync/mpi_progress.hpp): a pass while operations are pending. Never from
/// inside a pass (passes never wait), so the queues' lock is free to take.
void progress_while_waiting() {
  if (operations_pending()) progress_operations();
}

}  // namespace

void start_operation(nonblocking_operation& operation) {
  if (g_wait_side_work.load(std::memory_order_relaxed) != &progress_while_waiting)
    g_wait_side_work.store(&progress_while_waiting, std::memory_order_release);
  finished_list finished;
  {
    registry& r = the_registry();
    const std::lock_guard<std::mutex> guard(r.lock);
    operation.chunks = operation.channel->chunks(operation.call);
    operation.contributed = 0;
    operation.finished_chunks = 0;
    operation.sequence = operation.channel->next_sequences(operation.chunks);
    queue_of(r.queues, operation.channel.get()).operations.push_back(&operation);
    g_pending.fetch_add(1, std::memory_order_relaxed);
    // A pass under the same lock: contributes now when the slot is free (a rank that computes
    // until its wait holds nobody up), and finishes at once what needs nothing more.
    for (channel_queue& queue : r.queues) advance(queue, finished);
  }
  run_callbacks(finished);
}

int progress_operations() {
  finished_list finished;
  {
    registry& r = the_registry();
    const std::lock_guard<std::mutex> guard(r.lock);
    for (channel_queue& queue : r.queues) advance(queue, finished);
  }
  return run_callbacks(finished);
}

bool operations_pending() {
  return g_pending.load(std::memory_order_relaxed) != 0;
}

bool channel_has_pending(const nonblocking_channel* channel) {
  registry& r = the_registry();
  const std::lock_guard<std::mutex> guard(r.lock);
  return std::any_of(r.queues.begin(), r.queues.end(), [&](const channel_queue& queue) {
    return queue.channel == channel && !queue.operations.empty();
  });
}

void settle_channel(const nonblocking_channel* channel) {
  if (!operations_pending() || !channel_has_pending(channel)) return;
  progress_until([channel] { return !channel_has_pending(channel); });
}

void settle_contributions(const nonblocking_channel* channel) {
  if (!operations_pending()) return;
  const auto uncontributed = [channel] {
    registry& r = the_registry();
    const std::lock_guard<std::mutex> guard(r.lock);
    return std::any_of(r.queues.begin(), r.queues.end(), [&](const channel_queue& queue) {
      return queue.channel == channel &&
             std::any_of(queue.operations.begin(), queue.operations.end(),
                         [](const nonblocking_operation* operation) {
                           return !operation->fully_contributed();
                         });
    });
  };
  if (!uncontributed()) return;
  progress_until([&] { return !uncontributed(); });
}

void progress_back_off(unsigned round) {
  // The first pending channel's policy (all communicators of a process normally share one).
  wait_policy policy;
  policy.spin_iterations = 2000;
  policy.yield_iterations = 200;
  {
    registry& r = the_registry();
    const std::lock_guard<std::mutex> guard(r.lock);
    for (const channel_queue& queue : r.queues) {
      if (!queue.operations.empty()) {
        policy = queue.operations.front()->channel->policy();
        break;
      }
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

}  // namespace cachecomm::detail
