/* Plain MPI program with threads. Argument: the thread level to ask for.
 *   multiple    4 threads, each looping collectives on its own duplicated communicator at once
 *   serialized  the same 4 threads, taking turns in a fixed order (one thread in MPI at a time)
 *   funneled    the main thread makes the calls while 3 other threads compute
 * Each thread checks every result against the value computed locally and counts mismatches; rank 0
 * prints each thread's total and the mismatch count (0), so a preloaded run prints what MPI prints.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define ROUNDS 60

static MPI_Comm comms[THREADS];
static long long totals[THREADS];
static int mismatches[THREADS];
static int serialized;
static int turn;
static pthread_mutex_t turn_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;

static void wait_turn(int which) {
  pthread_mutex_lock(&turn_mutex);
  while (turn % THREADS != which) pthread_cond_wait(&turn_changed, &turn_mutex);
  pthread_mutex_unlock(&turn_mutex);
}

static void pass_turn(void) {
  pthread_mutex_lock(&turn_mutex);
  ++turn;
  pthread_cond_broadcast(&turn_changed);
  pthread_mutex_unlock(&turn_mutex);
}

/* One round of collectives on `comm`, checked. */
static void round_of(MPI_Comm comm, int which, int round) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Barrier(comm);
  long long value = (long long)(rank + 1) * (round + 1) * (which + 1), sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm);
  long long expected_sum = (long long)size * (size + 1) / 2 * (round + 1) * (which + 1);
  if (sum != expected_sum) ++mismatches[which];
  const int root = round % size;
  double block[300];
  for (int i = 0; i < 300; ++i) block[i] = rank == root ? which * 1000.0 + round + i : -1.0;
  MPI_Bcast(block, 300, MPI_DOUBLE, root, comm);
  for (int i = 0; i < 300; ++i)
    if (block[i] != which * 1000.0 + round + i) ++mismatches[which];
  int mine[2] = {rank, which * round}, all[2 * 64];
  MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
  for (int r = 0; r < size; ++r)
    if (all[2 * r] != r || all[2 * r + 1] != which * round) ++mismatches[which];
  int biggest = 0, contribution = rank * (which + 2) + round;
  MPI_Reduce(&contribution, &biggest, 1, MPI_INT, MPI_MAX, root, comm);
  if (rank == root && biggest != (size - 1) * (which + 2) + round) ++mismatches[which];
  totals[which] += sum + (long long)block[299] + biggest;
}

static void* work(void* arg) {
  const int which = *(int*)arg;
  for (int round = 0; round < ROUNDS; ++round) {
    if (serialized) wait_turn(which);
    round_of(comms[which], which, round);
    if (serialized) pass_turn();
  }
  return NULL;
}

/* FUNNELED: the other threads only compute. */
static volatile double sink;
static void* compute(void* arg) {
  double x = *(int*)arg;
  for (int i = 0; i < 2000000; ++i) x = x * 0.999999 + 1.0;
  sink = x;
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "multiple";
  int required = MPI_THREAD_MULTIPLE;
  if (strcmp(mode, "serialized") == 0) required = MPI_THREAD_SERIALIZED;
  if (strcmp(mode, "funneled") == 0) required = MPI_THREAD_FUNNELED;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, required, &provided);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided < required) {
    if (rank == 0) fprintf(stderr, "MPI provides thread level %d < %d\n", provided, required);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int i = 0; i < THREADS; ++i) MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
  pthread_t threads[THREADS];
  int ids[THREADS];
  for (int i = 0; i < THREADS; ++i) ids[i] = i;
  if (required == MPI_THREAD_FUNNELED) {
    for (int i = 1; i < THREADS; ++i) pthread_create(&threads[i], NULL, compute, &ids[i]);
    for (int i = 0; i < THREADS; ++i) work(&ids[i]);
    for (int i = 1; i < THREADS; ++i) pthread_join(threads[i], NULL);
  } else {
    serialized = required == MPI_THREAD_SERIALIZED;
    for (int i = 0; i < THREADS; ++i) pthread_create(&threads[i], NULL, work, &ids[i]);
    for (int i = 0; i < THREADS; ++i) pthread_join(threads[i], NULL);
  }
  int local = 0, wrong = 0;
  for (int i = 0; i < THREADS; ++i) local += mismatches[i];
  MPI_Allreduce(&local, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%s:", mode);
    for (int i = 0; i < THREADS; ++i) printf(" %lld", totals[i]);
    printf("\nmismatches: %d\n", wrong);
  }
  for (int i = 0; i < THREADS; ++i) MPI_Comm_free(&comms[i]);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
