/* Plain MPI program: nonblocking collectives from several threads at MPI_THREAD_MULTIPLE (mpi4py's
 * default level), the way threaded codes and mpi4py's asyncio users make them.
 *
 *   - 4 threads, each on its own duplicate of MPI_COMM_WORLD (the last on a reversed split), start
 *     MPI_Iallreduce, MPI_Ibcast, MPI_Iallgather, MPI_Ireduce, MPI_Ialltoall and MPI_Ibarrier
 *     calls, several outstanding at once (more than the channel's ring on some rounds, and one
 *     larger than a slot), and complete them with MPI_Waitall, MPI_Testall, MPI_Waitany, MPI_Wait
 *     or MPI_Testsome, each array mixed with a point-to-point exchange of MPI's own.
 *   - With the argument "request-free", each thread also frees an MPI_Ibarrier request every
 *     round (MPI_Request_free) while the others complete theirs: MPI runs the request's free
 *     function in whichever thread gets there. Open MPI 4 itself refuses to free an active
 *     collective request (MPI_ERR_REQUEST), so that mode runs preloaded only.
 *   - Thread 0 starts an MPI_Iallreduce on a communicator only it uses, and hands the request to
 *     thread 1, which waits for it while thread 0 goes on with its own calls.
 * Every result is checked against the value computed locally; rank 0 prints each thread's
 * checksum and the mismatch count (0), so a preloaded run prints what MPI prints.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define ROUNDS 40
#define BIG_INTS (160 * 1024) /* 640 KiB: more than a slot of the channel, served in chunks */

static MPI_Comm comms[THREADS];
static MPI_Comm handed_comm;
static long long checksums[THREADS];
static int mismatches[THREADS];

/* The request thread 0 hands to thread 1, one per round. */
static pthread_mutex_t hand_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hand_changed = PTHREAD_COND_INITIALIZER;
static MPI_Request handed_request = MPI_REQUEST_NULL;
static int handed_round = -1;
static long long handed_value, handed_sum;
static int free_requests;

/* Thread 0: waits until thread 1 has taken the previous request (its buffers are reused). */
static void wait_hand_free(void) {
  pthread_mutex_lock(&hand_mutex);
  while (handed_round >= 0) pthread_cond_wait(&hand_changed, &hand_mutex);
  pthread_mutex_unlock(&hand_mutex);
}

static void hand_over(MPI_Request request, int round) {
  pthread_mutex_lock(&hand_mutex);
  handed_request = request;
  handed_round = round;
  pthread_cond_broadcast(&hand_changed);
  pthread_mutex_unlock(&hand_mutex);
}

/* Thread 1: waits for the request thread 0 started, then checks its sum. */
static void take_over(int size) {
  pthread_mutex_lock(&hand_mutex);
  while (handed_round < 0) pthread_cond_wait(&hand_changed, &hand_mutex);
  MPI_Request request = handed_request;
  const int round = handed_round;
  pthread_mutex_unlock(&hand_mutex);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (handed_sum != (long long)size * (size + 1) / 2 * (round + 7)) ++mismatches[1];
  checksums[1] += handed_sum;
  pthread_mutex_lock(&hand_mutex);
  handed_round = -1;
  pthread_cond_broadcast(&hand_changed);
  pthread_mutex_unlock(&hand_mutex);
}

/* Completes `count` requests the way the round says. */
static void complete(int round, int count, MPI_Request* requests) {
  switch (round % 5) {
    case 0: MPI_Waitall(count, requests, MPI_STATUSES_IGNORE); break;
    case 1: {
      int flag = 0;
      while (!flag) MPI_Testall(count, requests, &flag, MPI_STATUSES_IGNORE);
      break;
    }
    case 2:
      for (int left = count; left > 0; --left) {
        int index = 0;
        MPI_Waitany(count, requests, &index, MPI_STATUS_IGNORE);
      }
      break;
    case 3:
      for (int i = count - 1; i >= 0; --i) MPI_Wait(&requests[i], MPI_STATUS_IGNORE);
      break;
    default: {
      int indices[16], outcount = 0;
      for (;;) {
        MPI_Testsome(count, requests, &outcount, indices, MPI_STATUSES_IGNORE);
        if (outcount == MPI_UNDEFINED) break;
      }
    }
  }
}

static int* big_in[THREADS];
static int* big_out[THREADS];

