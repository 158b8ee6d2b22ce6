/* Plain MPI program at MPI_THREAD_MULTIPLE: two threads per rank make collective calls on their own
 * communicators at once. The preload library must pass everything to MPI. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

static MPI_Comm comms[2];
static long long results[2];

static void* work(void* arg) {
  int which = *(int*)arg;
  int rank;
  MPI_Comm_rank(comms[which], &rank);
  long long total = 0;
  for (int round = 0; round < 20; ++round) {
    MPI_Barrier(comms[which]);
    long long value = (long long)(rank + 1) * (round + 1) * (which + 1), sum = 0;
    MPI_Allreduce(&value, &sum, 1, MPI_LONG_LONG, MPI_SUM, comms[which]);
    int root_value = rank == 0 ? round : -1;
    MPI_Bcast(&root_value, 1, MPI_INT, 0, comms[which]);
    total += sum + root_value;
  }
  results[which] = total;
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
  if (provided == MPI_THREAD_MULTIPLE) {
    pthread_t threads[2];
    int ids[2] = {0, 1};
    for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, work, &ids[i]);
    for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  } else {
    int ids[2] = {0, 1};
    work(&ids[0]);
    work(&ids[1]);
  }
  if (rank == 0) printf("thread results: %lld %lld\n", results[0], results[1]);
  MPI_Comm_free(&comms[0]);
  MPI_Comm_free(&comms[1]);
  MPI_Finalize();
  return 0;
}
