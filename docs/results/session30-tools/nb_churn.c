/* Short-lived communicators with a few nonblocking calls each (mpi4py-style scripts and test
 * suites): each round duplicates MPI_COMM_WORLD, makes CALLS allreduces then NB iallreduce+wait of
 * BYTES on the copy, and frees it. argv: ROUNDS CALLS NB BYTES LEVEL(single|multiple). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  const int multiple = argc > 5 && strcmp(argv[5], "multiple") == 0;
  int provided;
  MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  const int rounds = atoi(argv[1]), calls = atoi(argv[2]), nb = atoi(argv[3]);
  const int count = atoi(argv[4]) / 4;
  float* in = calloc(count, 4);
  float* out = calloc(count, 4);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  double first = 0;
  const double start = MPI_Wtime();
  for (int round = 0; round < rounds; ++round) {
    MPI_Comm copy;
    MPI_Comm_dup(MPI_COMM_WORLD, &copy);
    for (int call = 0; call < calls; ++call)
      MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, copy);
    for (int call = 0; call < nb; ++call) {
      double t0 = MPI_Wtime();
      MPI_Request r;
      MPI_Iallreduce(in, out, count, MPI_FLOAT, MPI_SUM, copy, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      if (call == 0) first += MPI_Wtime() - t0;
    }
    MPI_Comm_free(&copy);
  }
  const double elapsed = MPI_Wtime() - start;
  if (rank == 0)
    printf("%.1f us a round, first iallreduce %.1f us\n", 1e6 * elapsed / rounds,
           1e6 * first / rounds);
  MPI_Finalize();
  return 0;
}
