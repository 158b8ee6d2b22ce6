/* Plain MPI program: MPI_Iallgatherv and MPI_Ireduce_scatter (per-rank counts every rank knows) on
 * MPI_COMM_WORLD and a split in reversed rank order, against the system MPI's blocking answer
 * computed in the same run through the PMPI_ names. Iallgatherv: counts that differ per rank
 * (zeros among them), displacements in reverse order with gaps that must stay untouched, equal
 * counts one block apart (an allgather) with some ranks' layouts strided, in place,
 * a strided receive type, ranks whose send layouts differ (strided, a struct with gaps,
 * contiguous), and blocks beyond the preload's slot. Ireduce_scatter: several types and operations,
 * counts with zeros, in place, vectors beyond the slot. Several calls outstanding at once (more
 * than the preload's ring), datatypes freed right after the start. The program aborts on a wrong
 * result, and rank 0 prints what was checked, so the output is the same with and without the
 * preload. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nonblocking_check.h"

static const int poison = -4242;

/* Elements rank r gives (Iallgatherv): varies with r and the case, zeros included. */
static int count_of(int r, int scale, int shift) {
  return ((r + shift) % 4) * scale;
}

/* Ints with gaps: element i at 2i (strided), or pairs at 0 and 3 of every 5 (struct). */
static MPI_Datatype strided_int(void) {
  MPI_Datatype t;
  MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &t);
  MPI_Type_commit(&t);
  return t;
}
static MPI_Datatype gapped_pair(void) {
  const int lengths[2] = {1, 1};
  const MPI_Aint displacements[2] = {0, 3 * (MPI_Aint)sizeof(int)};
  const MPI_Datatype members[2] = {MPI_INT, MPI_INT};
  MPI_Datatype inner, t;
  MPI_Type_create_struct(2, lengths, displacements, members, &inner);
  MPI_Type_create_resized(inner, 0, 5 * (MPI_Aint)sizeof(int), &t);
  MPI_Type_free(&inner);
  MPI_Type_commit(&t);
  return t;
}

static long gathers_checked, reductions_checked;
/* Blocks of up to 3 x scale ints (2 x at 2 ranks): this scale is beyond the preload's 256 KiB slot.
 */
enum { beyond_slot_scale = 40000 };

/* One Iallgatherv of ints, each rank with layouts of its own (rotated by rank from the case's):
 * send layout 0 contiguous, 1 strided, 2 struct (counts are even); a strided result or not. */
static void allgatherv_case(MPI_Comm comm, int scale, int shift, int in_place, int send_case,
                            int strided_case) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* Beyond the slot every rank gets the case's layouts: those calls go to the system MPI, and
   * MPICH 4.0's own MPI_Iallgatherv loses blocks there when the ranks' layouts differ. */
  const int rotation = scale < beyond_slot_scale ? rank : 0;
  const int send_layout = (send_case + rotation) % 3,
            strided_result = (strided_case + rotation) % 2;
  int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
  int total = 0;
  for (int r = 0; r < size; ++r) total += counts[r] = count_of(r, scale, shift);
  /* Reverse order, a gap of 3 elements before each block; none before the first at 1 rank, where
   * MPICH 4.0's MPI_Allgatherv and MPI_Iallgatherv ignore the displacement (both write at 0). */
  int at = size > 1 ? 3 : 0;
  for (int r = size - 1; r >= 0; --r) {
    displs[r] = at;
    at += counts[r] + 3;
  }
  const int elements = at, stride = strided_result ? 2 : 1;
  int* want = malloc(sizeof(int) * (size_t)elements);
  int* got = malloc(sizeof(int) * (size_t)elements * 2);
  const int mine_count = counts[rank];
  int* mine = malloc(sizeof(int) * ((size_t)mine_count * 3 + 2));
  for (int i = 0; i < elements; ++i) want[i] = poison;
  for (int i = 0; i < mine_count * 3 + 2; ++i) mine[i] = poison;
  int* plain = malloc(sizeof(int) * ((size_t)mine_count + 1));
  for (int i = 0; i < mine_count; ++i) plain[i] = rank * 1000 + i;
  PMPI_Allgatherv(plain, mine_count, MPI_INT, want, counts, displs, MPI_INT, comm);
  for (int i = 0; i < elements * 2; ++i) got[i] = poison;
  if (in_place)
    for (int i = 0; i < mine_count; ++i) got[(displs[rank] + i) * stride] = plain[i];
  MPI_Datatype send_type = MPI_INT, recv_type = strided_result ? strided_int() : MPI_INT;
  int send_count = mine_count;
  if (send_layout == 1) {
    send_type = strided_int();
    for (int i = 0; i < mine_count; ++i) mine[2 * i] = plain[i];
  } else if (send_layout == 2) {
    send_type = gapped_pair();
    send_count = mine_count / 2;
    for (int i = 0; i < mine_count; ++i) mine[i / 2 * 5 + i % 2 * 3] = plain[i];
  } else {
    memcpy(mine, plain, sizeof(int) * (size_t)mine_count);
  }
  MPI_Request request;
  MPI_Iallgatherv(in_place ? MPI_IN_PLACE : mine, send_count, send_type, got, counts, displs,
                  recv_type, comm, &request);
  if (send_type != MPI_INT) MPI_Type_free(&send_type);
  if (recv_type != MPI_INT) MPI_Type_free(&recv_type);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  for (int i = 0; i < elements * 2; ++i) {
    const int expected = i % stride == 0 && i / stride < elements ? want[i / stride] : poison;
    CHECK(got[i] == expected,
          "iallgatherv scale %d shift %d in_place %d send layout %d strided %d: int %d is %d, "
          "want %d",
          scale, shift, in_place, send_layout, strided_result, i, got[i], expected);
  }
  ++gathers_checked;
  free(counts);
  free(displs);
  free(want);
  free(got);
  free(mine);
  free(plain);
}

