/* Plain MPI program: windows used by several threads at once under MPI_THREAD_MULTIPLE.
 *   own windows    4 threads, each looping fence epochs, PSCW epochs (puts and accumulates) and
 *                  lock/unlock epochs on a window of its own, concurrently with the others: two
 *                  allocate theirs on their own duplicated communicator, two use windows the main
 *                  thread allocated on MPI_COMM_WORLD, while the main thread runs collectives on
 *                  MPI_COMM_WORLD
 *   one window     4 threads accumulating (and putting to slots of their own) into ONE window
 *                  inside one fence epoch, then inside one PSCW epoch, opened and closed by the
 *                  main thread; derived-datatype accumulates among them (done by MPI)
 * Every value is checked; rank 0 prints the totals, so a preloaded run prints what MPI prints.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define THREADS 4
#define ROUNDS 20
#define ADDS 200
/* Derived-type accumulates per thread and target: enough that threads often overlap in MPI's lock.
 */
#define MPI_ADDS 1000

static int rank, size;
static MPI_Comm comms[THREADS];
static long long totals[THREADS];
static int mismatches[THREADS];

/* ---- own windows: slot 0 gets puts from the left neighbour, slot 1 sums of accumulates ---- */

static void group_of(MPI_Comm comm, int member, MPI_Group* group) {
  MPI_Group all;
  MPI_Comm_group(comm, &all);
  MPI_Group_incl(all, 1, &member, group);
  MPI_Group_free(&all);
}

static void own_window_round(MPI_Comm comm, MPI_Win win, long long* base, int which, int round) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  const long long mark = (long long)which * 100000 + round * 100;
  /* Fence epoch: a put to the right neighbour, an accumulate to every rank. */
  base[0] = -1;
  base[1] = 0;
  MPI_Win_fence(0, win);
  long long value = mark + rank;
  MPI_Put(&value, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win);
  const long long add = rank + 1;
  for (int target = 0; target < size; ++target)
    MPI_Accumulate(&add, 1, MPI_LONG_LONG, target, 1, 1, MPI_LONG_LONG, MPI_SUM, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (base[0] != mark + left) ++mismatches[which];
  if (base[1] != (long long)size * (size + 1) / 2) ++mismatches[which];
  totals[which] += base[0] + base[1];

  /* PSCW epoch: the same ring, expose to the left neighbour, access the right one. */
  MPI_Group from, to;
  group_of(comm, left, &from);
  group_of(comm, right, &to);
  base[0] = -1;
  base[1] = 0;
  MPI_Win_post(from, 0, win);
  MPI_Win_start(to, 0, win);
  value = mark + 10 + rank;
  MPI_Put(&value, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win);
  MPI_Accumulate(&add, 1, MPI_LONG_LONG, right, 1, 1, MPI_LONG_LONG, MPI_SUM, win);
  MPI_Accumulate(&add, 1, MPI_LONG_LONG, right, 1, 1, MPI_LONG_LONG, MPI_SUM, win);
  MPI_Win_complete(win);
  MPI_Win_wait(win);
  MPI_Group_free(&from);
  MPI_Group_free(&to);
  if (base[0] != mark + 10 + left) ++mismatches[which];
  if (base[1] != 2LL * (left + 1)) ++mismatches[which];
  totals[which] += base[0] + base[1];

  /* Passive target: an exclusive lock on the right neighbour, a put into its slot 2. */
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
  value = mark + 20 + rank;
  MPI_Put(&value, 1, MPI_LONG_LONG, right, 2, 1, MPI_LONG_LONG, win);
  MPI_Win_unlock(right, win);
  MPI_Barrier(comm);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  const long long got = base[2];
  MPI_Win_unlock(rank, win);
  if (got != mark + 20 + left) ++mismatches[which];
  totals[which] += got;
  MPI_Barrier(comm); /* nobody writes slot 2 of the next round before it was read */
}

/* Threads below this allocate their window themselves; the others get one made on
 * MPI_COMM_WORLD by the main thread (so that their fences run while the main thread's collectives
 * on MPI_COMM_WORLD do). */
#define ALLOCATING 2
static MPI_Win world_wins[THREADS];
static long long* world_bases[THREADS];

static void* own_window(void* arg) {
  const int which = *(int*)arg;
  long long* base = world_bases[which];
  MPI_Win win = world_wins[which];
  if (which < ALLOCATING)
    MPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, comms[which], &base,
                     &win);
  /* The passive-target step synchronizes on the thread's communicator: a window made on
   * MPI_COMM_WORLD has the same ranks. */
  for (int round = 0; round < ROUNDS; ++round)
    own_window_round(comms[which], win, base, which, round);
  if (which < ALLOCATING) MPI_Win_free(&win);
  return NULL;
}

