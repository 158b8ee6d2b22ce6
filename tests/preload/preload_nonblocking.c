/* Plain MPI program: the nonblocking collectives (MPI_Ibarrier, MPI_Ibcast, MPI_Ireduce,
 * MPI_Iallreduce, MPI_Iallgather) on MPI_COMM_WORLD, a duplicate and a split communicator, for
 * several datatypes, roots, sizes (some beyond the preload's slots) and MPI_IN_PLACE; several
 * outstanding at once; in one array with MPI's own Isend/Irecv requests under every completion
 * call; freed requests; a rank that computes between start and wait. Every result is checked
 * against its exact value (the program aborts on a wrong one), and rank 0 prints what was checked,
 * so the output is the same with and without the preload library.
 *
 * Arguments: none, or "multiple" (MPI_THREAD_MULTIPLE), "peers-early" (asserts that peers finish
 * while a rank computes: the preload contributes at the start), "cancel" (MPI_Cancel on a
 * collective request must fail with MPI_ERR_REQUEST), "request-free" (MPI_Request_free on active
 * collective requests: Open MPI 4 itself refuses that with MPI_ERR_REQUEST, so it is not part of
 * the comparison with plain MPI). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nonblocking_check.h"

/* Predefined types under test, read and written through doubles (every value is exact). */
enum { type_count = 5 };
static MPI_Datatype types[type_count];
static const char* type_names[type_count] = {"int", "double", "float", "long long", "short"};
static size_t type_sizes[type_count] = {sizeof(int), sizeof(double), sizeof(float),
                                        sizeof(long long), sizeof(short)};

static void put(void* buffer, int type, size_t i, double value) {
  switch (type) {
    case 0: ((int*)buffer)[i] = (int)value; break;
    case 1: ((double*)buffer)[i] = value; break;
    case 2: ((float*)buffer)[i] = (float)value; break;
    case 3: ((long long*)buffer)[i] = (long long)value; break;
    default: ((short*)buffer)[i] = (short)value; break;
  }
}
static double get(const void* buffer, int type, size_t i) {
  switch (type) {
    case 0: return ((const int*)buffer)[i];
    case 1: return ((const double*)buffer)[i];
    case 2: return ((const float*)buffer)[i];
    case 3: return (double)((const long long*)buffer)[i];
    default: return ((const short*)buffer)[i];
  }
}

/* Rank r's element i, and what each operation makes of all ranks' (exact in every type). */
static double element(int r, size_t i) {
  return (double)(r + 1) + (double)(i % 5);
}
static double expected(MPI_Op op, int size, size_t i) {
  if (op == MPI_SUM) return size * (size + 1) / 2.0 + size * (double)(i % 5);
  if (op == MPI_MAX) return element(size - 1, i);
  return element(0, i);
}

static const int counts[] = {1, 7, 1000, 40000}; /* 40000 doubles: two chunks of a 256 KiB slot */
enum { count_cases = sizeof counts / sizeof counts[0] };

