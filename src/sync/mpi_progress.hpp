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

/// Work a wait runs in its slow phase (once it yields or sleeps), besides MPI's progress: the pass
/// over the pending nonblocking collectives (coll/nonblocking_progress.cpp installs it with the
/// first operation; it returns at once while none is pending). A rank blocked in a blocking
/// collective then still contributes what its peers wait for on another communicator, where an
/// operation started on a full ring waits for its owner's next pass.
inline std::atomic<void (*)()> g_wait_side_work{nullptr};

inline void run_wait_side_work() {
  if (auto* const work = g_wait_side_work.load(std::memory_order_acquire)) work();
}

/// One turn of MPI's progress engine: an MPI_Iprobe on MPI_COMM_WORLD, which never consumes a
/// message (MPICH answers a probe on MPI_COMM_SELF without entering its progress engine).
void poke_mpi_progress();

}  // namespace cachecomm::detail
