/* Plain MPI program: MPI_Ialltoall, MPI_Igather, MPI_Iscatter, MPI_Ireduce_scatter_block,
 * MPI_Iscan and MPI_Iexscan on MPI_COMM_WORLD, a duplicate and a split communicator (rank order
 * reversed), for several datatypes (a dense derived one, and one with gaps that passes through),
 * roots, block sizes (some beyond the preload's slots) and MPI_IN_PLACE; several outstanding at
 * once in one array with MPI's own Isend/Irecv requests under every completion call; a rank that
 * computes between start and wait. Every result is compared with the system MPI's blocking answer,
 * computed in the same run through the PMPI_ names (which the preload does not intercept); the
 * inputs are small integers, exact in every type and order. The program aborts on a wrong result,
 * and rank 0 prints what was checked, so the output is the same with and without the preload.
 *
 * Arguments: none, or "peers-early" (asserts that peers finish while the last rank computes: the
 * preload contributes its data at the start). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nonblocking_check.h"

enum { type_count = 5 };
static MPI_Datatype types[type_count];
static const char* type_names[type_count] = {"int", "double", "float", "long long", "short"};
static const size_t type_sizes[type_count] = {sizeof(int), sizeof(double), sizeof(float),
                                              sizeof(long long), sizeof(short)};

static void put(void* buffer, int type, size_t i, int value) {
  switch (type) {
    case 0: ((int*)buffer)[i] = value; break;
    case 1: ((double*)buffer)[i] = value; break;
    case 2: ((float*)buffer)[i] = (float)value; break;
    case 3: ((long long*)buffer)[i] = value; break;
    default: ((short*)buffer)[i] = (short)value; break;
  }
}
/* Rank r's element i: small, so sums over 8 ranks stay exact in a short. */
static int element(int rank, size_t i) {
  return rank * 3 + 1 + (int)(i % 7);
}
static void fill(void* buffer, int type, size_t n, int rank) {
  for (size_t i = 0; i < n; ++i) put(buffer, type, i, element(rank, i));
}
static void poison(void* buffer, size_t bytes) {
  memset(buffer, 0x5a, bytes);
}

/* Elements per block; 70000 (x 4-8 bytes): in chunks of the 256 KiB slots, or passed through where
 * a whole ring of them is too small (alltoall from 3 ranks). */
static const int blocks[] = {1, 7, 1000, 70000};
enum { block_cases = sizeof blocks / sizeof blocks[0] };

static void alltoalls(MPI_Comm comm, const char* label) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  long checked = 0;
  for (int t = 0; t < type_count; ++t) {
    for (int b = 0; b < block_cases; ++b) {
      const size_t n = (size_t)blocks[b], bytes = n * (size_t)size * type_sizes[t];
      char *send = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
      fill(send, t, n * (size_t)size, rank);
      PMPI_Alltoall(send, (int)n, types[t], want, (int)n, types[t], comm);
      for (int in_place = 0; in_place < 2; ++in_place) {
        if (in_place)
          memcpy(got, send, bytes);
        else
          poison(got, bytes);
        MPI_Request request;
        MPI_Ialltoall(in_place ? MPI_IN_PLACE : send, (int)n, types[t], got, (int)n, types[t], comm,
                      &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        CHECK(memcmp(got, want, bytes) == 0, "%s ialltoall %s block %zu in_place %d", label,
              type_names[t], n, in_place);
        ++checked;
      }
      free(send);
      free(got);
      free(want);
    }
  }
  /* Pairs of ints as one dense derived element (served), and ints with gaps (passed through). */
  MPI_Datatype pair, strided;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&pair);
  MPI_Type_commit(&strided);
  const MPI_Datatype derived[2] = {pair, strided};
  for (int d = 0; d < 2; ++d) {
    const size_t ints = (size_t)size * 3 * 4; /* 3 elements per block, 4 ints per element max */
    int *send = malloc(ints * sizeof(int)), *got = malloc(ints * sizeof(int)),
        *want = malloc(ints * sizeof(int));
    for (size_t i = 0; i < ints; ++i) {
      send[i] = element(rank, i);
      got[i] = want[i] = -1;
    }
    PMPI_Alltoall(send, 3, derived[d], want, 3, derived[d], comm);
    MPI_Request request;
    MPI_Ialltoall(send, 3, derived[d], got, 3, derived[d], comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    CHECK(memcmp(got, want, ints * sizeof(int)) == 0, "%s ialltoall derived %d", label, d);
    ++checked;
    free(send);
    free(got);
    free(want);
  }
  MPI_Type_free(&pair);
  MPI_Type_free(&strided);
  if (world_rank == 0) printf("%s: %ld alltoalls checked\n", label, checked);
}

