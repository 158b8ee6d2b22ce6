#include "preload/served_windows.hpp"

#include <atomic>
#include <cstdint>
#include <shared_mutex>
#include <vector>

namespace cachecomm::detail::preload {

namespace {

// Few windows live at once: a vector searched from the back (the newest is the likeliest). Taken
// shared by a lookup that misses its thread's last window, exclusively to add or forget one;
// never held across an MPI call (freeing is collective and may wait for other ranks).
struct registry {
  std::shared_mutex mutex;
  std::vector<std::unique_ptr<served_window>> all;
};

registry& windows() {
  static registry instance;
  return instance;
}

// Bumped whenever a window is added, and when one is forgotten before MPI frees its handle (which
// MPI may then reuse for a new window): every thread's last-window entry from before is stale.
std::atomic<std::uint64_t> g_windows_generation{1};

// The window this thread looked up last: under MPI_THREAD_MULTIPLE, threads each working on a
// window of their own find it without writing a shared line (no lock word bouncing between cores).
// A miss is remembered too (MPI's own windows then cost no lock either).
struct last_window {
  MPI_Win win = MPI_WIN_NULL;
  served_window* record = nullptr;  ///< null: `win` is not served
  std::uint64_t generation = 0;
};
thread_local last_window g_last __attribute__((tls_model("initial-exec")));

std::unique_ptr<served_window> take_out(served_window& record) {
  registry& r = windows();
  const std::unique_lock<std::shared_mutex> lock(r.mutex);
  g_windows_generation.fetch_add(1, std::memory_order_acq_rel);
  g_last = last_window{};
  for (auto it = r.all.begin(); it != r.all.end(); ++it) {
    if (it->get() == &record) {
      std::unique_ptr<served_window> owned = std::move(*it);
      r.all.erase(it);
      return owned;
    }
  }
  return nullptr;
}

// Windows the program never freed go before the communicator states (MPI_Finalize, one thread).
void free_all_windows() {
  std::vector<std::unique_ptr<served_window>> left;
  {
    registry& r = windows();
    const std::unique_lock<std::shared_mutex> lock(r.mutex);
    g_windows_generation.fetch_add(1, std::memory_order_acq_rel);
    left.swap(r.all);
  }
  g_last = last_window{};
  for (auto& record : left) destroy_window(*record);
}

}  // namespace

served_window* find_window(MPI_Win win) {
  if (inside_cachecomm()) return nullptr;
  const std::uint64_t generation = g_windows_generation.load(std::memory_order_acquire);
  if (g_last.win == win && g_last.generation == generation && win != MPI_WIN_NULL)
    return g_last.record;
  registry& r = windows();
  const std::shared_lock<std::shared_mutex> lock(r.mutex);
  served_window* found = nullptr;
  for (auto it = r.all.rbegin(); it != r.all.rend() && found == nullptr; ++it) {
    if ((*it)->win == win) found = it->get();
  }
  // The generation read before the search: a window added or forgotten meanwhile bumped it past.
  g_last = last_window{win, found, generation};
  return found;
}

void add_window(std::unique_ptr<served_window> record) {
  static const bool cleanup_registered = [] {
    set_window_cleanup(free_all_windows);
    return true;
  }();
  (void)cleanup_registered;
  registry& r = windows();
  const std::unique_lock<std::shared_mutex> lock(r.mutex);
  r.all.push_back(std::move(record));
  g_windows_generation.fetch_add(1, std::memory_order_acq_rel);
}

void destroy_window(served_window& record) {
  cachecomm_scope scope;
  record.window.reset();  // cachecomm's words first: the regions are MPI's memory
  record.owner.reset();   // inside the scope: its MPI calls are cachecomm's
  if (record.win != MPI_WIN_NULL) PMPI_Win_free(&record.win);
  if (record.comm_group != MPI_GROUP_NULL) PMPI_Group_free(&record.comm_group);
}

void free_window(served_window& record) {
  std::unique_ptr<served_window> owned = take_out(record);
  destroy_window(record);
}

served_window* window_in_epoch(call_kind kind, MPI_Win win) {
  served_window* record = find_window(win);
  if (record == nullptr) {
    if (!inside_cachecomm()) stats().count(kind, outcome::mpi_window);
    return nullptr;
  }
  if (record->passive_locks > 0) {
    stats().count(kind, outcome::passive_target);
    return nullptr;
  }
  if (!record->fence_epoch && !record->access_epoch) {
    stats().count(kind, outcome::outside_epoch);
    return nullptr;
  }
  return record;
}

int await_target_post(call_kind kind, served_window& record, int target) {
  if (!record.access_epoch) return MPI_SUCCESS;
  try {
    cachecomm_scope scope;
    char nothing = 0;
    record.window->put(&nothing, 0, target, 0);  // the first access to a target waits for its post
  } catch (...) {
    stats().count(kind, outcome::cachecomm_error);
    return report_window_failure(record.win, "waiting for the target's post");
  }
  return MPI_SUCCESS;
}

}  // namespace cachecomm::detail::preload
