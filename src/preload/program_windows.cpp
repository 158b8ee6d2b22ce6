#include "preload/program_windows.hpp"

#include <mutex>
#include <unordered_set>

#include "cachecomm/wait_policy.hpp"

namespace cachecomm::detail::preload {
namespace {

// Windows are created and freed rarely; a mutex keeps the set right under MPI_THREAD_MULTIPLE.
std::mutex g_mutex;
std::unordered_set<MPI_Win>& program_windows() {
  static auto* windows = new std::unordered_set<MPI_Win>;  // outlives static destruction
  return *windows;
}

}  // namespace

int track_program_window(int code, const MPI_Win* win) {
  if (code != MPI_SUCCESS || win == nullptr || *win == MPI_WIN_NULL) return code;
  const std::lock_guard lock(g_mutex);
  if (program_windows().insert(*win).second) cachecomm::drive_mpi_progress_while_waiting(true);
  return code;
}

void forget_program_window(MPI_Win win) {
  const std::lock_guard lock(g_mutex);
  if (program_windows().erase(win) != 0) cachecomm::drive_mpi_progress_while_waiting(false);
}

}  // namespace cachecomm::detail::preload
