#include "sync/peer_monitor.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace cachecomm::detail {

bool peer_monitor::process_has_exited(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  // A killed process stays a zombie until its parent (the MPI launcher's daemon) reaps it.
  std::array<char, 64> path{};
  std::snprintf(path.data(), path.size(), "/proc/%d/stat", static_cast<int>(pid));
  int fd = ::open(path.data(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;
  std::array<char, 256> text{};
  ssize_t length = ::read(fd, text.data(), text.size() - 1);
  ::close(fd);
  if (length <= 0) return false;
  // Format: "pid (comm) S ...": the state follows the last ')'.
  const char* close_paren = std::strrchr(text.data(), ')');
  if (close_paren == nullptr || close_paren[1] == '\0') return false;
  char state = close_paren[2];
  return state == 'Z' || state == 'X' || state == 'x';
}

int peer_monitor::find_dead_peer() const {
  for (std::size_t rank = 0; rank < m_pids.size(); ++rank) {
    if (static_cast<int>(rank) == m_self) continue;
    if (process_has_exited(m_pids[rank])) return static_cast<int>(rank);
  }
  return -1;
}

}  // namespace cachecomm::detail
