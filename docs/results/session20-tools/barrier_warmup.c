/* Session 20: the period of back-to-back MPI_Barrier calls over successive ranges of the first
 * 16000 calls (a preloaded run's first calls build the communicator state). mpicc -O2
 * barrier_warmup.c */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  double p[12];
  int edges[] = {0, 50, 200, 400, 700, 1000, 1200, 2000, 4000, 8000, 16000};
  int k = 0;
  double T = MPI_Wtime();
  for (int i = 0; i < 16000; i++) {
    if (i == edges[k + 1]) {
      double now = MPI_Wtime();
      p[k] = (now - T) * 1e6 / (edges[k + 1] - edges[k]);
      T = now;
      k++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  double now = MPI_Wtime();
  p[k] = (now - T) * 1e6 / (16000 - edges[k]);
  if (r == 0) {
    for (int j = 0; j <= k; j++) printf("[%d..) %.2f  ", edges[j], p[j]);
    printf("\n");
  }
  MPI_Finalize();
}
