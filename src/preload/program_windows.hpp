// The program's own MPI windows (those cachecomm does not serve). While the program holds one,
// every cachecomm wait also drives MPI's progress engine: a passive-target access to this rank
// (MPICH, Open MPI's point-to-point windows) completes only while this rank is inside MPI, and
// without that a served MPI_Barrier on the target would deadlock with MPI_Win_unlock on the origin.
#pragma once

#include <mpi.h>

namespace cachecomm::detail::preload {

/// Records `win` (when `code` says it was created) and returns `code`.
int track_program_window(int code, const MPI_Win* win);
/// Forgets `win` if it was recorded; called before MPI_Win_free releases the handle.
void forget_program_window(MPI_Win win);

}  // namespace cachecomm::detail::preload
