/* Session 20: 20000 back-to-back MPI_Barrier calls after 2000 warm-up ones, each timed; per rank
 * the period, mean, percentiles and the share of time in calls over 100 us (4 ranks on 2 cores: are
 * osu_barrier's figures a tail or a steady state?). mpicc -O2 barrier_tail.c -o bartail */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static int cmp(const void* a, const void* b) {
  double x = *(double*)a, y = *(double*)b;
  return x < y ? -1 : x > y;
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int N = 20000;
  double* t = malloc(N * sizeof(double));
  for (int i = 0; i < 2000; i++) MPI_Barrier(MPI_COMM_WORLD);
  double T0 = MPI_Wtime();
  for (int i = 0; i < N; i++) {
    double a = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    t[i] = (MPI_Wtime() - a) * 1e6;
  }
  double tot = (MPI_Wtime() - T0) * 1e6 / N;
  double sum = 0, big = 0;
  int nb = 0;
  for (int i = 0; i < N; i++) {
    sum += t[i];
    if (t[i] > 100) {
      big += t[i];
      nb++;
    }
  }
  qsort(t, N, sizeof(double), cmp);
  printf(
      "rank %d period %.2f mean %.2f p50 %.2f p90 %.2f p99 %.2f p999 %.1f max %.0f  >100us: %d "
      "calls %.0f%% of time\n",
      r, tot, sum / N, t[N / 2], t[N * 9 / 10], t[N * 99 / 100], t[N * 999 / 1000], t[N - 1], nb,
      100 * big / sum);
  MPI_Finalize();
}
