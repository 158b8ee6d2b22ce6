// Rank 1 kills itself after some PSCW epochs instead of posting; every other rank, waiting in
// complete() for rank 1's post, must stop with an error naming it ("PEER FAILURE 1").
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>

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
    cachecomm::window win(comm, 64, 1);
    cachecomm::rank_group others;
    for (int r = 0; r < comm.size(); ++r) {
      if (r != victim) others.push_back(r);
    }
    for (int round = 0; round < 1000000; ++round) {
      if (comm.rank() == victim) {
        if (round == 200) ::raise(SIGKILL);
        win.post(others);
        win.wait();
      } else {
        win.start({victim});
        int value = round;
        win.put(&value, sizeof value, victim, 0);
        win.complete();
      }
    }
    std::printf("rank %d: epochs completed although rank %d died\n", comm.rank(), victim);
    exit_code = 3;
  } catch (const cachecomm::peer_failure& failure) {
    std::printf("PEER FAILURE %d: %s\n", failure.peer_rank(), failure.what());
  }
  std::fflush(stdout);
  ::_exit(exit_code);
}
