/* The cost of a served collective while the program holds an MPI window of its own (the preload
 * then turns MPI's progress before and after each one): MPI_Barrier and an 8-byte MPI_Allreduce
 * back to back, 7 samples of N calls, median µs per call (slowest rank), with and without a window
 * made by MPI_Win_create. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median_us(int calls, int allreduce) {
  double samples[7];
  double in = 1.0, out = 0.0;
  for (int s = 0; s < 7; ++s) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < calls; ++i) {
      if (allreduce)
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      else
        MPI_Barrier(MPI_COMM_WORLD);
    }
    samples[s] = (MPI_Wtime() - start) / calls * 1e6;
  }
  qsort(samples, 7, sizeof(double), cmp);
  double worst = 0.0;
  MPI_Allreduce(&samples[3], &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int calls = argc > 1 ? atoi(argv[1]) : 20000;
  double barrier = median_us(calls, 0), allreduce = median_us(calls, 1);
  char memory[64];
  MPI_Win win;
  MPI_Win_create(memory, sizeof memory, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  double barrier_w = median_us(calls, 0), allreduce_w = median_us(calls, 1);
  MPI_Win_free(&win);
  if (rank == 0)
    printf("barrier %.3f with-window %.3f allreduce8 %.3f with-window %.3f\n", barrier, barrier_w,
           allreduce, allreduce_w);
  MPI_Finalize();
  return 0;
}
