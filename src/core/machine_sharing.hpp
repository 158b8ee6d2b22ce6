// How the ranks sharing a machine sit on it: gathered once over the machine's communicator, so
// that the library and the benchmarks' reports call the same machine oversubscribed.
#pragma once

#include <mpi.h>

#include <cstddef>

namespace cachecomm::detail {

struct machine_sharing {
  int ranks = 1;  ///< ranks of the communicator on this machine
  int units = 1;  ///< processing units they may run on (their masks' union, at most the machine's)
  /// More ranks than units, or masks that leave some rank no unit of its own.
  bool oversubscribed = false;
  /// The largest L2 cache any of them reports (hwloc), 0 when none knows: the same on every rank.
  std::size_t l2_cache_bytes = 0;
};

/// Collective over `shared` (the ranks of one machine, MPI_COMM_TYPE_SHARED).
[[nodiscard]] machine_sharing share_machine(MPI_Comm shared);

}  // namespace cachecomm::detail
