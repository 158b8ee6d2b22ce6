// Built-in rules that hand a nonblocking collective to the system MPI where that MPI's own call
// was measured faster than the channel on a node of a given shape (the C++ API's choice,
// nonblocking_collectives.cpp, and the preload's routing, nonblocking_routing.cpp). Each depends
// only on what every rank agrees on (the MPI library, the node's shape, one rank's bytes), so
// every rank takes the same path.
#pragma once

#include <cstddef>
#include <string_view>

#include "cachecomm/comm.hpp"
#include "coll/mpi_library.hpp"
#include "coll/nonblocking_channel.hpp"

namespace cachecomm::detail {

/// Intel MPI 2021 at 2 ranks on their own cores: its own MPI_Iscatter from a block of this size
/// (docs/results/session35.md, section 5). cachecomm-paired-bench, 3 launches each way (Intel's
/// call warm in both): the slots 0.56-0.85 of its time from 32 KiB, single copy 0.65-0.86. OSU
/// 7.4's osu_iscatter (5 rounds) preloaded against plain: served, 0.81-0.91 at 128-512 KiB; with
/// this rule 1.01-1.03 from 64 KiB and 0.76 at 32 KiB, the first size Intel's own call sees, where
/// its set-up over its first few hundred calls lands (with the rule from 128 KiB that row was 128
/// KiB, at 0.85).
inline constexpr std::size_t intel_iscatter_min_bytes = std::size_t{32} << 10;
/// ... and its own MPI_Ibcast from this size: osu_ibcast 1 MiB served 0.88 (0.60-0.93) of plain
/// (512 KiB 1.24), passed 1.82-2.02 (Intel's own broadcast of 1 MiB is faster before its smaller
/// sizes have set up its shared-memory collective); paired, the slots 0.90-1.00, single copy
/// 0.59-0.97.
inline constexpr std::size_t intel_ibcast_min_bytes = std::size_t{1} << 20;

/// Why the system MPI's own call takes `kind` with `bytes` (one rank's block; a broadcast's
/// message) on `topology`'s node under `family`, or empty where the channel serves it.
[[nodiscard]] inline std::string_view nonblocking_mpi_faster(nonblocking_kind kind,
                                                             std::size_t bytes,
                                                             const node_topology& topology,
                                                             mpi_library_family family) {
  if (family != mpi_library_family::intel_mpi || topology.node_size != 2 || topology.oversubscribed)
    return {};
  if (kind == nonblocking_kind::scatter && bytes >= intel_iscatter_min_bytes) {
    return "Intel MPI's own iscatter, measured faster from 32 KiB blocks at 2 ranks on their own "
           "cores (OSU 0.81-0.91 served at 128-512 KiB)";
  }
  if (kind == nonblocking_kind::bcast && bytes >= intel_ibcast_min_bytes) {
    return "Intel MPI's own ibcast, measured faster from 1 MiB at 2 ranks on their own cores "
           "(OSU 0.88 served)";
  }
  return {};
}

}  // namespace cachecomm::detail
