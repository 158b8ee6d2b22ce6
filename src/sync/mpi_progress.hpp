// Driving MPI's progress engine from cachecomm's waits, for MPI traffic that moves only while its
// target is inside MPI (passive-target RMA under MPICH, Open MPI's point-to-point windows).
#pragma once

#include <atomic>

namespace cachecomm::detail {

/// How many parties asked for MPI progress during waits (see drive_mpi_progress_while_waiting).
inline std::atomic<int> g_mpi_progress_requests{0};

[[nodiscard]] inline bool mpi_progress_requested() {
  return g_mpi_progress_requests.load(std::memory_order_relaxed) > 0;
}

/// One turn of MPI's progress engine: an MPI_Iprobe on MPI_COMM_WORLD, which never consumes a
/// message (MPICH answers a probe on MPI_COMM_SELF without entering its progress engine).
void poke_mpi_progress();

}  // namespace cachecomm::detail
