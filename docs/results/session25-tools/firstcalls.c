// Per-call times of the first CALLS calls of MPI_Bcast at each size (after PRE calls at 8 B).
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int calls = atoi(argv[1]), pre = atoi(argv[2]);
  char* b = calloc(1 << 23, 1);
  for (int i = 0; i < pre; i++) MPI_Bcast(b, 8, MPI_CHAR, 0, MPI_COMM_WORLD);
  for (int a = 3; a < argc; a++) {
    int n = atoi(argv[a]);
    double t[64];
    for (int i = 0; i < calls; i++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double s = MPI_Wtime();
      MPI_Bcast(b, n, MPI_CHAR, 0, MPI_COMM_WORLD);
      t[i] = MPI_Wtime() - s;
    }
    double mx[64];
    MPI_Reduce(t, mx, calls, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      printf("%8d:", n);
      for (int i = 0; i < calls; i++) printf(" %.1f", mx[i] * 1e6);
      printf("\n");
    }
  }
  MPI_Finalize();
}