static void reductions(MPI_Comm comm, const char* label) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Op ops[3] = {MPI_SUM, MPI_MAX, MPI_MIN};
  long checked = 0;
  for (int t = 0; t < type_count; ++t) {
    for (int o = 0; o < 3; ++o) {
      for (int c = 0; c < count_cases; ++c) {
        const size_t n = (size_t)counts[c];
        char* send = malloc(n * type_sizes[t]);
        char* recv = malloc(n * type_sizes[t]);
        for (int in_place = 0; in_place < 2; ++in_place) {
          for (size_t i = 0; i < n; ++i) put(in_place ? recv : send, t, i, element(rank, i));
          MPI_Request request;
          MPI_Iallreduce(in_place ? MPI_IN_PLACE : send, recv, (int)n, types[t], ops[o], comm,
                         &request);
          MPI_Wait(&request, MPI_STATUS_IGNORE);
          CHECK(request == MPI_REQUEST_NULL, "request not freed");
          for (size_t i = 0; i < n; ++i) {
            CHECK(get(recv, t, i) == expected(ops[o], size, i),
                  "%s iallreduce %s op %d count %zu in_place %d: element %zu is %g, not %g", label,
                  type_names[t], o, n, in_place, i, get(recv, t, i), expected(ops[o], size, i));
          }
          ++checked;
          /* Ireduce at every root (one count per type to keep the run short). */
          if (c != 1) continue;
          for (int root = 0; root < size; ++root) {
            const int mine = rank == root && in_place;
            for (size_t i = 0; i < n; ++i) {
              put(mine ? recv : send, t, i, element(rank, i));
              if (!mine) put(recv, t, i, -7);
            }
            MPI_Ireduce(mine ? MPI_IN_PLACE : send, recv, (int)n, types[t], ops[o], root, comm,
                        &request);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < n; ++i) {
              const double want = rank == root ? expected(ops[o], size, i) : -7;
              CHECK(get(recv, t, i) == want, "%s ireduce %s root %d: element %zu is %g, not %g",
                    label, type_names[t], root, i, get(recv, t, i), want);
            }
            ++checked;
          }
        }
        free(send);
        free(recv);
      }
    }
  }
  if (world_rank == 0) printf("%s: %ld reductions checked\n", label, checked);
}

