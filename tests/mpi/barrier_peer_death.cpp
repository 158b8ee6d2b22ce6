// One rank kills itself in the middle of a run of barriers. The survivors must stop with an
// error naming it (printed as "PEER FAILURE <rank>") instead of hanging.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "cachecomm/cachecomm.hpp"
#include "support/launcher_shield.hpp"

int main(int argc, char** argv) {
  cachecomm::testing::run_rank_in_child_process(5);
  MPI_Init(&argc, &argv);
  const int victim = 1;
  int exit_code = 0;
  try {
    auto settings = cachecomm::config::from_environment();
    settings.set("CACHECOMM_TIMEOUT", "30");
    cachecomm::comm comm(MPI_COMM_WORLD, settings);
    for (int round = 0; round < 1000000; ++round) {
      if (comm.rank() == victim && round == 500) ::raise(SIGKILL);
      comm.barrier();
    }
    std::printf("rank %d: barriers completed although rank %d died\n", comm.rank(), victim);
    exit_code = 3;
  } catch (const cachecomm::peer_failure& failure) {
    std::printf("PEER FAILURE %d: %s\n", failure.peer_rank(), failure.what());
    std::fflush(stdout);
  }
  // MPI cannot be finalized cleanly with a dead peer; leave without it.
  std::fflush(stdout);
  ::_exit(exit_code);
}
