/* Cost of communicator creation, plain or preloaded (run with CACHECOMM_PRELOAD_EAGER_CHILDREN=8
 * or 0): (a) 8 duplicates of the world kept alive, each a new group's state where the world's
 * first 8 children are built in MPI_Comm_dup, then freed; (b) 8 rounds of dup, 10 allreduces of
 * 8 B and free (the first round builds a state, the pool gives it to the others). The argument
 * "loop-first" runs (b) before (a), so that (b) gets the world's first children. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static double kept_dups(void) {
  MPI_Comm kept[8];
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < 8; ++i) MPI_Comm_dup(MPI_COMM_WORLD, &kept[i]);
  const double each = (MPI_Wtime() - start) / 8;
  for (int i = 0; i < 8; ++i) MPI_Comm_free(&kept[i]);
  return each;
}

static double dup_use_free(void) {
  double x = 1, y;
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < 8; ++i) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    for (int k = 0; k < 10; ++k) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
    MPI_Comm_free(&c);
  }
  return (MPI_Wtime() - start) / 8;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int loop_first = argc > 1 && strcmp(argv[1], "loop-first") == 0;
  double kept = 0, loop = 0;
  if (loop_first) loop = dup_use_free();
  kept = kept_dups();
  if (!loop_first) loop = dup_use_free();
  if (rank == 0)
    printf("8 kept dups: %.1f us each; dup + 10 allreduces + free: %.1f us a round\n", kept * 1e6,
           loop * 1e6);
  MPI_Finalize();
  return 0;
}
