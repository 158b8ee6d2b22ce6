/* Plain MPI program: a window from MPI_Win_allocate used with fence epochs (put, get, accumulate,
 * a derived-datatype put), PSCW epochs around a ring, and a passive-target (lock) epoch.
 * Rank 0 prints what every rank ends up with. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { slots = 64 };

static void print_all(const char* label, const long long* mine, int n, MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  long long* all = (long long*)malloc(sizeof(long long) * (size_t)(n * size));
  MPI_Gather(mine, n, MPI_LONG_LONG, all, n, MPI_LONG_LONG, 0, comm);
  if (rank == 0) {
    printf("%s:", label);
    for (int i = 0; i < n * size; ++i) printf(" %lld", all[i]);
    printf("\n");
  }
  free(all);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  long long* base = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)(slots * sizeof(long long)), (int)sizeof(long long), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &win);
  for (int i = 0; i < slots; ++i) base[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);

  /* Fence epochs. */
  for (int round = 0; round < 4; ++round) {
    MPI_Win_fence(0, win);
    long long value = 100 * rank + round;
    MPI_Put(&value, 1, MPI_LONG_LONG, right, round, 1, MPI_LONG_LONG, win);
    long long one = rank + 1;
    MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 10, 1, MPI_LONG_LONG, MPI_SUM, win);
    MPI_Accumulate(&value, 1, MPI_LONG_LONG, 0, 11, 1, MPI_LONG_LONG, MPI_MAX, win);
    MPI_Win_fence(0, win);
    long long seen = -1;
    MPI_Get(&seen, 1, MPI_LONG_LONG, left, round, 1, MPI_LONG_LONG, win);
    MPI_Win_fence(0, win);
    base[20 + round] = seen;
  }
  /* A strided (derived) target type: every other slot 30, 32, 34 of the right neighbour. */
  MPI_Datatype strided;
  MPI_Type_vector(3, 1, 2, MPI_LONG_LONG, &strided);
  MPI_Type_commit(&strided);
  long long triple[3] = {rank * 7, rank * 7 + 1, rank * 7 + 2};
  MPI_Put(triple, 3, MPI_LONG_LONG, right, 30, 1, strided, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  MPI_Type_free(&strided);
  print_all("after fences", base, 36, MPI_COMM_WORLD);

  /* PSCW around the ring: expose to the left neighbour, access the right one. */
  MPI_Group world_group, left_group, right_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_incl(world_group, 1, &left, &left_group);
  MPI_Group_incl(world_group, 1, &right, &right_group);
  for (int round = 0; round < 5; ++round) {
    MPI_Win_post(left_group, 0, win);
    MPI_Win_start(right_group, 0, win);
    long long message[2] = {1000 * rank + round, -round};
    MPI_Put(message, 2, MPI_LONG_LONG, right, 40, 2, MPI_LONG_LONG, win);
    long long add = 1;
    MPI_Accumulate(&add, 1, MPI_LONG_LONG, right, 42, 1, MPI_LONG_LONG, MPI_SUM, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    base[43 + round] = base[40] + base[41];
  }
  print_all("after pscw", base + 40, 8, MPI_COMM_WORLD);

  /* Passive target: MPI's own, on the same memory. */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
  long long mark = 5000 + rank;
  MPI_Put(&mark, 1, MPI_LONG_LONG, right, 50, 1, MPI_LONG_LONG, win);
  MPI_Win_unlock(right, win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  long long got = base[50];
  MPI_Win_unlock(rank, win);
  print_all("after lock", &got, 1, MPI_COMM_WORLD);

  MPI_Group_free(&left_group);
  MPI_Group_free(&right_group);
  MPI_Group_free(&world_group);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