static void gathers_and_scatters(MPI_Comm comm, const char* label) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  long checked = 0;
  for (int t = 0; t < type_count; ++t) {
    for (int b = 0; b < block_cases; ++b) {
      const size_t n = (size_t)blocks[b], block = n * type_sizes[t];
      const size_t all = block * (size_t)size;
      char *mine = malloc(block), *many = malloc(all), *got = malloc(all), *want = malloc(all);
      for (int root = 0; root < size; ++root) {
        for (int in_place = 0; in_place < 2; ++in_place) {
          const int use_in_place = in_place && rank == root;
          /* Gather: the root's block already in place in the receive buffer. */
          fill(mine, t, n, rank);
          PMPI_Gather(mine, (int)n, types[t], want, (int)n, types[t], root, comm);
          poison(got, all);
          if (use_in_place) memcpy(got + (size_t)rank * block, mine, block);
          MPI_Request request;
          MPI_Igather(use_in_place ? MPI_IN_PLACE : mine, (int)n, types[t], got, (int)n, types[t],
                      root, comm, &request);
          MPI_Wait(&request, MPI_STATUS_IGNORE);
          CHECK(rank != root || memcmp(got, want, all) == 0, "%s igather %s block %zu root %d",
                label, type_names[t], n, root);
          ++checked;
          /* Scatter: the root keeps its own block where it is. */
          fill(many, t, n * (size_t)size, rank);
          PMPI_Scatter(many, (int)n, types[t], want, (int)n, types[t], root, comm);
          poison(got, block);
          MPI_Iscatter(many, (int)n, types[t], use_in_place ? MPI_IN_PLACE : got, (int)n, types[t],
                       root, comm, &request);
          MPI_Wait(&request, MPI_STATUS_IGNORE);
          CHECK(use_in_place || memcmp(got, want, block) == 0, "%s iscatter %s block %zu root %d",
                label, type_names[t], n, root);
          ++checked;
        }
      }
      free(mine);
      free(many);
      free(got);
      free(want);
    }
  }
  if (world_rank == 0) printf("%s: %ld gathers and scatters checked\n", label, checked);
}

static void reductions(MPI_Comm comm, const char* label) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const MPI_Op ops[3] = {MPI_SUM, MPI_MAX, MPI_MIN};
  long checked = 0;
  for (int t = 0; t < type_count; ++t) {
    for (int o = 0; o < 3; ++o) {
      for (int b = 0; b < block_cases; ++b) {
        const size_t n = (size_t)blocks[b], block = n * type_sizes[t];
        const size_t all = block * (size_t)size;
        char *send = malloc(all), *got = malloc(all), *want = malloc(all);
        for (int in_place = 0; in_place < 2; ++in_place) {
          MPI_Request request;
          /* Reduce-scatter: rank r gets block r combined over every rank. */
          fill(send, t, n * (size_t)size, rank);
          PMPI_Reduce_scatter_block(send, want, (int)n, types[t], ops[o], comm);
          if (in_place)
            memcpy(got, send, all);
          else
            poison(got, all);
          MPI_Ireduce_scatter_block(in_place ? MPI_IN_PLACE : send, got, (int)n, types[t], ops[o],
                                    comm, &request);
          MPI_Wait(&request, MPI_STATUS_IGNORE);
          CHECK(memcmp(got, want, block) == 0, "%s ireduce_scatter_block %s op %d block %zu", label,
                type_names[t], o, n);
          ++checked;
          /* Scan and exscan (rank 0's exscan result is undefined: not compared). */
          for (int exclusive = 0; exclusive < 2; ++exclusive) {
            fill(send, t, n, rank);
            if (exclusive)
              PMPI_Exscan(send, want, (int)n, types[t], ops[o], comm);
            else
              PMPI_Scan(send, want, (int)n, types[t], ops[o], comm);
            if (in_place)
              memcpy(got, send, block);
            else
              poison(got, block);
            if (exclusive)
              MPI_Iexscan(in_place ? MPI_IN_PLACE : send, got, (int)n, types[t], ops[o], comm,
                          &request);
            else
              MPI_Iscan(in_place ? MPI_IN_PLACE : send, got, (int)n, types[t], ops[o], comm,
                        &request);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            CHECK((exclusive && rank == 0) || memcmp(got, want, block) == 0,
                  "%s %s %s op %d count %zu in_place %d", label, exclusive ? "iexscan" : "iscan",
                  type_names[t], o, n, in_place);
            ++checked;
          }
        }
        free(send);
        free(got);
        free(want);
      }
    }
  }
  if (world_rank == 0) printf("%s: %ld reductions checked\n", label, checked);
}

