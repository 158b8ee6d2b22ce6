// How the ranks sharing a machine sit on it: gathered once over the machine's communicator, so
// that the library and the benchmarks' reports call the same machine oversubscribed.
#pragma once

#include <mpi.h>

namespace cachecomm::detail {

struct machine_sharing {
  int ranks = 1;  ///< ranks of the communicator on this machine
  int units = 1;  ///< processing units they may run on (their masks' union, at most the machine's)
  /// More ranks than units, or masks that leave some rank no unit of its own.
  bool oversubscribed = false;
};

/// Collective over `shared` (the ranks of one machine, MPI_COMM_TYPE_SHARED).
[[nodiscard]] machine_sharing share_machine(MPI_Comm shared);

}  // namespace cachecomm::detail
