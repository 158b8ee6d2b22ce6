// A rank dies while its node is building a segment: mpirun then kills the others in the middle of
// the handshake. Nothing may be left in /dev/shm (checked by scripts/expect_no_shm_leftover.sh).
// With "--named" every rank forces the named fallback instead, whose short-lived name such a kill
// can leave behind: the negative control that shows the check sees leftovers.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "shm/segment.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  cachecomm::detail::segment_test_hooks hooks;
  hooks.refuse_descriptor_sharing = argc > 1 && std::strcmp(argv[1], "--named") == 0;
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int rank = 0;
  MPI_Comm_rank(node, &rank);
  { cachecomm::detail::shm_segment first(node, 4096, hooks); }  // everyone alive: works
  MPI_Barrier(node);
  if (rank == 0) {
    std::printf("FIRST SEGMENT BUILT\n");
    std::fflush(stdout);
  }
  if (rank == 1) {
    // Let the others create the next segment and block in its handshake, waiting for this rank.
    ::usleep(300000);
    ::raise(SIGKILL);
  }
  for (int round = 0; round < 1000; ++round)
    cachecomm::detail::shm_segment next(node, 1 << 20, hooks);
  std::printf("rank %d: built segments although node rank 1 died\n", rank);
  MPI_Finalize();
  return 3;
}