static void broadcasts(MPI_Comm comm, const char* label) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Datatype triple, strided;
  MPI_Type_contiguous(3, MPI_INT, &triple);    /* dense derived: served */
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided); /* gaps: passed through */
  MPI_Type_commit(&triple);
  MPI_Type_commit(&strided);
  const int bytes_cases[] = {1, 12, 4096, 16000, 300000}; /* 300000: two chunks */
  long checked = 0;
  for (int b = 0; b < 5; ++b) {
    for (int root = 0; root < size; ++root) {
      const int ints = bytes_cases[b] / 4 + 3; /* a multiple of 3 below */
      const int n = ints - ints % 3;
      int* data = malloc(sizeof(int) * (size_t)n * 2);
      /* chars */
      char* text = malloc((size_t)bytes_cases[b]);
      for (int i = 0; i < bytes_cases[b]; ++i) text[i] = rank == root ? (char)(i * 7 + root) : 0;
      MPI_Request request;
      MPI_Ibcast(text, bytes_cases[b], MPI_CHAR, root, comm, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      for (int i = 0; i < bytes_cases[b]; ++i)
        CHECK(text[i] == (char)(i * 7 + root), "%s ibcast char root %d byte %d", label, root, i);
      /* ints sent as int on the root and received as triples elsewhere */
      for (int i = 0; i < n; ++i) data[i] = rank == root ? i * 3 + root : -1;
      if (rank == root)
        MPI_Ibcast(data, n, MPI_INT, root, comm, &request);
      else
        MPI_Ibcast(data, n / 3, triple, root, comm, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      for (int i = 0; i < n; ++i)
        CHECK(data[i] == i * 3 + root, "%s ibcast int/triple root %d element %d", label, root, i);
      /* strided: elements of two ints three apart (the one between keeps its value) */
      for (int i = 0; i < 2 * n; ++i) data[i] = rank == root ? i : -1;
      MPI_Ibcast(data, n / 2, strided, root, comm, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      for (int i = 0; i < 2 * n; ++i) {
        const int covered = i < 3 * (n / 2) && i % 3 != 1;
        const int want = rank == root || covered ? i : -1;
        CHECK(data[i] == want, "%s ibcast strided root %d element %d: %d", label, root, i, data[i]);
      }
      checked += 3;
      free(data);
      free(text);
    }
  }
  MPI_Type_free(&triple);
  MPI_Type_free(&strided);
  if (world_rank == 0) printf("%s: %ld broadcasts checked\n", label, checked);
}

static void gathers(MPI_Comm comm, const char* label) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int blocks[] = {1, 5, 2000, 40000}; /* doubles per rank; 40000: two chunks */
  long checked = 0;
  for (int b = 0; b < 4; ++b) {
    const int n = blocks[b];
    double* mine = malloc(sizeof(double) * (size_t)n);
    double* all = malloc(sizeof(double) * (size_t)n * (size_t)size);
    for (int in_place = 0; in_place < 2; ++in_place) {
      for (int i = 0; i < n * size; ++i) all[i] = -1;
      double* own = in_place ? all + (size_t)rank * (size_t)n : mine;
      for (int i = 0; i < n; ++i) own[i] = rank * 100000.0 + i;
      MPI_Request request;
      MPI_Iallgather(in_place ? MPI_IN_PLACE : mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, comm,
                     &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      for (int r = 0; r < size; ++r)
        for (int i = 0; i < n; ++i)
          CHECK(all[r * n + i] == r * 100000.0 + i, "%s iallgather block %d in_place %d rank %d",
                label, n, in_place, r);
      ++checked;
    }
    /* MPI_INT blocks sent as bytes */
    int* ints = malloc(sizeof(int) * (size_t)size * 4);
    int four[4] = {rank, rank + 1, rank + 2, rank + 3};
    MPI_Request request;
    MPI_Iallgather(four, (int)sizeof four, MPI_BYTE, ints, 4, MPI_INT, comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < 4; ++i) CHECK(ints[r * 4 + i] == r + i, "%s iallgather bytes/int", label);
    ++checked;
    free(ints);
    free(mine);
    free(all);
  }
  if (world_rank == 0) printf("%s: %ld gathers checked\n", label, checked);
}

static void barriers(MPI_Comm comm, const char* label) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* The first ones come before the communicator has made any blocking collective call. */
  for (int i = 0; i < 20; ++i) {
    MPI_Request request;
    MPI_Ibarrier(comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    /* Blocking calls in between: the preload builds its state after a few of them. */
    if (i % 4 == 3) MPI_Barrier(comm);
  }
  /* The last rank starts late: no other rank's barrier may complete before it started. */
  MPI_Barrier(comm);
  if (rank == size - 1) sleep_ms(300);
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  int flag = 0;
  MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
  CHECK(size == 1 || rank == size - 1 || !flag,
        "%s: ibarrier completed before the last rank "
        "started it",
        label);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (world_rank == 0) printf("%s: barriers checked\n", label);
}

/* Several operations outstanding at once (more than the preload's smallest ring, 4 slots: the
 * ring4 cases set it), completed together in an array in reverse order, with a blocking collective
 * started after them on the same comm. */
static void outstanding(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  enum { ops = 8, n = 33 };
  double sums[ops][n], values[ops][n];
  MPI_Request requests[ops + 3];
  for (int k = 0; k < ops; ++k) {
    for (int i = 0; i < n; ++i) values[k][i] = element(rank, (size_t)i) * (k + 1);
    MPI_Iallreduce(values[k], sums[k], n, MPI_DOUBLE, MPI_SUM, comm, &requests[ops - 1 - k]);
  }
  int data[16];
  for (int i = 0; i < 16; ++i) data[i] = rank == size - 1 ? i * i : 0;
  MPI_Ibcast(data, 16, MPI_INT, size - 1, comm, &requests[ops]);
  MPI_Ibarrier(comm, &requests[ops + 1]);
  long long ranks[64];
  long long me = rank;
  MPI_Iallgather(&me, 1, MPI_LONG_LONG, ranks, 1, MPI_LONG_LONG, comm, &requests[ops + 2]);
  /* A blocking collective after them on the same communicator. */
  int total = 0, one = 1;
  MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, comm);
  CHECK(total == size, "blocking allreduce after nonblocking ones: %d", total);
  MPI_Status statuses[ops + 3];
  MPI_Waitall(ops + 3, requests, statuses);
  for (int k = 0; k < ops; ++k)
    for (int i = 0; i < n; ++i)
      CHECK(sums[k][i] == expected(MPI_SUM, size, (size_t)i) * (k + 1), "outstanding op %d", k);
  for (int i = 0; i < 16; ++i) CHECK(data[i] == i * i, "outstanding ibcast");
  for (int r = 0; r < size; ++r) CHECK(ranks[r] == r, "outstanding iallgather");
  for (int k = 0; k < ops + 3; ++k) {
    int cancelled = 1;
    MPI_Test_cancelled(&statuses[k], &cancelled);
    CHECK(!cancelled, "collective status says cancelled");
  }
  if (world_rank == 0) printf("outstanding: %d operations checked\n", ops + 3);
}

/* Collectives and MPI's own point-to-point requests in one array, under each completion call. */
enum { mixed_count = 5 };
struct mixed {
  MPI_Request requests[mixed_count];
  int send, received[2], sum, gathered[64], root_data[4];
};
static void start_mixed(struct mixed* m, MPI_Comm comm, int round) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  m->send = rank * 10 + round;
  m->received[0] = m->received[1] = -1;
  MPI_Irecv(&m->received[0], 1, MPI_INT, left, 40 + round, comm, &m->requests[0]);
  MPI_Iallreduce(&m->send, &m->sum, 1, MPI_INT, MPI_SUM, comm, &m->requests[1]);
  MPI_Isend(&m->send, 1, MPI_INT, right, 40 + round, comm, &m->requests[2]);
  MPI_Iallgather(&m->send, 1, MPI_INT, m->gathered, 1, MPI_INT, comm, &m->requests[3]);
  for (int i = 0; i < 4; ++i) m->root_data[i] = rank == 0 ? round + i : -1;
  MPI_Ibcast(m->root_data, 4, MPI_INT, 0, comm, &m->requests[4]);
}
static void check_mixed(const struct mixed* m, MPI_Comm comm, int round, const char* how) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int left = (rank + size - 1) % size;
  CHECK(m->received[0] == left * 10 + round, "%s: irecv got %d", how, m->received[0]);
  CHECK(m->sum == 10 * size * (size - 1) / 2 + size * round, "%s: iallreduce got %d", how, m->sum);
  for (int r = 0; r < size; ++r) CHECK(m->gathered[r] == r * 10 + round, "%s: iallgather", how);
  for (int i = 0; i < 4; ++i) CHECK(m->root_data[i] == round + i, "%s: ibcast", how);
  for (int k = 0; k < mixed_count; ++k)
    CHECK(m->requests[k] == MPI_REQUEST_NULL, "%s: request %d left active", how, k);
}
static void mixed_arrays(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int left = (rank + size - 1) % size;
  struct mixed m;
  int round = 0;
  /* Real arrays: MPICH's MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow. */
  MPI_Status ignored[mixed_count];

  start_mixed(&m, comm, round);
  MPI_Status statuses[mixed_count];
  MPI_Waitall(mixed_count, m.requests, statuses);
  CHECK(statuses[0].MPI_SOURCE == left && statuses[0].MPI_TAG == 40 + round,
        "waitall: the irecv's status lost its source/tag");
  check_mixed(&m, comm, round++, "waitall");

  start_mixed(&m, comm, round);
  for (int done = 0;;) {
    int index, flag;
    MPI_Status status;
    MPI_Testany(mixed_count, m.requests, &index, &flag, &status);
    if (flag && index == MPI_UNDEFINED) break;
    if (flag) {
      ++done;
      if (index == 0) CHECK(status.MPI_SOURCE == left, "testany: irecv status");
    }
    CHECK(done <= mixed_count, "testany completed too many");
  }
  check_mixed(&m, comm, round++, "testany");

  start_mixed(&m, comm, round);
  for (;;) {
    int outcount, indices[mixed_count];
    MPI_Waitsome(mixed_count, m.requests, &outcount, indices, ignored);
    if (outcount == MPI_UNDEFINED) break;
    CHECK(outcount > 0, "waitsome returned nothing");
  }
  check_mixed(&m, comm, round++, "waitsome");

  start_mixed(&m, comm, round);
  for (;;) {
    int index;
    MPI_Waitany(mixed_count, m.requests, &index, MPI_STATUS_IGNORE);
    if (index == MPI_UNDEFINED) break;
  }
  check_mixed(&m, comm, round++, "waitany");

  start_mixed(&m, comm, round);
  for (int flag = 0; !flag;) MPI_Testall(mixed_count, m.requests, &flag, ignored);
  check_mixed(&m, comm, round++, "testall");

  start_mixed(&m, comm, round);
  for (;;) {
    int outcount, indices[mixed_count];
    MPI_Testsome(mixed_count, m.requests, &outcount, indices, ignored);
    if (outcount == MPI_UNDEFINED) break;
  }
  check_mixed(&m, comm, round++, "testsome");

  start_mixed(&m, comm, round);
  for (int k = 0; k < mixed_count; ++k) {
    for (int flag = 0; !flag;) MPI_Test(&m.requests[k], &flag, MPI_STATUS_IGNORE);
  }
  check_mixed(&m, comm, round++, "test");

  /* Only the point-to-point request is waited for first, with collectives pending. */
  start_mixed(&m, comm, round);
  MPI_Wait(&m.requests[0], MPI_STATUS_IGNORE);
  MPI_Wait(&m.requests[2], MPI_STATUS_IGNORE);
  MPI_Waitall(mixed_count, m.requests, ignored);
  check_mixed(&m, comm, round++, "wait");
  if (world_rank == 0) printf("mixed arrays: %d rounds checked\n", round);
}

