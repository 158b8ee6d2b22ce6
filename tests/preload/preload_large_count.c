/* Plain MPI-4 program that makes every call through its large-count form (MPI_Bcast_c...), as
 * mpi4py does under MPICH and Intel MPI. Rank 0 prints a digest of every result, so the output is
 * the same with and without the preload library; the preloaded run must also serve them.
 *
 * Then MPI windows made by MPI_Win_create_c and MPI_Win_allocate_c, used as mpi4py's test_rma does
 * while the other ranks wait in MPI_Barrier: passive-target epochs (which MPICH completes only
 * while the target is inside MPI) and post/start/complete/test epochs. Before the preload knew the
 * large-count calls the first hung. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "result_digest.h"

static void report(const char* label) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint64_t* all = (uint64_t*)malloc(sizeof(uint64_t) * (size_t)size);
  MPI_Gather_c(&digest, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (rank == 0) print_digests(label, all, size);
  free(all);
  digest = DIGEST_START;
}

static void fill(double* values, MPI_Count n, int rank, int round) {
  for (MPI_Count i = 0; i < n; ++i) values[i] = (double)(rank * 1000 + round * 10) + (double)i;
}

static void blocking(MPI_Comm comm, int round) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const MPI_Count n = round % 2 == 0 ? 37 : 20000; /* slots and the data region */
  const int root = round % size;
  double* in = (double*)malloc(sizeof(double) * (size_t)n);
  double* out = (double*)malloc(sizeof(double) * (size_t)n * (size_t)size);
  double* all = (double*)malloc(sizeof(double) * (size_t)n * (size_t)size);

  fill(out, n, rank == root ? root : -1, round);
  MPI_Bcast_c(out, n, MPI_DOUBLE, root, comm);
  mix(out, sizeof(double) * (size_t)n);

  fill(in, n, rank, round);
  memset(out, 0, sizeof(double) * (size_t)n);
  MPI_Reduce_c(in, out, n, MPI_DOUBLE, MPI_SUM, root, comm);
  if (rank == root) mix(out, sizeof(double) * (size_t)n);
  MPI_Allreduce_c(in, out, n, MPI_DOUBLE, MPI_MAX, comm);
  mix(out, sizeof(double) * (size_t)n);
  MPI_Allreduce_c(MPI_IN_PLACE, in, n, MPI_DOUBLE, MPI_MIN, comm);
  mix(in, sizeof(double) * (size_t)n);

  fill(in, n, rank, round);
  MPI_Allgather_c(in, n, MPI_DOUBLE, all, n, MPI_DOUBLE, comm);
  mix(all, sizeof(double) * (size_t)n * (size_t)size);
  MPI_Gather_c(in, n, MPI_DOUBLE, all, n, MPI_DOUBLE, root, comm);
  if (rank == root) mix(all, sizeof(double) * (size_t)n * (size_t)size);
  MPI_Scatter_c(all, n, MPI_DOUBLE, out, n, MPI_DOUBLE, root, comm);
  mix(out, sizeof(double) * (size_t)n);
  for (MPI_Count i = 0; i < n * size; ++i) all[i] = (double)(rank * 7 + i);
  MPI_Alltoall_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, n, MPI_DOUBLE, comm);
  mix(all, sizeof(double) * (size_t)n * (size_t)size);

  MPI_Scan_c(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
  mix(out, sizeof(double) * (size_t)n);
  MPI_Exscan_c(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
  if (rank != 0) mix(out, sizeof(double) * (size_t)n);
  for (MPI_Count i = 0; i < n * size; ++i) all[i] = (double)(rank + i);
  MPI_Reduce_scatter_block_c(all, out, n, MPI_DOUBLE, MPI_SUM, comm);
  mix(out, sizeof(double) * (size_t)n);

  MPI_Count* counts = (MPI_Count*)malloc(sizeof(MPI_Count) * (size_t)size);
  MPI_Aint* displs = (MPI_Aint*)malloc(sizeof(MPI_Aint) * (size_t)size);
  for (int i = 0; i < size; ++i) {
    counts[i] = (n / size) + i % 2; /* uneven blocks */
    displs[i] = (MPI_Aint)(i * n);
  }
  MPI_Reduce_scatter_c(all, out, counts, MPI_DOUBLE, MPI_SUM, comm);
  mix(out, sizeof(double) * (size_t)counts[rank]);
  MPI_Allgatherv_c(in, counts[rank], MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, comm);
  for (int i = 0; i < size; ++i) mix(all + i * n, sizeof(double) * (size_t)counts[i]);
  MPI_Gatherv_c(in, counts[rank], MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, root, comm);
  if (rank == root)
    for (int i = 0; i < size; ++i) mix(all + i * n, sizeof(double) * (size_t)counts[i]);
  MPI_Scatterv_c(all, counts, displs, MPI_DOUBLE, out, counts[rank], MPI_DOUBLE, root, comm);
  mix(out, sizeof(double) * (size_t)counts[rank]);
  free(counts);
  free(displs);
  free(in);
  free(out);
  free(all);
}

static void nonblocking(MPI_Comm comm, int round) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const MPI_Count n = round % 2 == 0 ? 11 : 5000;
  const int root = (round + 1) % size;
  double* in = (double*)malloc(sizeof(double) * (size_t)n);
  double* out[9];
  for (int i = 0; i < 9; ++i) out[i] = (double*)calloc((size_t)(n * size), sizeof(double));
  double* scatter_source = (double*)malloc(sizeof(double) * (size_t)(n * size));
  double* alltoall_source = (double*)malloc(sizeof(double) * (size_t)(n * size));
  fill(in, n, rank, round);
  fill(out[0], n, rank == root ? root : -1, round);
  for (MPI_Count i = 0; i < n * size; ++i) {
    scatter_source[i] = (double)(root * 3 + i);
    alltoall_source[i] = (double)(rank * 5 + i);
  }
  MPI_Request requests[10];
  MPI_Ibcast_c(out[0], n, MPI_DOUBLE, root, comm, &requests[0]);
  MPI_Iallreduce_c(in, out[1], n, MPI_DOUBLE, MPI_SUM, comm, &requests[1]);
  MPI_Ireduce_c(in, out[2], n, MPI_DOUBLE, MPI_MAX, root, comm, &requests[2]);
  MPI_Iallgather_c(in, n, MPI_DOUBLE, out[3], n, MPI_DOUBLE, comm, &requests[3]);
  MPI_Igather_c(in, n, MPI_DOUBLE, out[4], n, MPI_DOUBLE, root, comm, &requests[4]);
  MPI_Iscatter_c(scatter_source, n, MPI_DOUBLE, out[5], n, MPI_DOUBLE, root, comm, &requests[5]);
  MPI_Ialltoall_c(alltoall_source, n, MPI_DOUBLE, out[6], n, MPI_DOUBLE, comm, &requests[6]);
  MPI_Ireduce_scatter_block_c(alltoall_source, out[7], n, MPI_DOUBLE, MPI_SUM, comm, &requests[7]);
  MPI_Iscan_c(in, out[8], n, MPI_DOUBLE, MPI_SUM, comm, &requests[8]);
  MPI_Waitall(9, requests, MPI_STATUSES_IGNORE);
  double* exscan = (double*)calloc((size_t)n, sizeof(double));
  MPI_Iexscan_c(in, exscan, n, MPI_DOUBLE, MPI_SUM, comm, &requests[9]);
  MPI_Wait(&requests[9], MPI_STATUS_IGNORE);
  const size_t row = sizeof(double) * (size_t)n;
  mix(out[0], row);
  mix(out[1], row);
  if (rank == root) mix(out[2], row);
  mix(out[3], row * (size_t)size);
  if (rank == root) mix(out[4], row * (size_t)size);
  mix(out[5], row);
  mix(out[6], row * (size_t)size);
  mix(out[7], row);
  mix(out[8], row);
  if (rank != 0) mix(exscan, row);
  for (int i = 0; i < 9; ++i) free(out[i]);
  free(exscan);
  free(in);
  free(scatter_source);
  free(alltoall_source);
}

