// per-call times (rank 0 and rank 1 averaged like OSU) of an OSU-like loop: OP of SIZE bytes,
// barrier after each
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* op = argv[1];
  long bytes = atol(argv[2]);
  int calls = atoi(argv[3]);
  char* s = malloc(bytes);
  char* r = malloc(bytes * size);
  memset(s, 1, bytes);
  memset(r, 0, bytes * size);
  double* t = malloc(sizeof(double) * calls);
  for (int i = 0; i < calls; ++i) {
    double t0 = MPI_Wtime();
    if (!strcmp(op, "bcast"))
      MPI_Bcast(s, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
    else if (!strcmp(op, "allgather"))
      MPI_Allgather(s, bytes, MPI_CHAR, r, bytes, MPI_CHAR, MPI_COMM_WORLD);
    else if (!strcmp(op, "reduce"))
      MPI_Reduce(s, r, bytes / 4, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    else if (!strcmp(op, "allreduce"))
      MPI_Allreduce(s, r, bytes / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    t[i] = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  double* all = malloc(sizeof(double) * calls);
  MPI_Reduce(t, all, calls, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    double tot = 0, tail = 0;
    for (int i = 0; i < calls; ++i) {
      tot += all[i] / size;
      if (i >= 10) tail += all[i] / size;
    }
    printf("total %.1f us, calls 10+: mean %.3f\n", tot * 1e6, tail * 1e6 / (calls - 10));
    for (int i = 0; i < calls; ++i)
      printf("%.2f%c", all[i] / size * 1e6, (i % 20 == 19) ? '\n' : ' ');
    printf("\n");
  }
  MPI_Finalize();
}
