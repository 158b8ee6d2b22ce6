/* Plain MPI program that makes no blocking collective call at all: only MPI_Ibarrier,
 * MPI_Iallreduce and MPI_Ibcast on MPI_COMM_WORLD, each completed with MPI_Wait (as OSU's
 * osu_ibarrier does, or a solver that only overlaps its reductions). The preload builds the
 * world's state at MPI_Init, so these are served from the first call; the test's summary checks
 * that none passed to MPI. Results are checked against values every rank can compute, and the
 * last rank starting its barrier late (sequenced by point-to-point messages) must hold the
 * others' barrier back. */
#include <mpi.h>
#include <stdio.h>

#include "nonblocking_check.h"

static int rank, size;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  world_rank = rank;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  enum { rounds = 200, count = 5 };
  for (int i = 0; i < rounds; ++i) {
    MPI_Request request;
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);

    int in[count], out[count];
    for (int k = 0; k < count; ++k) in[k] = rank * (k + 1) + i;
    MPI_Iallreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    for (int k = 0; k < count; ++k) {
      const int expected = (k + 1) * size * (size - 1) / 2 + size * i;
      CHECK(out[k] == expected, "round %d: iallreduce element %d is %d, not %d", i, k, out[k],
            expected);
    }

    const int root = i % size;
    double values[3] = {0, 0, 0};
    if (rank == root)
      for (int k = 0; k < 3; ++k) values[k] = 1000.0 * i + k + 0.5;
    MPI_Ibcast(values, 3, MPI_DOUBLE, root, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    for (int k = 0; k < 3; ++k)
      CHECK(values[k] == 1000.0 * i + k + 0.5, "round %d: ibcast value %d is %g", i, k, values[k]);
  }
  /* The last rank starts its barrier late; no other rank's may complete before that. Rank 0
   * tells it when the others have started theirs. */
  MPI_Request request;
  if (rank != size - 1) {
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    int flag = 0;
    MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "the ibarrier completed before the last rank started it");
    if (rank == 0) MPI_Send(&flag, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD);
    sleep_ms(50);
    MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "the ibarrier completed before the last rank started it");
  } else {
    int token = 0;
    if (size > 1) MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sleep_ms(100);
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
  }
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (rank == 0) printf("nonblocking-only: %d rounds checked on %d ranks\n", rounds, size);
  MPI_Finalize();
  return 0;
}
