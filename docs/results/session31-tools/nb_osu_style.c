#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
/* OSU-style: barrier between iterations, time only the start+wait, average over ranks. */
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  int bytes = argc > 2 ? atoi(argv[2]) : 8;
  int mode = argc > 3 ? atoi(argv[3]) : 0; /* 0 ibcast, 1 iallreduce, 2 bcast */
  int pbar = argc > 4 ? atoi(argv[4]) : 0; /* 1: PMPI_Barrier between iterations */
  char buf[4096];
  char out[4096];
  for (int i = 0; i < bytes; ++i) buf[i] = (char)i;
  for (int rep = 0; rep < 3; ++rep) {
    double tot = 0, t0 = 0, t1 = 0;
    for (int i = 0; i < n; ++i) {
      MPI_Request r;
      double t = MPI_Wtime();
      if (mode == 0) {
        MPI_Ibcast(buf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
        t0 += MPI_Wtime() - t;
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      } else if (mode == 1) {
        MPI_Iallreduce(buf, out, bytes, MPI_BYTE, MPI_MAX, MPI_COMM_WORLD, &r);
        t0 += MPI_Wtime() - t;
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      } else
        MPI_Bcast(buf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
      tot += MPI_Wtime() - t;
      if (pbar)
        PMPI_Barrier(MPI_COMM_WORLD);
      else
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double all[64], st[64];
    MPI_Gather(&tot, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(&t0, 1, MPI_DOUBLE, st, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      printf("mode %d bar %s:", mode, pbar ? "PMPI" : "MPI ");
      for (int k = 0; k < size; ++k)
        printf(" r%d %.3f (start %.3f)", k, all[k] / n * 1e6, st[k] / n * 1e6);
      printf("\n");
    }
  }
  MPI_Finalize();
}
