// per-call times of MPI_Gatherv at one size (root 0), each after a barrier; then the same size
// after INTERLEAVE calls of MPI_Allgather of the same size between gatherv calls
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int bytes = atoi(argv[1]), calls = atoi(argv[2]);
  char* in = malloc(bytes);
  char* out = malloc((size_t)bytes * size);
  memset(in, 1, bytes);
  memset(out, 0, (size_t)bytes * size);
  int* counts = malloc(sizeof(int) * size);
  int* displs = malloc(sizeof(int) * size);
  for (int i = 0; i < size; ++i) {
    counts[i] = bytes;
    displs[i] = i * bytes;
  }
  double* t = calloc(calls, sizeof(double));
  for (int i = 0; i < calls; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Gatherv(in, bytes, MPI_BYTE, out, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    t[i] = MPI_Wtime() - t0;
  }
  double* all = malloc(sizeof(double) * calls);
  MPI_Reduce(t, all, calls, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int i = 0; i < calls; ++i) printf("%.1f ", all[i] / size * 1e6);
    printf("\n");
  }
  MPI_Finalize();
}