/* The main thread meanwhile: checked collectives on MPI_COMM_WORLD. */
static int world_collectives(long long* total) {
  int wrong = 0;
  for (int round = 0; round < 10 * ROUNDS; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    long long value = (long long)(rank + 1) * (round + 1), sum = 0;
    MPI_Allreduce(&value, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (sum != (long long)size * (size + 1) / 2 * (round + 1)) ++wrong;
    *total += sum;
  }
  return wrong;
}

/* ---- one window: slot 0 shared by every thread, slot 1 + t belongs to thread t ---- */
/* Slot 1 + THREADS + t: thread t's put from the left neighbour. Slot 1 + 2 * THREADS + t: sums
 * of accumulates of a derived datatype, which MPI does under a lock (one lock per target and
 * process at a time, so the threads take turns). */

static MPI_Win shared_win;
static MPI_Datatype derived_long_long;

static void* accumulate_into_shared(void* arg) {
  const int which = *(int*)arg;
  const long long one = 1, own = which + 1;
  for (int i = 0; i < ADDS; ++i) {
    for (int target = 0; target < size; ++target) {
      MPI_Accumulate(&one, 1, MPI_LONG_LONG, target, 0, 1, MPI_LONG_LONG, MPI_SUM, shared_win);
      MPI_Accumulate(&own, 1, MPI_LONG_LONG, target, 1 + which, 1, MPI_LONG_LONG, MPI_SUM,
                     shared_win);
    }
  }
  const long long mine = (long long)rank * 1000 + which;
  MPI_Put(&mine, 1, MPI_LONG_LONG, (rank + 1) % size, 1 + THREADS + which, 1, MPI_LONG_LONG,
          shared_win);
  for (int i = 0; i < MPI_ADDS; ++i) {
    for (int target = 0; target < size; ++target)
      MPI_Accumulate(&own, 1, derived_long_long, target, 1 + 2 * THREADS + which, 1,
                     derived_long_long, MPI_SUM, shared_win);
  }
  return NULL;
}

static int check_shared(const long long* base, const char* epoch) {
  int wrong = 0;
  const int left = (rank + size - 1) % size;
  if (base[0] != (long long)size * THREADS * ADDS) ++wrong;
  for (int t = 0; t < THREADS; ++t) {
    if (base[1 + t] != (long long)size * ADDS * (t + 1)) ++wrong;
    if (base[1 + THREADS + t] != (long long)left * 1000 + t) ++wrong;
    if (base[1 + 2 * THREADS + t] != (long long)size * MPI_ADDS * (t + 1)) ++wrong;
  }
  if (wrong != 0)
    fprintf(stderr, "rank %d: %d wrong slots after the %s epoch\n", rank, wrong, epoch);
  return wrong;
}

/* Runs `body` on THREADS threads; `meanwhile` (if any) on this one before joining them. */
static void run_threads(void* (*body)(void*), void (*meanwhile)(void)) {
  pthread_t threads[THREADS];
  int ids[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    ids[i] = i;
    pthread_create(&threads[i], NULL, body, &ids[i]);
  }
  if (meanwhile != NULL) meanwhile();
  for (int i = 0; i < THREADS; ++i) pthread_join(threads[i], NULL);
}

static int world_wrong;
static long long world_total;
static void main_thread_collectives(void) {
  world_wrong = world_collectives(&world_total);
}

static int one_window(long long* shared_total) {
  const int slots = 1 + 3 * THREADS;
  MPI_Type_contiguous(1, MPI_LONG_LONG, &derived_long_long);
  MPI_Type_commit(&derived_long_long);
  long long* base = NULL;
  MPI_Win_allocate(slots * (MPI_Aint)sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &shared_win);
  int wrong = 0;
  /* Fence epoch opened and closed by this thread, accesses by the four others. */
  memset(base, 0, slots * sizeof(long long));
  MPI_Win_fence(0, shared_win);
  run_threads(accumulate_into_shared, NULL);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, shared_win);
  wrong += check_shared(base, "fence");
  *shared_total += base[0];
  /* PSCW epoch with every rank in both groups: the threads race for the first access to each
   * target. */
  MPI_Barrier(MPI_COMM_WORLD);
  memset(base, 0, slots * sizeof(long long));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Win_post(world, 0, shared_win);
  MPI_Win_start(world, 0, shared_win);
  run_threads(accumulate_into_shared, NULL);
  MPI_Win_complete(shared_win);
  MPI_Win_wait(shared_win);
  MPI_Group_free(&world);
  wrong += check_shared(base, "PSCW");
  *shared_total += base[0];
  MPI_Win_free(&shared_win);
  MPI_Type_free(&derived_long_long);
  return wrong;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      fprintf(stderr, "MPI provides thread level %d < MPI_THREAD_MULTIPLE\n", provided);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int i = 0; i < THREADS; ++i) MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
  for (int i = ALLOCATING; i < THREADS; ++i)
    MPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &world_bases[i], &world_wins[i]);
  run_threads(own_window, main_thread_collectives);
  for (int i = ALLOCATING; i < THREADS; ++i) MPI_Win_free(&world_wins[i]);
  long long shared_total = 0;
  int local = one_window(&shared_total) + world_wrong;
  for (int i = 0; i < THREADS; ++i) local += mismatches[i];
  int wrong = 0;
  MPI_Allreduce(&local, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("own windows:");
    for (int i = 0; i < THREADS; ++i) printf(" %lld", totals[i]);
    printf("\nworld collectives: %lld\none window: %lld\nmismatches: %d\n", world_total,
           shared_total, wrong);
  }
  for (int i = 0; i < THREADS; ++i) MPI_Comm_free(&comms[i]);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