/* Freed requests: the operations still complete (more of them than the ring, so the next ones
 * need them finished), and what follows is right. */
static void freed_requests(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int k = 0; k < 6; ++k) {
    MPI_Request request;
    MPI_Ibarrier(comm, &request);
    MPI_Request_free(&request);
    CHECK(request == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");
  }
  /* A freed broadcast that odd ranks receive into a strided datatype, which the program frees at
   * once: the preload unpacks its result when it finishes, before the reduction below (served
   * operations finish in order on a communicator). */
  enum { n = 16 };
  int spread[2 * n];
  for (int i = 0; i < 2 * n; ++i) spread[i] = rank == 0 && i < n ? i : -1;
  MPI_Datatype every_other;
  MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &every_other);
  MPI_Type_commit(&every_other);
  MPI_Request request;
  MPI_Ibcast(spread, n, rank % 2 ? every_other : MPI_INT, 0, comm, &request);
  MPI_Type_free(&every_other);
  MPI_Request_free(&request);
  int value = rank + 1, sum = 0;
  MPI_Iallreduce(&value, &sum, 1, MPI_INT, MPI_SUM, comm, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  CHECK(sum == size * (size + 1) / 2, "iallreduce after freed requests: %d", sum);
  for (int i = 0; i < 2 * n; ++i) {
    const int want = rank % 2 ? (i % 2 ? -1 : i / 2) : (i < n ? i : -1);
    CHECK(spread[i] == want, "freed strided ibcast: element %d is %d, want %d", i, spread[i], want);
  }
  if (world_rank == 0) printf("freed requests: checked\n");
}

