/* Plain MPI program: collectives on MPI_COMM_WORLD and on derived communicators (dup, split,
 * create), with MPI_IN_PLACE, several roots and predefined types and operations. Rank 0 prints a
 * digest of every result, so the output is the same with and without the preload library. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result_digest.h"

/* Each rank folds its results in; rank 0 prints the digests of all ranks. */
static void report(const char* label, MPI_Comm world) {
  int rank, size;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  uint64_t* all = (uint64_t*)malloc(sizeof(uint64_t) * (size_t)size);
  MPI_Gather(&digest, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, world);
  if (rank == 0) print_digests(label, all, size);
  free(all);
  digest = DIGEST_START;
}

static void exercise(MPI_Comm comm, int iterations) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  enum { n = 37, big = 1 << 17 };
  for (int it = 0; it < iterations; ++it) {
    MPI_Barrier(comm);

    int root = it % size;
    int ints[n];
    for (int i = 0; i < n; ++i) ints[i] = rank == root ? it * 1000 + i : -1;
    MPI_Bcast(ints, n, MPI_INT, root, comm);
    mix(ints, sizeof ints);

    double* doubles = (double*)malloc(sizeof(double) * big);
    for (int i = 0; i < big; ++i) doubles[i] = rank == root ? (double)(i * 3 + it) : 0.0;
    MPI_Bcast(doubles, big, MPI_DOUBLE, root, comm);
    mix(doubles, sizeof(double) * big);
    free(doubles);

    char text[19];
    memset(text, 0, sizeof text);
    snprintf(text, sizeof text, "root %d iter %d", root, it);
    MPI_Bcast(text, (int)sizeof text, MPI_CHAR, root, comm);
    mix(text, sizeof text);

    /* Exactly representable values: every summation order gives the same result. */
    double values[n], sums[n], mins[n], maxs[n];
    for (int i = 0; i < n; ++i) values[i] = (double)((rank + 1) * (i + 1) + it);
    MPI_Allreduce(values, sums, n, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Allreduce(values, mins, n, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(values, maxs, n, MPI_DOUBLE, MPI_MAX, comm);
    mix(sums, sizeof sums);
    mix(mins, sizeof mins);
    mix(maxs, sizeof maxs);

    long long counters[4] = {rank, 1, (long long)rank * rank, it};
    MPI_Allreduce(MPI_IN_PLACE, counters, 4, MPI_LONG_LONG, MPI_SUM, comm);
    mix(counters, sizeof counters);

    unsigned bits = 1u << (rank % 31), bor = 0, band = 0, bxor = 0;
    MPI_Allreduce(&bits, &bor, 1, MPI_UNSIGNED, MPI_BOR, comm);
    MPI_Allreduce(&bits, &band, 1, MPI_UNSIGNED, MPI_BAND, comm);
    MPI_Allreduce(&bits, &bxor, 1, MPI_UNSIGNED, MPI_BXOR, comm);
    mix(&bor, sizeof bor);
    mix(&band, sizeof band);
    mix(&bxor, sizeof bxor);

    int flag = rank % 2, land = 0, lor = 0, lxor = 0;
    MPI_Allreduce(&flag, &land, 1, MPI_INT, MPI_LAND, comm);
    MPI_Allreduce(&flag, &lor, 1, MPI_INT, MPI_LOR, comm);
    MPI_Allreduce(&flag, &lxor, 1, MPI_INT, MPI_LXOR, comm);
    mix(&land, sizeof land);
    mix(&lor, sizeof lor);
    mix(&lxor, sizeof lxor);

    /* OSU's reduction benchmarks reduce MPI_CHAR with MPI_SUM: served as C's char. */
    char chars[4] = {(char)(rank + 1), (char)(10 - rank), 3, (char)(it % 7)}, char_sums[4] = {0};
    MPI_Allreduce(chars, char_sums, 4, MPI_CHAR, MPI_SUM, comm);
    mix(char_sums, sizeof char_sums);
    MPI_Reduce(chars, char_sums, 4, MPI_CHAR, MPI_MAX, root, comm);
    if (rank == root) mix(char_sums, sizeof char_sums);

    float small[3] = {(float)rank + 1, 2.0f, 0.5f}, product[3];
    MPI_Allreduce(small, product, 3, MPI_FLOAT, MPI_PROD, comm);
    mix(product, sizeof product);

    short shorts[5] = {(short)rank, (short)-rank, 7, (short)(it), 1};
    short shorts_out[5] = {0};
    MPI_Reduce(shorts, shorts_out, 5, MPI_SHORT, MPI_SUM, root, comm);
    if (rank == root) mix(shorts_out, sizeof shorts_out);

    int64_t in_place[6];
    for (int i = 0; i < 6; ++i) in_place[i] = (int64_t)(rank * 10 + i);
    if (rank == root) {
      MPI_Reduce(MPI_IN_PLACE, in_place, 6, MPI_INT64_T, MPI_MAX, root, comm);
      mix(in_place, sizeof in_place);
    } else {
      MPI_Reduce(in_place, NULL, 6, MPI_INT64_T, MPI_MAX, root, comm);
    }

    int mine[3] = {rank, rank * rank, it};
    int* gathered = (int*)malloc(sizeof(int) * 3 * (size_t)size);
    MPI_Allgather(mine, 3, MPI_INT, gathered, 3, MPI_INT, comm);
    mix(gathered, sizeof(int) * 3 * (size_t)size);
    for (int i = 0; i < 3 * size; ++i) gathered[i] = -1;
    gathered[3 * rank] = rank + 100;
    gathered[3 * rank + 1] = it;
    gathered[3 * rank + 2] = -rank;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered, 3, MPI_INT, comm);
    mix(gathered, sizeof(int) * 3 * (size_t)size);
    /* Same bytes, different (matching) type descriptions: 3 ints sent as 12 bytes. */
    MPI_Allgather(mine, 12, MPI_BYTE, gathered, 3, MPI_INT, comm);
    mix(gathered, sizeof(int) * 3 * (size_t)size);
    free(gathered);
  }
}