/* Equal counts one block apart (an allgather, which the preload serves as one when the types are
 * dense), with odd ranks receiving into a strided type (served through the request's buffers):
 * both must meet on the same path. */
static void uniform_case(MPI_Comm comm, int n, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
  for (int r = 0; r < size; ++r) {
    counts[r] = n;
    displs[r] = r * n;
  }
  const size_t all = (size_t)n * (size_t)size;
  const int stride = rank % 2 ? 2 : 1;
  int *mine = malloc(sizeof(int) * (size_t)n), *want = malloc(sizeof(int) * all),
      *got = malloc(sizeof(int) * all * 2);
  for (int i = 0; i < n; ++i) mine[i] = rank * 1000 + i;
  PMPI_Allgatherv(mine, n, MPI_INT, want, counts, displs, MPI_INT, comm);
  for (size_t i = 0; i < all * 2; ++i) got[i] = poison;
  if (in_place)
    for (int i = 0; i < n; ++i)
      got[((size_t)rank * (size_t)n + (size_t)i) * (size_t)stride] = mine[i];
  MPI_Datatype recv_type = rank % 2 ? strided_int() : MPI_INT;
  MPI_Request request;
  MPI_Iallgatherv(in_place ? MPI_IN_PLACE : mine, n, MPI_INT, got, counts, displs, recv_type, comm,
                  &request);
  if (recv_type != MPI_INT) MPI_Type_free(&recv_type);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  for (size_t i = 0; i < all * 2; ++i) {
    const int expected =
        i % (size_t)stride == 0 && i / (size_t)stride < all ? want[i / (size_t)stride] : poison;
    CHECK(got[i] == expected, "uniform iallgatherv n %d in_place %d: int %zu is %d, want %d", n,
          in_place, i, got[i], expected);
  }
  ++gathers_checked;
  free(counts);
  free(displs);
  free(mine);
  free(want);
  free(got);
}

static void reduce_scatter_case(MPI_Comm comm, MPI_Datatype type, size_t bytes, MPI_Op op,
                                int scale, int in_place) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int* counts = malloc(sizeof(int) * (size_t)size);
  int total = 0;
  for (int r = 0; r < size; ++r) total += counts[r] = count_of(r, scale, 1);
  const size_t all = (size_t)total * bytes + 8;
  unsigned char *input = malloc(all), *want = malloc(all), *got = malloc(all);
  for (int i = 0; i < total; ++i) {
    const int v = (rank * 7 + i * 3) % 23 - 5; /* exact in every type and order */
    if (type == MPI_INT) ((int*)input)[i] = v;
    if (type == MPI_DOUBLE) ((double*)input)[i] = v;
    if (type == MPI_FLOAT) ((float*)input)[i] = (float)v;
  }
  memset(want, 0x3c, all);
  PMPI_Reduce_scatter(input, want, counts, type, op, comm);
  memset(got, 0x3c, all);
  if (in_place) memcpy(got, input, (size_t)total * bytes);
  MPI_Request request;
  MPI_Ireduce_scatter(in_place ? MPI_IN_PLACE : input, got, counts, type, op, comm, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  CHECK(memcmp(got, want, (size_t)counts[rank] * bytes) == 0,
        "ireduce_scatter scale %d in_place %d: wrong result", scale, in_place);
  if (!in_place)
    CHECK(memcmp(got + (size_t)counts[rank] * bytes, want + (size_t)counts[rank] * bytes, 8) == 0,
          "ireduce_scatter wrote past its segment");
  ++reductions_checked;
  free(counts);
  free(input);
  free(want);
  free(got);
}

