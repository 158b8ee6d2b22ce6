/* Session 22: a program that makes many short-lived communicators (as mpi4py's test suite and codes
 * that split communicators per phase do): each round duplicates MPI_COMM_WORLD, makes CALLS
 * allreduces of BYTES on the copy and frees it. Prints the mean time of a round (rank 0).
 * Build: mpicc -O2 comm_churn.c -o /tmp/churn; run plain and with LD_PRELOAD=libcachecomm_mpi.so:
 *   mpirun -n 2 /tmp/churn ROUNDS CALLS BYTES */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rounds = argc > 1 ? atoi(argv[1]) : 100;
  const int calls = argc > 2 ? atoi(argv[2]) : 10;
  const int count = (argc > 3 ? atoi(argv[3]) : 8) / (int)sizeof(float);
  float* in = calloc((size_t)(count > 0 ? count : 1), sizeof(float));
  float* out = calloc((size_t)(count > 0 ? count : 1), sizeof(float));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int round = 0; round < rounds; ++round) {
    MPI_Comm copy;
    MPI_Comm_dup(MPI_COMM_WORLD, &copy);
    for (int call = 0; call < calls; ++call)
      MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, copy);
    MPI_Comm_free(&copy);
  }
  const double elapsed = MPI_Wtime() - start;
  if (rank == 0)
    printf("%d rounds of dup + %d allreduces of %d B + free: %.1f us a round\n", rounds, calls,
           count * (int)sizeof(float), 1e6 * elapsed / rounds);
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