/* One rank computes (sleeps) between start and wait while the others wait. With "peers-early"
 * the others must be done long before it is (the preload contributes at the start). */
static void late_waiter(MPI_Comm comm, int assert_early) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int slow = size - 1;
  const int delay_ms = 1500;
  double values[4], sums[4];
  for (int i = 0; i < 4; ++i) values[i] = element(rank, (size_t)i);
  int data[8];
  for (int i = 0; i < 8; ++i) data[i] = rank == slow ? 5 * i : -1;
  MPI_Barrier(comm);
  const double start = MPI_Wtime();
  MPI_Request requests[2];
  MPI_Iallreduce(values, sums, 4, MPI_DOUBLE, MPI_SUM, comm, &requests[0]);
  MPI_Ibcast(data, 8, MPI_INT, slow, comm, &requests[1]);
  if (rank == slow) sleep_ms(delay_ms);
  MPI_Status statuses[2];
  MPI_Waitall(2, requests, statuses);
  const double waited = MPI_Wtime() - start;
  for (int i = 0; i < 4; ++i)
    CHECK(sums[i] == expected(MPI_SUM, size, (size_t)i), "late iallreduce");
  for (int i = 0; i < 8; ++i) CHECK(data[i] == 5 * i, "late ibcast");
  if (assert_early && rank != slow)
    CHECK(waited < delay_ms / 2000.0,
          "rank %d waited %.3f s for a rank that was computing: its "
          "data should have been there since its start",
          rank, waited);
  double longest_peer = rank == slow ? 0 : waited, worst = 0;
  MPI_Allreduce(&longest_peer, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
  if (world_rank == 0) printf("late waiter: checked\n");
  if (world_rank == 0 && assert_early && size > 1)
    printf("peers finished while the last rank computed: %s\n",
           worst < delay_ms / 2000.0 ? "yes" : "no");
}

