#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char buf[8];
  float f[2] = {0}, g[2];
  const int n = 2000000;
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) MPI_Bcast(buf, 0, MPI_BYTE, 0, MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    for (int i = 0; i < n; ++i) MPI_Allreduce(f, g, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    for (int i = 0; i < n; ++i) MPI_Allgather(buf, 0, MPI_BYTE, g, 0, MPI_BYTE, MPI_COMM_WORLD);
    double t3 = MPI_Wtime();
    if (rank == 0)
      printf("ns/call bcast %.1f allreduce %.1f allgather %.1f\n", (t1 - t0) / n * 1e9,
             (t2 - t1) / n * 1e9, (t3 - t2) / n * 1e9);
  }
  MPI_Finalize();
}
