/* Nonblocking calls back to back (start + MPI_Wait) at a chosen thread level: argv[1] =
 * single|multiple. Prints, per call and size, the best of 5 batches' mean time per call in
 * microseconds. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  int provided, want = (argc > 1 && strcmp(argv[1], "multiple") == 0) ? MPI_THREAD_MULTIPLE
                                                                      : MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, want, &provided);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int sizes[] = {8, 4096, 65536};
  const char* names[] = {"iallreduce", "ibcast", "iallgather", "ibarrier"};
  char* a = malloc(1 << 20);
  char* b = malloc(1 << 21);
  memset(a, 1, 1 << 20);
  for (int op = 0; op < 4; ++op)
    for (int s = 0; s < 3; ++s) {
      if (op == 3 && s > 0) break;
      int n = sizes[s];
      double best = 1e30;
      for (int batch = 0; batch < 6; ++batch) {
        int iters = n >= 65536 ? 200 : 2000;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; ++i) {
          MPI_Request r;
          if (op == 0)
            MPI_Iallreduce(a, b, n / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r);
          else if (op == 1)
            MPI_Ibcast(a, n, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
          else if (op == 2)
            MPI_Iallgather(a, n, MPI_BYTE, b, n, MPI_BYTE, MPI_COMM_WORLD, &r);
          else
            MPI_Ibarrier(MPI_COMM_WORLD, &r);
          MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        double t = (MPI_Wtime() - t0) / iters * 1e6, worst;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (batch > 0 && worst < best) best = worst;
      }
      if (rank == 0) printf("%s %d %.3f\n", names[op], op == 3 ? 0 : n, best);
    }
  MPI_Finalize();
  return 0;
}
