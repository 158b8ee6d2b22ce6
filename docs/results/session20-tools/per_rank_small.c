/* Session 20: 8-byte collectives timed per rank, OSU-style (a barrier after each call), so that the
 * root's and the other ranks' times show separately. ./small [ITERATIONS] (default 20000). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const char* ops[] = {"gather",  "scatter", "alltoall",  "allgather", "bcast",
                       "barrier", "reduce",  "allreduce", "allgatherv"};
  char sb[64 * 16], rb[64 * 16];
  memset(sb, 1, sizeof sb);
  int counts[16], displs[16];
  for (int i = 0; i < n; i++) {
    counts[i] = 8;
    displs[i] = 8 * i;
  }
  int iters = atoi(argc > 1 ? argv[1] : "20000");
  for (int o = 0; o < 9; o++) {
    for (int rep = 0; rep < 2; rep++) {
      double t = 0;
      for (int i = 0; i < iters + 1000; i++) {
        double a = MPI_Wtime();
        switch (o) {
          case 0: MPI_Gather(sb, 8, MPI_CHAR, rb, 8, MPI_CHAR, 0, MPI_COMM_WORLD); break;
          case 1: MPI_Scatter(sb, 8, MPI_CHAR, rb, 8, MPI_CHAR, 0, MPI_COMM_WORLD); break;
          case 2: MPI_Alltoall(sb, 8, MPI_CHAR, rb, 8, MPI_CHAR, MPI_COMM_WORLD); break;
          case 3: MPI_Allgather(sb, 8, MPI_CHAR, rb, 8, MPI_CHAR, MPI_COMM_WORLD); break;
          case 4: MPI_Bcast(sb, 8, MPI_CHAR, 0, MPI_COMM_WORLD); break;
          case 5: MPI_Barrier(MPI_COMM_WORLD); break;
          case 6: MPI_Reduce(sb, rb, 2, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD); break;
          case 7: MPI_Allreduce(sb, rb, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
          case 8:
            MPI_Allgatherv(sb, 8, MPI_CHAR, rb, counts, displs, MPI_CHAR, MPI_COMM_WORLD);
            break;
        }
        double b = MPI_Wtime();
        if (i >= 1000) t += b - a;
        MPI_Barrier(MPI_COMM_WORLD);
      }
      double us = t * 1e6 / iters, all[16];
      MPI_Gather(&us, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (r == 0 && rep == 1) {
        printf("%-10s", ops[o]);
        double s = 0;
        for (int i = 0; i < n; i++) {
          printf(" r%d=%.3f", i, all[i]);
          s += all[i];
        }
        printf(" avg=%.3f\n", s / n);
      }
    }
  }
  MPI_Finalize();
}
