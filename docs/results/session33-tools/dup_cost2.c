/* Cost of communicator creation preloaded, the loop first: (a) dup + 10 allreduces + free, 8 times
 * (the first builds a state, the pool gives it to the others), then (b) 8 dups kept alive. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double x = 1, y;
  MPI_Barrier(MPI_COMM_WORLD);
  double t2 = MPI_Wtime();
  for (int i = 0; i < 8; ++i) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    for (int k = 0; k < 10; ++k) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
    MPI_Comm_free(&c);
  }
  double t3 = MPI_Wtime();
  double t0 = MPI_Wtime();
  MPI_Comm kept[8];
  for (int i = 0; i < 8; ++i) MPI_Comm_dup(MPI_COMM_WORLD, &kept[i]);
  double t1 = MPI_Wtime();
  for (int i = 0; i < 8; ++i) MPI_Comm_free(&kept[i]);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("8 kept dups: %.1f us each; dup+10 allreduce+free: %.1f us a round\n",
           (t1 - t0) / 8 * 1e6, (t3 - t2) / 8 * 1e6);
  MPI_Finalize();
}
