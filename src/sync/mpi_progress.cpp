#include "sync/mpi_progress.hpp"

#include <mpi.h>

#include "cachecomm/wait_policy.hpp"
#include "core/mpi_check.hpp"

namespace cachecomm {

void drive_mpi_progress_while_waiting(bool enabled) {
  detail::g_mpi_progress_requests.fetch_add(enabled ? 1 : -1, std::memory_order_relaxed);
}

namespace detail {

void poke_mpi_progress() {
  // A wait that outlives MPI (a destructor after MPI_Finalize) has no progress engine to drive.
  if (mpi_finalized()) return;
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}

}  // namespace detail
}  // namespace cachecomm
