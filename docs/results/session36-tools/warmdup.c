// Intel's allgather warm-up: is it per communicator or per process? PRE tiny allgathers on
// COMM (world or a dup), then blocks of 50 allgathers of SIZE on a fresh dup (or world).
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  size_t size = atol(argv[1]);
  int pre = atoi(argv[2]);
  int measure_on_dup = atoi(argv[3]);
  char *s, *r; posix_memalign((void**)&s, 4096, size * np); posix_memalign((void**)&r, 4096, size * np); memset(s, 1, size * np); memset(r, 2, size * np);
  double t0 = MPI_Wtime();
  for (int i = 0; i < pre; i++) MPI_Allgather(s, 4, MPI_CHAR, r, 4, MPI_CHAR, MPI_COMM_WORLD);
  double pre_us = (MPI_Wtime() - t0) * 1e6;
  MPI_Comm c = MPI_COMM_WORLD;
  if (measure_on_dup) MPI_Comm_dup(MPI_COMM_WORLD, &c);
  if (rank == 0) printf("pre %d: %.0f us;", pre, pre_us);
  for (int b = 0; b < 12; b++) {
    double best = 1e9, sum = 0;
    for (int i = 0; i < 50; i++) {
      MPI_Barrier(c);
      double t = MPI_Wtime();
      MPI_Allgather(s, size, MPI_CHAR, r, size, MPI_CHAR, c);
      t = MPI_Wtime() - t;
      sum += t;
      if (t < best) best = t;
    }
    if (rank == 0) printf(" %.1f", sum / 50 * 1e6);
  }
  if (rank == 0) printf("\n");
  MPI_Finalize();
}
