#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  /* argv[4] "multiple": MPI_THREAD_MULTIPLE (mpi4py's level) */
  int provided = 0;
  MPI_Init_thread(
      &argc, &argv,
      argc > 4 && strcmp(argv[4], "multiple") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
      &provided);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = argc > 1 ? atoi(argv[1]) : 200000;
  int bytes = argc > 2 ? atoi(argv[2]) : 8;
  int mode = argc > 3 ? atoi(argv[3]) : 0; /* 0 ibcast, 1 iallreduce, 2 bcast */
  char buf[4096];
  char out[4096];
  for (int i = 0; i < bytes; ++i) buf[i] = (char)i;
  for (int w = 0; w < 50; ++w) MPI_Barrier(MPI_COMM_WORLD);
  for (int rep = 0; rep < 3; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      MPI_Request r;
      if (mode == 0) {
        MPI_Ibcast(buf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      } else if (mode == 1) {
        MPI_Iallreduce(buf, out, bytes, MPI_BYTE, MPI_MAX, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      } else
        MPI_Bcast(buf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    t = MPI_Wtime() - t;
    if (rank == 0) printf("mode %d bytes %d: %.3f us\n", mode, bytes, t / n * 1e6);
  }
  MPI_Finalize();
}