/* Every new call and MPI's own point-to-point requests in one array, under each completion call. */
enum { mixed_count = 8, mixed_n = 5, mixed_max_ranks = 16 };
struct mixed {
  MPI_Request requests[mixed_count];
  int send[mixed_n * mixed_max_ranks], received, alltoall[mixed_n * mixed_max_ranks];
  int gathered[mixed_n * mixed_max_ranks], scattered[mixed_n], reduced[mixed_n];
  int scanned[mixed_n], exscanned[mixed_n];
};
/* with_scans 0: four collectives, no more than the preload's ring of slots (a fifth started while
 * they are pending goes in only at the owner's next MPI call). */
static void start_mixed(struct mixed* m, MPI_Comm comm, int round, int with_scans) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int i = 0; i < mixed_n * size; ++i) m->send[i] = element(rank, (size_t)i) + round;
  m->received = -1;
  MPI_Irecv(&m->received, 1, MPI_INT, left, 50 + round, comm, &m->requests[0]);
  MPI_Ialltoall(m->send, mixed_n, MPI_INT, m->alltoall, mixed_n, MPI_INT, comm, &m->requests[1]);
  MPI_Isend(&m->send[0], 1, MPI_INT, right, 50 + round, comm, &m->requests[2]);
  MPI_Igather(m->send, mixed_n, MPI_INT, m->gathered, mixed_n, MPI_INT, 0, comm, &m->requests[3]);
  MPI_Iscatter(m->send, mixed_n, MPI_INT, m->scattered, mixed_n, MPI_INT, size - 1, comm,
               &m->requests[4]);
  MPI_Ireduce_scatter_block(m->send, m->reduced, mixed_n, MPI_INT, MPI_SUM, comm, &m->requests[5]);
  m->requests[6] = m->requests[7] = MPI_REQUEST_NULL;
  if (!with_scans) return;
  MPI_Iscan(m->send, m->scanned, mixed_n, MPI_INT, MPI_SUM, comm, &m->requests[6]);
  MPI_Iexscan(m->send, m->exscanned, mixed_n, MPI_INT, MPI_MAX, comm, &m->requests[7]);
}
static void check_mixed(const struct mixed* m, MPI_Comm comm, int round, int with_scans,
                        const char* how) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int left = (rank + size - 1) % size;
  CHECK(m->received == element(left, 0) + round, "%s: irecv got %d", how, m->received);
  for (int r = 0; r < size; ++r) {
    for (int i = 0; i < mixed_n; ++i) {
      const size_t at = (size_t)(r * mixed_n + i);
      CHECK(m->alltoall[at] == element(r, (size_t)(rank * mixed_n + i)) + round, "%s: ialltoall",
            how);
      CHECK(rank != 0 || m->gathered[at] == element(r, (size_t)i) + round, "%s: igather", how);
    }
  }
  for (int i = 0; i < mixed_n; ++i) {
    const size_t mine = (size_t)(rank * mixed_n + i);
    CHECK(m->scattered[i] == element(size - 1, mine) + round, "%s: iscatter", how);
    int sum = 0, prefix = 0;
    for (int r = 0; r < size; ++r) sum += element(r, mine) + round;
    for (int r = 0; r <= rank; ++r) prefix += element(r, (size_t)i) + round;
    CHECK(m->reduced[i] == sum, "%s: ireduce_scatter_block got %d, not %d", how, m->reduced[i],
          sum);
    if (!with_scans) continue;
    CHECK(m->scanned[i] == prefix, "%s: iscan got %d, not %d", how, m->scanned[i], prefix);
    CHECK(rank == 0 || m->exscanned[i] == element(rank - 1, (size_t)i) + round, "%s: iexscan", how);
  }
  for (int k = 0; k < mixed_count; ++k)
    CHECK(m->requests[k] == MPI_REQUEST_NULL, "%s: request %d left active", how, k);
}
static void mixed_arrays(MPI_Comm comm) {
  int size;
  MPI_Comm_size(comm, &size);
  if (size > mixed_max_ranks) return;
  struct mixed m;
  int round = 0;
  MPI_Status statuses[mixed_count];

  start_mixed(&m, comm, round, 1);
  MPI_Waitall(mixed_count, m.requests, statuses);
  check_mixed(&m, comm, round++, 1, "waitall");

  start_mixed(&m, comm, round, 1);
  for (int done = 0;;) {
    int index, flag;
    MPI_Testany(mixed_count, m.requests, &index, &flag, MPI_STATUS_IGNORE);
    if (flag && index == MPI_UNDEFINED) break;
    if (flag) ++done;
    CHECK(done <= mixed_count, "testany completed too many");
  }
  check_mixed(&m, comm, round++, 1, "testany");

  start_mixed(&m, comm, round, 1);
  for (;;) {
    int outcount, indices[mixed_count];
    MPI_Waitsome(mixed_count, m.requests, &outcount, indices, statuses);
    if (outcount == MPI_UNDEFINED) break;
  }
  check_mixed(&m, comm, round++, 1, "waitsome");

  start_mixed(&m, comm, round, 1);
  for (;;) {
    int index;
    MPI_Waitany(mixed_count, m.requests, &index, MPI_STATUS_IGNORE);
    if (index == MPI_UNDEFINED) break;
  }
  check_mixed(&m, comm, round++, 1, "waitany");

  start_mixed(&m, comm, round, 1);
  for (int flag = 0; !flag;) MPI_Testall(mixed_count, m.requests, &flag, statuses);
  check_mixed(&m, comm, round++, 1, "testall");

  start_mixed(&m, comm, round, 1);
  for (int k = mixed_count - 1; k >= 0; --k) MPI_Wait(&m.requests[k], MPI_STATUS_IGNORE);
  check_mixed(&m, comm, round++, 1, "wait in reverse");
  if (world_rank == 0) printf("mixed arrays: %d rounds checked\n", round);
}