/* MPI_Cancel on a pending collective request is refused. Rank 0 cancels before the others start
 * theirs (they wait for its word), so its operation cannot have finished at its start (one that
 * did gets MPI's own completed request, on which MPI_Cancel has no effect). */
static void cancel_refused(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int value = 1, sum = 0, go = 0;
  MPI_Request request;
  int error_class = MPI_SUCCESS;
  if (rank == 0) {
    MPI_Iallreduce(&value, &sum, 1, MPI_INT, MPI_SUM, comm, &request);
    const int code = MPI_Cancel(&request);
    MPI_Error_class(code, &error_class);
    for (int peer = 1; peer < size; ++peer) MPI_Send(&go, 1, MPI_INT, peer, 77, comm);
  } else {
    MPI_Recv(&go, 1, MPI_INT, 0, 77, comm, MPI_STATUS_IGNORE);
    MPI_Iallreduce(&value, &sum, 1, MPI_INT, MPI_SUM, comm, &request);
  }
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  CHECK(sum == size, "iallreduce after refused cancel: %d", sum);
  if (world_rank == 0)
    printf("cancel refused: %s\n", error_class == MPI_ERR_REQUEST ? "MPI_ERR_REQUEST" : "no");
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int provided = 0;
  MPI_Init_thread(&argc, &argv,
                  strcmp(mode, "multiple") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                  &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  types[0] = MPI_INT;
  types[1] = MPI_DOUBLE;
  types[2] = MPI_FLOAT;
  types[3] = MPI_LONG_LONG;
  types[4] = MPI_SHORT;

  MPI_Comm dup, split;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank, &split);

  if (strcmp(mode, "cancel") == 0) {
    /* Enough blocking and nonblocking calls first that the preload serves the next ones. */
    for (int i = 0; i < 5; ++i) barriers(MPI_COMM_WORLD, "warm-up");
    cancel_refused(MPI_COMM_WORLD);
  } else if (strcmp(mode, "request-free") == 0) {
    for (int i = 0; i < 5; ++i) barriers(MPI_COMM_WORLD, "warm-up");
    for (int i = 0; i < 5; ++i) barriers(split, "warm-up");
    freed_requests(MPI_COMM_WORLD);
    freed_requests(split);
  } else if (strcmp(mode, "peers-early") == 0) {
    for (int i = 0; i < 5; ++i) barriers(MPI_COMM_WORLD, "warm-up");
    late_waiter(MPI_COMM_WORLD, 1);
  } else {
    const MPI_Comm comms[3] = {MPI_COMM_WORLD, dup, split};
    const char* names[3] = {"world", "dup", "split"};
    for (int c = 0; c < 3; ++c) {
      barriers(comms[c], names[c]);
      reductions(comms[c], names[c]);
      broadcasts(comms[c], names[c]);
      gathers(comms[c], names[c]);
    }
    outstanding(MPI_COMM_WORLD);
    outstanding(split);
    mixed_arrays(MPI_COMM_WORLD);
    mixed_arrays(dup);
    late_waiter(MPI_COMM_WORLD, 0);
    late_waiter(split, 0);
  }
  MPI_Comm_free(&split);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