/* Several at once, mixed with each other: more than the preload's smallest ring, 4 slots. */
static void outstanding(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  enum { calls = 6, n = 5 };
  int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
  for (int r = 0; r < size; ++r) {
    counts[r] = r % 3 + 1;
    displs[r] = r * n;
  }
  int sent[calls][n], gathered[calls][64 * n], want_gathered[64 * n];
  double in[calls][64 * 3], reduced[calls][3], want_reduced[calls][3];
  MPI_Request requests[2 * calls];
  int total = 0;
  for (int r = 0; r < size; ++r) total += counts[r];
  for (int c = 0; c < calls; ++c) {
    for (int i = 0; i < n; ++i) sent[c][i] = c * 100 + rank * 10 + i;
    for (int i = 0; i < 64 * n; ++i) gathered[c][i] = poison;
    for (int i = 0; i < total; ++i) in[c][i] = c + rank + i;
    MPI_Iallgatherv(sent[c], counts[rank], MPI_INT, gathered[c], counts, displs, MPI_INT, comm,
                    &requests[2 * c]);
    MPI_Ireduce_scatter(in[c], reduced[c], counts, MPI_DOUBLE, MPI_SUM, comm, &requests[2 * c + 1]);
  }
  MPI_Status statuses[2 * calls];
  MPI_Waitall(2 * calls, requests, statuses);
  for (int c = 0; c < calls; ++c) {
    for (int i = 0; i < 64 * n; ++i) want_gathered[i] = poison;
    PMPI_Allgatherv(sent[c], counts[rank], MPI_INT, want_gathered, counts, displs, MPI_INT, comm);
    PMPI_Reduce_scatter(in[c], want_reduced[c], counts, MPI_DOUBLE, MPI_SUM, comm);
    CHECK(memcmp(gathered[c], want_gathered, sizeof(int) * (size_t)(size * n)) == 0,
          "outstanding iallgatherv %d", c);
    CHECK(memcmp(reduced[c], want_reduced[c], sizeof(double) * (size_t)counts[rank]) == 0,
          "outstanding ireduce_scatter %d", c);
  }
  free(counts);
  free(displs);
}

static void run_all(MPI_Comm comm, const char* label) {
  gathers_checked = reductions_checked = 0;
  const int scales[] = {0, 2, 50, beyond_slot_scale};
  for (int s = 0; s < 4; ++s)
    for (int shift = 0; shift < 2; ++shift)
      for (int in_place = 0; in_place < 2; ++in_place)
        for (int send_layout = 0; send_layout < 3; ++send_layout)
          for (int strided = 0; strided < 2; ++strided)
            allgatherv_case(comm, scales[s], shift, in_place, send_layout, strided);
  for (int n = 1; n <= 4096; n *= 64)
    for (int in_place = 0; in_place < 2; ++in_place) uniform_case(comm, n, in_place);
  const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_FLOAT};
  const size_t sizes[3] = {sizeof(int), sizeof(double), sizeof(float)};
  const MPI_Op ops[2] = {MPI_SUM, MPI_MAX};
  for (int t = 0; t < 3; ++t)
    for (int o = 0; o < 2; ++o)
      for (int s = 0; s < 4; ++s)
        for (int in_place = 0; in_place < 2; ++in_place)
          reduce_scatter_case(comm, types[t], sizes[t], ops[o], scales[s] / 2, in_place);
  outstanding(comm);
  if (world_rank == 0)
    printf("%s: %ld iallgathervs, %ld ireduce_scatters and outstanding calls checked\n", label,
           gathers_checked, reductions_checked);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - world_rank, &split);
  /* The preload builds its state after a few blocking collectives, and the channel a nonblocking
   * call asked for at the next one. */
  for (int i = 0; i < 6; ++i) {
    MPI_Request r;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Ibarrier(split, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Barrier(split);
  }
  run_all(MPI_COMM_WORLD, "world");
  run_all(split, "split reversed");
  MPI_Comm_free(&split);
  MPI_Finalize();
  return 0;
}