/* Calls that move no data (every count zero), between calls that do: each returns MPI_SUCCESS and
 * leaves every buffer as it was, the ranks stay in step, and an empty MPI_Bcast right after a
 * nonblocking broadcast that is still pending leaves that broadcast's result right. */
static void empty_calls(MPI_Comm comm, int iterations) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  enum { sentinel = 0x5a5a5a5a };
  int send[4] = {sentinel, sentinel, sentinel, sentinel};
  int recv[4] = {sentinel, sentinel, sentinel, sentinel};
  int failures = 0;
  for (int it = 0; it < iterations; ++it) {
    const int root = it % size;
    failures += MPI_Bcast(recv, 0, MPI_INT, root, comm) != MPI_SUCCESS;
    failures += MPI_Reduce(send, recv, 0, MPI_INT, MPI_SUM, root, comm) != MPI_SUCCESS;
    failures += MPI_Allreduce(send, recv, 0, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS;
    failures += MPI_Allgather(send, 0, MPI_INT, recv, 0, MPI_INT, comm) != MPI_SUCCESS;
    failures += MPI_Gather(send, 0, MPI_INT, recv, 0, MPI_INT, root, comm) != MPI_SUCCESS;
    failures += MPI_Scatter(send, 0, MPI_INT, recv, 0, MPI_INT, root, comm) != MPI_SUCCESS;
    failures += MPI_Alltoall(send, 0, MPI_INT, recv, 0, MPI_INT, comm) != MPI_SUCCESS;
    failures += MPI_Scan(send, recv, 0, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS;
    failures += MPI_Exscan(send, recv, 0, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS;
    failures += MPI_Reduce_scatter_block(send, recv, 0, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS;
    for (int i = 0; i < 4; ++i) failures += send[i] != sentinel || recv[i] != sentinel;

    int value = rank + it, total = 0;
    MPI_Allreduce(&value, &total, 1, MPI_INT, MPI_SUM, comm);
    mix(&total, sizeof total);

    int pending[3] = {rank == root ? it : -1, rank == root ? 2 * it : -1, rank == root ? 7 : -1};
    MPI_Request request;
    MPI_Ibcast(pending, 3, MPI_INT, root, comm, &request);
    failures += MPI_Bcast(recv, 0, MPI_INT, root, comm) != MPI_SUCCESS;
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    mix(pending, sizeof pending);
  }
  mix(&failures, sizeof failures);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = 12;

  exercise(MPI_COMM_WORLD, iterations);
  report("world", MPI_COMM_WORLD);

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  exercise(dup, iterations);
  report("dup", MPI_COMM_WORLD);

  MPI_Comm halves;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &halves);
  exercise(halves, iterations);
  report("split", MPI_COMM_WORLD);

  empty_calls(MPI_COMM_WORLD, iterations);
  empty_calls(halves, iterations);
  report("empty", MPI_COMM_WORLD);

  MPI_Group world_group, low_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int low = (size + 1) / 2;
  int range[1][3] = {{0, low - 1, 1}};
  MPI_Group_range_incl(world_group, 1, range, &low_group);
  MPI_Comm low_comm;
  MPI_Comm_create(MPI_COMM_WORLD, low_group, &low_comm);
  if (low_comm != MPI_COMM_NULL) exercise(low_comm, iterations);
  report("create", MPI_COMM_WORLD);

  /* A communicator created and freed over and over: states must be built and freed with it. */
  for (int round = 0; round < 4; ++round) {
    MPI_Comm scratch;
    MPI_Comm_dup(dup, &scratch);
    exercise(scratch, 5);
    MPI_Comm_free(&scratch);
  }
  report("dup-free-rounds", MPI_COMM_WORLD);

  MPI_Group_free(&low_group);
  MPI_Group_free(&world_group);
  if (low_comm != MPI_COMM_NULL) MPI_Comm_free(&low_comm);
  MPI_Comm_free(&halves);
  /* `dup` is left for MPI_Finalize to clean up. */
  MPI_Finalize();
  return 0;
}