/* The last rank computes (sleeps) between start and wait. With "peers-early" the others must be
 * done long before it is: its data went in at its start. */
static void late_waiter(MPI_Comm comm, int assert_early) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size > mixed_max_ranks) return;
  const int delay_ms = 1500;
  struct mixed m;
  PMPI_Barrier(comm);
  const double start = MPI_Wtime();
  start_mixed(&m, comm, 7, 0);
  /* Its point-to-point parts first (MPI's progress needs no help from cachecomm). */
  MPI_Waitall(1, &m.requests[0], MPI_STATUSES_IGNORE);
  MPI_Waitall(1, &m.requests[2], MPI_STATUSES_IGNORE);
  if (rank == size - 1) sleep_ms(delay_ms);
  MPI_Waitall(mixed_count, m.requests, MPI_STATUSES_IGNORE);
  const double waited = MPI_Wtime() - start;
  check_mixed(&m, comm, 7, 0, "late waiter");
  if (assert_early && rank != size - 1)
    CHECK(waited < delay_ms / 2000.0, "rank %d waited %.3f s for a rank that was computing", rank,
          waited);
  double longest_peer = rank == size - 1 ? 0 : waited, worst = 0;
  PMPI_Allreduce(&longest_peer, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
  if (world_rank == 0) printf("late waiter: checked\n");
  if (world_rank == 0 && assert_early && size > 1)
    printf("peers finished while the last rank computed: %s\n",
           worst < delay_ms / 2000.0 ? "yes" : "no");
}

/* Blocking collectives (the preload builds its state after a few) and a nonblocking call that
 * asks for the channel, built at the next blocking one: the calls after this are served. */
static void warm_up(MPI_Comm comm) {
  for (int i = 0; i < 5; ++i) {
    MPI_Request request;
    MPI_Ibarrier(comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Barrier(comm);
  }
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  types[0] = MPI_INT;
  types[1] = MPI_DOUBLE;
  types[2] = MPI_FLOAT;
  types[3] = MPI_LONG_LONG;
  types[4] = MPI_SHORT;

  MPI_Comm dup, split;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank, &split);
  if (strcmp(mode, "peers-early") == 0) {
    warm_up(MPI_COMM_WORLD);
    late_waiter(MPI_COMM_WORLD, 1);
  } else {
    const MPI_Comm comms[3] = {MPI_COMM_WORLD, dup, split};
    const char* names[3] = {"world", "dup", "split"};
    for (int c = 0; c < 3; ++c) {
      warm_up(comms[c]);
      alltoalls(comms[c], names[c]);
      gathers_and_scatters(comms[c], names[c]);
      reductions(comms[c], names[c]);
      mixed_arrays(comms[c]);
    }
    late_waiter(MPI_COMM_WORLD, 0);
    late_waiter(split, 0);
  }
  MPI_Comm_free(&split);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
