// OSU-like loop (call, barrier) at SIZE after PRE calls of 1 B; prints each call's time on rank 0.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  size_t size = atol(argv[1]);
  int calls = atoi(argv[2]), pre = atoi(argv[3]);
  char *s = calloc(size * np, 1), *r = calloc(size * np, 1);
  for (int i = 0; i < pre; i++) {
    MPI_Allgather(s, 1, MPI_CHAR, r, 1, MPI_CHAR, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  double* t = malloc(sizeof(double) * calls);
  for (int i = 0; i < calls; i++) {
    double a = MPI_Wtime();
    MPI_Allgather(s, size, MPI_CHAR, r, size, MPI_CHAR, MPI_COMM_WORLD);
    t[i] = MPI_Wtime() - a;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 0) {
    for (int i = 0; i < calls; i++) printf("%5.2f%c", t[i] * 1e6, i % 20 == 19 ? '\n' : ' ');
    printf("\n");
  }
  MPI_Finalize();
}
