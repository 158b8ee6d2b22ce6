// For tests in which a rank dies on purpose: the MPI rank runs in a child of the process the
// launcher started. The launcher then learns of the death only when the parent exits, after a
// grace period, instead of at once; MPICH's hydra (even with -disable-auto-cleanup) and Open MPI
// otherwise kill the survivors before they can notice the death themselves and report it.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

namespace cachecomm::testing {

/// Call first in main, before MPI_Init. Returns in the child; the parent waits for the child,
/// lingers `grace_seconds`, and exits 0 if the child was killed by a signal (the intended death)
/// or with the child's own exit status.
inline void run_rank_in_child_process(unsigned grace_seconds) {
  const pid_t child = ::fork();
  if (child < 0) std::abort();
  if (child == 0) return;
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
  }
  ::sleep(grace_seconds);
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 0);
}

}  // namespace cachecomm::testing
