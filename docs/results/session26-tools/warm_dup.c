// Does warming Intel MPI's allgather on a duplicate of MPI_COMM_WORLD warm MPI_COMM_WORLD's?
// warm_dup SIZE CALLS PRE where|world|dup|none OP(allgather|bcast|allreduce|alltoall)
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void call(const char* op, MPI_Comm c, char* s, char* r, int n) {
  if (!strcmp(op, "bcast"))
    MPI_Bcast(s, n, MPI_CHAR, 0, c);
  else if (!strcmp(op, "allreduce"))
    MPI_Allreduce(s, r, n, MPI_CHAR, MPI_SUM, c);
  else if (!strcmp(op, "alltoall"))
    MPI_Alltoall(s, n / 2, MPI_CHAR, r, n / 2, MPI_CHAR, c);
  else
    MPI_Allgather(s, n, MPI_CHAR, r, n, MPI_CHAR, c);
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  size_t size = atol(argv[1]);
  int calls = atoi(argv[2]), pre = atoi(argv[3]);
  const char* where = argv[4];
  const char* op = argv[5];
  char *s = calloc(size * np + 64, 1), *r = calloc(size * np + 64, 1);
  MPI_Comm warm = MPI_COMM_WORLD;
  if (!strcmp(where, "dup")) MPI_Comm_dup(MPI_COMM_WORLD, &warm);
  double t0 = MPI_Wtime();
  if (strcmp(where, "none"))
    for (int i = 0; i < pre; i++) call(op, warm, s, r, 4);
  double pre_us = (MPI_Wtime() - t0) * 1e6;
  double* t = malloc(sizeof(double) * calls);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < calls; i++) {
    double a = MPI_Wtime();
    call(op, MPI_COMM_WORLD, s, r, (int)size);
    t[i] = MPI_Wtime() - a;
  }
  if (rank == 0) {
    double sum = 0, mn = 1;
    for (int i = 0; i < calls; i++) {
      sum += t[i];
      if (t[i] < mn) mn = t[i];
    }
    int slow = 0;
    for (int i = 0; i < calls; i++) slow += t[i] > 2 * mn;
    printf("%s %s pre %d (%.0f us): %d calls of %zu B mean %.2f min %.2f us, slow %d\n", op, where,
           pre, pre_us, calls, size, sum / calls * 1e6, mn * 1e6, slow);
  }
  MPI_Finalize();
}