/* mpi4py's testFlush: origin `i` locks every target while the others wait in MPI_Barrier. */
static void passive_target_under_barriers(MPI_Win win, MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int target = 0; target < size; ++target) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
    MPI_Win_flush(target, win);
    MPI_Win_unlock(target, win);
  }
  MPI_Barrier(comm);
  for (int origin = 0; origin < size; ++origin) {
    if (origin == rank) {
      usleep(20000); /* the others are asleep in the barrier by now */
      MPI_Win_lock_all(0, win);
      MPI_Win_flush_all(win);
      MPI_Win_unlock_all(win);
    }
    MPI_Barrier(comm);
  }
}

/* mpi4py's testStartCompletePostTest: the origin's complete and the target's test (then wait)
 * around two barriers; 1 when the test alone saw the epoch over on every rank. */
static int exposure_over_after_barriers(MPI_Win win, MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size < 2) return 1;
  MPI_Group world_group, group;
  MPI_Comm_group(comm, &world_group);
  const int zero = 0;
  int flag = 1;
  if (rank == 0) {
    MPI_Group_excl(world_group, 1, &zero, &group);
    MPI_Win_start(group, 0, win);
    MPI_Barrier(comm);
    MPI_Win_complete(win);
    MPI_Barrier(comm);
  } else {
    MPI_Group_incl(world_group, 1, &zero, &group);
    MPI_Win_post(group, 0, win);
    MPI_Barrier(comm);
    MPI_Barrier(comm);
    MPI_Win_test(win, &flag);
    if (!flag) MPI_Win_wait(win);
  }
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  int all = 0;
  MPI_Allreduce_c(&flag, &all, 1, MPI_INT, MPI_LAND, comm);
  return all;
}

