#include "preload/served_windows.hpp"

#include <algorithm>
#include <vector>

namespace cachecomm::detail::preload {

namespace {

// Few windows live at once: a vector searched from the back (the newest is the likeliest).
std::vector<std::unique_ptr<served_window>>& windows() {
  static std::vector<std::unique_ptr<served_window>> all;
  return all;
}

// Windows the program never freed go before the communicator states (MPI_Finalize).
void free_all_windows() {
  for (auto& record : windows()) destroy_window(*record);
  windows().clear();
}

}  // namespace

served_window* find_window(MPI_Win win) {
  if (inside_cachecomm()) return nullptr;
  auto& all = windows();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if ((*it)->win == win) return it->get();
  }
  return nullptr;
}

void add_window(std::unique_ptr<served_window> record) {
  static const bool cleanup_registered = [] {
    set_window_cleanup(free_all_windows);
    return true;
  }();
  (void)cleanup_registered;
  windows().push_back(std::move(record));
}

void destroy_window(served_window& record) {
  cachecomm_scope scope;
  record.window.reset();  // cachecomm's words first: the regions are MPI's memory
  if (record.win != MPI_WIN_NULL) PMPI_Win_free(&record.win);
  if (record.comm_group != MPI_GROUP_NULL) PMPI_Group_free(&record.comm_group);
}

void free_window(served_window& record) {
  destroy_window(record);
  auto& all = windows();
  all.erase(std::remove_if(all.begin(), all.end(),
                           [&record](const auto& r) { return r.get() == &record; }),
            all.end());
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
