// The stage-or-pull allgather's per-rank choice of how its own block reaches the others: staged in
// shared memory with ordinary stores, or pulled from its buffer with cross-memory attach. The
// choice changes no bits and needs no agreement (each reader follows what the owner posted), so
// every rank decides alone, from the times of its own copies.
#pragma once

#include <algorithm>
#include <cstdint>

namespace cachecomm::detail {

/// Stages while a staged copy runs within `ratio` of a local copy of the same bytes (the other
/// cores did not hold the lines: the readers then copy them out of this core's cache at local-copy
/// speed, and staging plus that read cost less than the kernel's pull). When it runs slower
/// (the lines are taken back from the readers one invalidation at a time: 5-20x a local copy on a
/// 2-core EPYC VM in some minutes), pulls, and tries staging again after `first_interval` calls,
/// doubling the wait after each failed try up to `max_interval`, so that a slow state costs at most
/// one slow call in `max_interval` and a fast one is found again within a fraction of a second.
class staging_choice {
 public:
  static constexpr double ratio = 2.0;
  static constexpr std::uint32_t first_interval = 16;
  static constexpr std::uint32_t max_interval = 1024;

  /// Whether this call stages the rank's block (a pulling rank stages on its tries).
  [[nodiscard]] bool stage_next() {
    if (m_staging || m_wait == 0) return true;
    --m_wait;
    return false;
  }
  /// A staged call's copies into shared memory took `staged_ns_per_byte`, the same call's local
  /// copy of the same block `local_ns_per_byte`.
  void record_staged(double staged_ns_per_byte, double local_ns_per_byte) {
    if (staged_ns_per_byte <= ratio * local_ns_per_byte) {
      m_staging = true;
      m_interval = first_interval;
      return;
    }
    m_staging = false;
    m_wait = m_interval;
    m_interval = std::min(m_interval * 2, max_interval);
  }
  [[nodiscard]] bool staging() const { return m_staging; }

 private:
  bool m_staging = true;
  std::uint32_t m_wait = 0;
  std::uint32_t m_interval = first_interval;
};

}  // namespace cachecomm::detail