static void windows(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  void* memory = NULL;
  MPI_Alloc_mem(800, MPI_INFO_NULL, &memory);
  memset(memory, 0, 800);
  MPI_Win created;
  MPI_Win_create_c(memory, 800, 1, MPI_INFO_NULL, comm, &created);
  for (int round = 0; round < 3; ++round) passive_target_under_barriers(created, comm);
  /* Whether MPI_Win_test already says so depends on timing even without the preload (MPICH);
   * what must hold is that the epochs end. */
  for (int round = 0; round < 3; ++round) (void)exposure_over_after_barriers(created, comm);
  if (rank == 0) printf("exposure epochs over\n");
  MPI_Win_free(&created);
  MPI_Free_mem(memory);

  /* Fence epochs on an allocated window: each rank puts its rank into its right neighbour and gets
   * its left neighbour's slot back. */
  long long* base = NULL;
  MPI_Win allocated;
  MPI_Win_allocate_c(sizeof(long long) * 4, sizeof(long long), MPI_INFO_NULL, comm, &base,
                     &allocated);
  for (int i = 0; i < 4; ++i) base[i] = -1;
  const long long mine = 100 + rank;
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  MPI_Win_fence(0, allocated);
  MPI_Put_c(&mine, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, allocated);
  MPI_Accumulate_c(&mine, 1, MPI_LONG_LONG, right, 1, 1, MPI_LONG_LONG, MPI_REPLACE, allocated);
  MPI_Win_fence(0, allocated);
  long long fetched[2] = {0, 0};
  MPI_Get_c(fetched, 1, MPI_LONG_LONG, left, 0, 1, MPI_LONG_LONG, allocated);
  MPI_Get_accumulate_c(&mine, 1, MPI_LONG_LONG, fetched + 1, 1, MPI_LONG_LONG, left, 1, 1,
                       MPI_LONG_LONG, MPI_NO_OP, allocated);
  MPI_Win_fence(0, allocated);
  int right_values = base[0] == 100 + left && base[1] == 100 + left;
  int got_back = fetched[0] == 100 + ((left + size - 1) % size) && fetched[1] == fetched[0];
  int all_right = 0;
  int ok = right_values && got_back;
  MPI_Allreduce_c(&ok, &all_right, 1, MPI_INT, MPI_LAND, comm);
  if (rank == 0) printf("allocated window puts and gets right on every rank: %d\n", all_right);
  MPI_Win_free(&allocated);

  /* A shared window: every rank sees every other's slot through MPI_Win_shared_query_c. */
  int* shared = NULL;
  MPI_Win shared_win;
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Win_allocate_shared_c(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &shared, &shared_win);
  MPI_Win_fence(0, shared_win);
  *shared = 7 * rank + 1;
  MPI_Win_fence(0, shared_win);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  int seen = 1;
  for (int peer = 0; peer < node_size; ++peer) {
    MPI_Aint bytes = 0, unit = 0;
    int* slot = NULL;
    MPI_Win_shared_query_c(shared_win, peer, &bytes, &unit, &slot);
    int peer_world = 0;
    MPI_Group node_group, world_group;
    MPI_Comm_group(node, &node_group);
    MPI_Comm_group(comm, &world_group);
    MPI_Group_translate_ranks(node_group, 1, &peer, world_group, &peer_world);
    MPI_Group_free(&node_group);
    MPI_Group_free(&world_group);
    seen = seen && bytes == (MPI_Aint)sizeof(int) && unit == (MPI_Aint)sizeof(int) &&
           *slot == 7 * peer_world + 1;
  }
  MPI_Win_fence(0, shared_win);
  int all_seen = 0;
  MPI_Allreduce_c(&seen, &all_seen, 1, MPI_INT, MPI_LAND, comm);
  if (rank == 0) printf("shared window slots seen through the large-count query: %d\n", all_seen);
  MPI_Win_free(&shared_win);
  MPI_Comm_free(&node);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  for (int round = 0; round < 12; ++round) {
    blocking(round % 3 == 2 ? dup : MPI_COMM_WORLD, round);
    report("blocking");
  }
  for (int round = 0; round < 8; ++round) {
    nonblocking(MPI_COMM_WORLD, round);
    report("nonblocking");
  }
  windows(MPI_COMM_WORLD);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
