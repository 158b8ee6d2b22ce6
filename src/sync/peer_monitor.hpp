// Tells whether the processes of a node's peers are still alive.
#pragma once

#include <sys/types.h>

#include <vector>

namespace cachecomm::detail {

class peer_monitor {
 public:
  peer_monitor() = default;
  /// `pids[i]` is the process of node rank i; `self` is this process's node rank (never checked).
  peer_monitor(std::vector<pid_t> pids, int self) : m_pids(std::move(pids)), m_self(self) {}

  /// Node rank of a peer whose process has exited (or is a zombie), or -1 when all live.
  [[nodiscard]] int find_dead_peer() const;
  [[nodiscard]] pid_t pid_of(int node_rank) const {
    return m_pids.at(static_cast<std::size_t>(node_rank));
  }

  /// True when process `pid` has exited or is a zombie waiting to be reaped.
  [[nodiscard]] static bool process_has_exited(pid_t pid);

 private:
  std::vector<pid_t> m_pids;
  int m_self = -1;
};

}  // namespace cachecomm::detail
