/* Plain MPI program that makes no blocking collective call at all: only MPI_Ibarrier,
 * MPI_Iallreduce and MPI_Ibcast, each completed with MPI_Wait (as OSU's osu_ibarrier does, or a
 * solver that only overlaps its reductions), on MPI_COMM_WORLD and on communicators made from it
 * by MPI_Comm_dup, MPI_Comm_dup_with_info, MPI_Comm_split and MPI_Comm_split_type. The preload
 * builds the world's state at MPI_Init and each child's in the call that makes it, so these are
 * served from the first call; the test's summary checks that none passed to MPI.
 * With the argument "many-children", 12 duplicates of the world: the preload builds the first 8
 * in MPI_Comm_dup (CACHECOMM_PRELOAD_EAGER_CHILDREN), the others' calls pass to MPI (warming-up),
 * and every result must be right either way.
 * Results are checked against values every rank can compute, and the last rank starting its
 * barrier late (sequenced by point-to-point messages) must hold the others' barrier back. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "nonblocking_check.h"

/* `rounds` of a barrier, an allreduce and a broadcast on `comm`, checked. */
static void exercise(MPI_Comm comm, int rounds) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  enum { count = 5 };
  for (int i = 0; i < rounds; ++i) {
    MPI_Request request;
    MPI_Ibarrier(comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);

    int in[count], out[count];
    for (int k = 0; k < count; ++k) in[k] = rank * (k + 1) + i;
    MPI_Iallreduce(in, out, count, MPI_INT, MPI_SUM, comm, &request);
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
    MPI_Ibcast(values, 3, MPI_DOUBLE, root, comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    for (int k = 0; k < 3; ++k)
      CHECK(values[k] == 1000.0 * i + k + 0.5, "round %d: ibcast value %d is %g", i, k, values[k]);
  }
}

/* The last rank of `comm` starts its barrier late; no other rank's may complete before that. */
static void late_barrier(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* Rank 0 tells it when the others have started theirs. */
  MPI_Request request;
  if (rank != size - 1) {
    MPI_Ibarrier(comm, &request);
    int flag = 0;
    MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "the ibarrier completed before the last rank started it");
    if (rank == 0) MPI_Send(&flag, 1, MPI_INT, size - 1, 7, comm);
    sleep_ms(50);
    MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "the ibarrier completed before the last rank started it");
  } else {
    int token = 0;
    if (size > 1) MPI_Recv(&token, 1, MPI_INT, 0, 7, comm, MPI_STATUS_IGNORE);
    sleep_ms(100);
    MPI_Ibarrier(comm, &request);
  }
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  enum { rounds = 200, children = 12 };
  if (argc > 1 && strcmp(argv[1], "many-children") == 0) {
    MPI_Comm dups[children];
    for (int c = 0; c < children; ++c) MPI_Comm_dup(MPI_COMM_WORLD, &dups[c]);
    for (int c = 0; c < children; ++c) exercise(dups[c], 20);
    for (int c = 0; c < children; ++c) MPI_Comm_free(&dups[c]);
    if (world_rank == 0)
      printf("nonblocking-only: %d duplicates checked on %d ranks\n", children, size);
    MPI_Finalize();
    return 0;
  }
  exercise(MPI_COMM_WORLD, rounds);
  late_barrier(MPI_COMM_WORLD);

  MPI_Comm dup, dup_info, halves, node;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup_info);
  MPI_Info_free(&info);
  /* Odd and even world ranks, in reverse order: the children's rank 0 is not the world's. */
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, size - world_rank, &halves);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm made[] = {dup, dup_info, halves, node};
  for (int c = 0; c < 4; ++c) {
    exercise(made[c], rounds / 4);
    late_barrier(made[c]);
  }
  for (int c = 0; c < 4; ++c) MPI_Comm_free(&made[c]);
  if (world_rank == 0)
    printf("nonblocking-only: %d rounds checked on %d ranks, and on 4 children\n", rounds, size);
  MPI_Finalize();
  return 0;
}