static void round_of(int which, int round) {
  MPI_Comm comm = comms[which];
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int root = (round + which) % size;
  MPI_Request requests[12];
  int count = 0;

  long long value = (long long)(rank + 1) * (round + 1) * (which + 1), sum = 0;
  MPI_Iallreduce(&value, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm, &requests[count++]);
  double block[300];
  for (int i = 0; i < 300; ++i) block[i] = rank == root ? which * 1000.0 + round + i : -1.0;
  MPI_Ibcast(block, 300, MPI_DOUBLE, root, comm, &requests[count++]);
  int mine[2] = {rank, which * round}, all[2 * 64];
  MPI_Iallgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm, &requests[count++]);
  int contribution = rank * (which + 2) + round, biggest = 0;
  MPI_Ireduce(&contribution, &biggest, 1, MPI_INT, MPI_MAX, root, comm, &requests[count++]);
  int to_each[64], from_each[64];
  for (int r = 0; r < size; ++r) to_each[r] = rank * 100 + r + round;
  MPI_Ialltoall(to_each, 1, MPI_INT, from_each, 1, MPI_INT, comm, &requests[count++]);
  MPI_Ibarrier(comm, &requests[count++]);
  /* Every few rounds a call larger than a slot, and one freed instead of completed. */
  const int big = round % 4 == 3;
  if (big) {
    for (int i = 0; i < BIG_INTS; ++i) big_in[which][i] = rank + i % 7 + round;
    MPI_Iallreduce(big_in[which], big_out[which], BIG_INTS, MPI_INT, MPI_SUM, comm,
                   &requests[count++]);
  }
  if (free_requests) {
    MPI_Request freed;
    MPI_Ibarrier(comm, &freed);
    MPI_Request_free(&freed);
    if (freed != MPI_REQUEST_NULL) ++mismatches[which];
  }
  /* MPI's own requests in the same array: a ring exchange on this thread's communicator. */
  int sent = rank * 10 + which, received = -1;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Irecv(&received, 1, MPI_INT, left, 100 + round, comm, &requests[count++]);
  MPI_Isend(&sent, 1, MPI_INT, right, 100 + round, comm, &requests[count++]);
  complete(round + which, count, requests);

  if (sum != (long long)size * (size + 1) / 2 * (round + 1) * (which + 1)) ++mismatches[which];
  for (int i = 0; i < 300; ++i)
    if (block[i] != which * 1000.0 + round + i) ++mismatches[which];
  for (int r = 0; r < size; ++r)
    if (all[2 * r] != r || all[2 * r + 1] != which * round) ++mismatches[which];
  if (rank == root && biggest != (size - 1) * (which + 2) + round) ++mismatches[which];
  for (int r = 0; r < size; ++r)
    if (from_each[r] != r * 100 + rank + round) ++mismatches[which];
  if (received != left * 10 + which) ++mismatches[which];
  long long big_sum = 0;
  if (big) {
    for (int i = 0; i < BIG_INTS; ++i) {
      const int expected = size * (size - 1) / 2 + size * (i % 7 + round);
      if (big_out[which][i] != expected) ++mismatches[which];
      big_sum += big_out[which][i];
    }
  }
  checksums[which] += sum + (long long)block[299] + all[2 * size - 1] + from_each[size - 1] +
                      received + (rank == root ? biggest : 0) + big_sum;
}

static void* work(void* arg) {
  const int which = *(int*)arg;
  int size;
  MPI_Comm_size(handed_comm, &size);
  int rank;
  MPI_Comm_rank(handed_comm, &rank);
  for (int round = 0; round < ROUNDS; ++round) {
    if (which == 0) {
      wait_hand_free();
      handed_value = (long long)(rank + 1) * (round + 7);
      MPI_Request request;
      MPI_Iallreduce(&handed_value, &handed_sum, 1, MPI_LONG_LONG, MPI_SUM, handed_comm, &request);
      hand_over(request, round);
    }
    round_of(which, round);
    if (which == 1) take_over(size);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  free_requests = argc > 1 && strcmp(argv[1], "request-free") == 0;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_MULTIPLE || size > 64) {
    if (rank == 0)
      fprintf(stderr, "needs MPI_THREAD_MULTIPLE (got %d) and at most 64 ranks\n", provided);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int i = 0; i < THREADS - 1; ++i) MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[THREADS - 1]);
  MPI_Comm_dup(MPI_COMM_WORLD, &handed_comm);
  /* The blocking calls that build each communicator's shared state (the preload's warm-up). */
  for (int i = 0; i < THREADS; ++i)
    for (int k = 0; k < 6; ++k) MPI_Barrier(comms[i]);
  for (int k = 0; k < 6; ++k) MPI_Barrier(handed_comm);
  for (int i = 0; i < THREADS; ++i) {
    big_in[i] = malloc(sizeof(int) * BIG_INTS);
    big_out[i] = malloc(sizeof(int) * BIG_INTS);
  }
  pthread_t threads[THREADS];
  int ids[THREADS];
  for (int i = 0; i < THREADS; ++i) ids[i] = i;
  for (int i = 0; i < THREADS; ++i) pthread_create(&threads[i], NULL, work, &ids[i]);
  for (int i = 0; i < THREADS; ++i) pthread_join(threads[i], NULL);

  int local = 0, wrong = 0;
  for (int i = 0; i < THREADS; ++i) local += mismatches[i];
  MPI_Allreduce(&local, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("threads:");
    for (int i = 0; i < THREADS; ++i) printf(" %lld", checksums[i]);
    printf("\nmismatches: %d\n", wrong);
    if (free_requests) printf("freed requests: %s\n", wrong == 0 ? "checked" : "wrong results");
  }
  for (int i = 0; i < THREADS; ++i) {
    free(big_in[i]);
    free(big_out[i]);
    MPI_Comm_free(&comms[i]);
  }
  MPI_Comm_free(&handed_comm);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
