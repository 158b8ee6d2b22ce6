// Per-call time of MPI_Allgather at SIZE bytes for the first CALLS calls, after PRE calls at
// PRESIZE.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  size_t size = atol(argv[1]);
  int calls = atoi(argv[2]);
  int pre = atoi(argv[3]);
  size_t presize = atol(argv[4]);
  char *s = malloc(size * np), *r = malloc(size * np);
  for (size_t i = 0; i < size * np; i++) s[i] = r[i] = (char)i;
  const char* op = argc > 5 ? argv[5] : "allgather";
  double t0 = MPI_Wtime();
  for (int i = 0; i < pre; i++) {
    if (op[0] == 'b')
      MPI_Barrier(MPI_COMM_WORLD);
    else if (op[0] == 'r')
      MPI_Allreduce(s, r, presize, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
    else if (op[0] == 'c')
      MPI_Bcast(s, presize, MPI_CHAR, 0, MPI_COMM_WORLD);
    else
      MPI_Allgather(s, presize, MPI_CHAR, r, presize, MPI_CHAR, MPI_COMM_WORLD);
  }
  double pre_time = MPI_Wtime() - t0;
  if (rank == 0) printf("pre: %d calls %s of %zu B: %.0f us\n", pre, op, presize, pre_time * 1e6);
  double* t = malloc(sizeof(double) * calls);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < calls; i++) {
    double a = MPI_Wtime();
    MPI_Allgather(s, size, MPI_CHAR, r, size, MPI_CHAR, MPI_COMM_WORLD);
    t[i] = MPI_Wtime() - a;
  }
  if (rank == 0) {
    for (int b = 0; b < calls; b += 50) {
      double sum = 0, mx = 0, mn = 1;
      int slow = 0;
      for (int i = b; i < b + 50 && i < calls; i++) {
        sum += t[i];
        if (t[i] > mx) mx = t[i];
        if (t[i] < mn) mn = t[i];
      }
      double med_guess = mn * 2;
      for (int i = b; i < b + 50 && i < calls; i++) slow += t[i] > med_guess;
      printf("calls %4d-%4d mean %6.2f min %6.2f max %7.2f us, over 2x min: %d\n", b, b + 49,
             sum / 50 * 1e6, mn * 1e6, mx * 1e6, slow);
    }
  }
  MPI_Finalize();
}
