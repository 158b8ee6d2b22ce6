// Whether the ranks sharing a machine can each run on a processing unit of their own, judged from
// their CPU affinity masks rather than from the machine's size: ranks pinned two to a core (Open
// MPI's --cpu-set, taskset, numactl, a scheduler's binding without a cgroup) are oversubscribed on
// a machine with cores to spare, and a rank that spins there waits a whole scheduler slice for the
// rank it waits on (2 ranks on one core of the 2-core VM: a 64 KiB reduce took 7 ms spinning,
// 7 us yielding).
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace cachecomm::detail {

/// The processing units (operating-system CPU numbers) a process may run on, one bit each.
/// All zero when the mask could not be read (more CPUs than it holds, or no affinity call).
struct unit_mask {
  static constexpr std::size_t words = 16;  // 1024 CPUs, glibc's CPU_SETSIZE
  std::array<std::uint64_t, words> bits{};

  [[nodiscard]] bool known() const;
  void add(std::size_t unit) { bits[unit / 64] |= std::uint64_t{1} << (unit % 64); }
};

/// This process's affinity mask (sched_getaffinity).
[[nodiscard]] unit_mask allowed_units();

/// What the masks of the ranks sharing a machine say about it.
struct unit_placement {
  /// Processing units in the union of the masks; 0 when a mask was unknown.
  int units = 0;
  /// Whether every rank can have a unit of its own: a matching of ranks to units from their masks
  /// that gives each rank a different unit. True when a mask was unknown (nothing to go by).
  bool own_unit_each = true;
};

[[nodiscard]] unit_placement place_ranks(std::span<const unit_mask> masks);

}  // namespace cachecomm::detail
