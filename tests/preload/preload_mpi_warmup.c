/* The MPI's warm-up under the preload (CACHECOMM_PRELOAD_MPI_WARMUP): a plain MPI program that
 * makes, on MPI_COMM_WORLD and on a duplicate, three barriers and then ten calls each of
 * MPI_Allreduce, MPI_Bcast and MPI_Allgather, interleaved, checking every result. Preloaded with a
 * warm-up of N calls, the first N calls of each collective on each communicator pass to MPI and the
 * rest are served (the test counts them in the summary); results are the same either way. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { calls = 10, count = 64 };

static void fail(const char* what, int call) {
  fprintf(stderr, "wrong result: %s, call %d\n", what, call);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void run(MPI_Comm comm) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int* gathered = malloc(sizeof(int) * count * (size_t)size);
  for (int i = 0; i < 3; ++i) MPI_Barrier(comm);
  for (int call = 0; call < calls; ++call) {
    int mine[count];
    int sum[count];
    for (int i = 0; i < count; ++i) mine[i] = rank * 100 + i + call;
    MPI_Allreduce(mine, sum, count, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < count; ++i)
      if (sum[i] != 100 * size * (size - 1) / 2 + size * (i + call)) fail("MPI_Allreduce", call);
    int root = call % size;
    int data[count];
    for (int i = 0; i < count; ++i) data[i] = rank == root ? root * 7 + i + call : -1;
    MPI_Bcast(data, count, MPI_INT, root, comm);
    for (int i = 0; i < count; ++i)
      if (data[i] != root * 7 + i + call) fail("MPI_Bcast", call);
    MPI_Allgather(mine, count, MPI_INT, gathered, count, MPI_INT, comm);
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < count; ++i)
        if (gathered[r * count + i] != r * 100 + i + call) fail("MPI_Allgather", call);
  }
  free(gathered);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm copy;
  MPI_Comm_dup(MPI_COMM_WORLD, &copy);
  run(MPI_COMM_WORLD);
  run(copy);
  MPI_Comm_free(&copy);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("mpi warm-up: %d calls of each collective on two communicators\n", calls);
  MPI_Finalize();
  return 0;
}
