/* Short-lived communicators reuse freed communicators' states (state_pool.hpp): every round
 * duplicates MPI_COMM_WORLD, splits it into halves and into reversed rank order, checks
 * allreduce, bcast, reduce and allgather results on each (the values depend on the round and the
 * communicator), and frees them in an order that differs from their creation. A state taken by
 * the wrong group would give wrong sums or ranks, or hang.
 *
 * Argument: none (MPI_THREAD_SINGLE), "multiple" (the same at MPI_THREAD_MULTIPLE, mpi4py's level),
 * or "threads" (at MPI_THREAD_MULTIPLE, then 3 threads at once, each duplicating a parent of its
 * own (all of the world's group) and freeing the copies, so that they build and free communicators
 * of one group concurrently and contend for the same kept states). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
static pthread_mutex_t failures_mutex = PTHREAD_MUTEX_INITIALIZER;

static void check(int ok, const char* what, int round) {
  if (!ok) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "world rank %d, round %d: %s wrong\n", rank, round, what);
    pthread_mutex_lock(&failures_mutex);
    ++failures;
    pthread_mutex_unlock(&failures_mutex);
  }
}

/* Calls enough collectives on `comm` that its state is built (or reused) and used. */
static void exercise(MPI_Comm comm, int round, const char* name) {
  int rank = 0;
  int size = 0;
  int world_rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  enum { count = 2048 }; /* 8 KiB of ints: beyond the small slots, through the data region */
  int* in = malloc(sizeof(int) * count);
  int* out = malloc(sizeof(int) * count);
  int gathered[64];
  for (int call = 0; call < 6; ++call) {
    for (int i = 0; i < count; ++i) in[i] = (rank + 1) * (round + 1) + i + call;
    MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, comm);
    int ok = 1;
    for (int i = 0; i < count; ++i)
      ok &= out[i] == (round + 1) * size * (size + 1) / 2 + size * (i + call);
    check(ok, name, round);
  }
  int value = rank == 0 ? world_rank * 1000 + round : -1;
  MPI_Bcast(&value, 1, MPI_INT, 0, comm);
  int root_world = world_rank;
  MPI_Bcast(&root_world, 1, MPI_INT, 0, comm);
  check(value == root_world * 1000 + round, "bcast", round);
  int mine = world_rank;
  MPI_Allgather(&mine, 1, MPI_INT, gathered, 1, MPI_INT, comm);
  int sum = 0;
  MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, size - 1, comm);
  if (rank == size - 1) check(sum == size * (size - 1) / 2, "reduce", round);
  /* The members in this communicator's rank order, as every rank sees them. */
  int first = gathered[0];
  MPI_Bcast(&first, 1, MPI_INT, 0, comm);
  check(first == gathered[0] && gathered[rank] == world_rank, "allgather", round);
  free(in);
  free(out);
}

/* A thread's churn: copies of its own parent communicator, made, used and freed. */
enum { thread_count = 3, thread_rounds = 15 };
static MPI_Comm parents[thread_count];
static void* churn(void* arg) {
  const int which = *(const int*)arg;
  for (int round = 0; round < thread_rounds; ++round) {
    MPI_Comm copy;
    MPI_Comm_dup(parents[which], &copy);
    exercise(copy, round,
             which == 0   ? "thread 0's copy"
             : which == 1 ? "thread 1's copy"
                          : "thread 2's copy");
    MPI_Comm_free(&copy);
  }
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "single";
  const int multiple = strcmp(mode, "single") != 0;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  if (multiple && provided < MPI_THREAD_MULTIPLE) MPI_Abort(MPI_COMM_WORLD, 2);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 64) MPI_Abort(MPI_COMM_WORLD, 2);
  const int rounds = 20;
  for (int round = 0; round < rounds; ++round) {
    MPI_Comm copy;
    MPI_Comm half;
    MPI_Comm reversed;
    MPI_Comm_dup(MPI_COMM_WORLD, &copy);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    exercise(copy, round, "allreduce on the copy");
    exercise(half, round, "allreduce on the half");
    exercise(reversed, round, "allreduce on the reversed copy");
    exercise(MPI_COMM_WORLD, round, "allreduce on MPI_COMM_WORLD");
    if (round % 2 == 0) {
      MPI_Comm_free(&reversed);
      MPI_Comm_free(&copy);
      MPI_Comm_free(&half);
    } else {
      MPI_Comm_free(&half);
      MPI_Comm_free(&reversed);
      MPI_Comm_free(&copy);
    }
  }
  if (strcmp(mode, "threads") == 0) {
    pthread_t threads[thread_count];
    int ids[thread_count];
    for (int i = 0; i < thread_count; ++i) {
      ids[i] = i;
      MPI_Comm_dup(MPI_COMM_WORLD, &parents[i]);
    }
    for (int i = 0; i < thread_count; ++i) pthread_create(&threads[i], NULL, churn, &ids[i]);
    for (int i = 0; i < thread_count; ++i) pthread_join(threads[i], NULL);
    for (int i = 0; i < thread_count; ++i) MPI_Comm_free(&parents[i]);
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("comm reuse: %d rounds, %s\n", rounds, total == 0 ? "all correct" : "WRONG");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
