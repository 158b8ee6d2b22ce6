/* Plain MPI benchmark (no cachecomm API): times MPI_Barrier, an 8-byte MPI_Allreduce and a 1 MiB
 * MPI_Bcast, and on a window from MPI_Win_allocate: a fence epoch with one 8-byte put, a PSCW
 * epoch around the ring with one 8-byte put, a passive-target lock + 8-byte put + flush + unlock to
 * the right neighbour, and MPI_Fetch_and_op (8-byte sum on rank 0) inside a fence epoch and inside
 * lock_all. Run it with and without LD_PRELOAD=libcachecomm_mpi.so (run_preload_bench.sh does
 * both) to see what the preload library gives an unmodified program.
 *
 * Each operation is timed in batches; a batch's time is the slowest rank's, divided by the calls in
 * it. One JSON object per operation goes to stdout: median, quartiles and minimum over the batches.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op_kind {
  op_barrier,
  op_allreduce,
  op_bcast,
  op_fence_put,
  op_pscw_put,
  op_lock_put_flush,
  op_fetch_op_fence,
  op_fetch_op_lock_all
};

/* The window the RMA rows use, and the ring neighbours' groups for PSCW. */
static MPI_Win bench_window = MPI_WIN_NULL;
static MPI_Group left_group = MPI_GROUP_NULL, right_group = MPI_GROUP_NULL;

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void run_calls(enum op_kind kind, int calls, char* buffer, int bytes, int root_cycle,
                      int size) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int right = (rank + 1) % size;
  long long one = 1, fetched = 0;
  /* The RMA rows: one call is one epoch, or one atomic inside an epoch opened for the batch. */
  if (kind == op_fetch_op_fence) MPI_Win_fence(0, bench_window);
  if (kind == op_fetch_op_lock_all) MPI_Win_lock_all(0, bench_window);
  for (int i = 0; i < calls && kind >= op_fence_put; ++i) {
    switch (kind) {
      case op_fence_put:
        MPI_Win_fence(0, bench_window);
        MPI_Put(&one, 1, MPI_LONG_LONG, right, 1 + rank, 1, MPI_LONG_LONG, bench_window);
        break;
      case op_pscw_put:
        MPI_Win_post(left_group, 0, bench_window);
        MPI_Win_start(right_group, 0, bench_window);
        MPI_Put(&one, 1, MPI_LONG_LONG, right, 1 + rank, 1, MPI_LONG_LONG, bench_window);
        MPI_Win_complete(bench_window);
        MPI_Win_wait(bench_window);
        break;
      case op_lock_put_flush:
        MPI_Win_lock(MPI_LOCK_SHARED, right, 0, bench_window);
        MPI_Put(&one, 1, MPI_LONG_LONG, right, 1 + rank, 1, MPI_LONG_LONG, bench_window);
        MPI_Win_flush(right, bench_window);
        MPI_Win_unlock(right, bench_window);
        break;
      case op_fetch_op_fence:
        MPI_Fetch_and_op(&one, &fetched, MPI_LONG_LONG, 0, 0, MPI_SUM, bench_window);
        break;
      case op_fetch_op_lock_all:
        MPI_Fetch_and_op(&one, &fetched, MPI_LONG_LONG, 0, 0, MPI_SUM, bench_window);
        MPI_Win_flush(0, bench_window);
        break;
      default: break;
    }
  }
  if (kind == op_fence_put || kind == op_fetch_op_fence)
    MPI_Win_fence(MPI_MODE_NOSUCCEED, bench_window);
  if (kind == op_fetch_op_lock_all) MPI_Win_unlock_all(bench_window);
  for (int i = 0; i < calls && kind < op_fence_put; ++i) {
    if (kind == op_barrier) {
      MPI_Barrier(MPI_COMM_WORLD);
    } else if (kind == op_allreduce) {
      double value = 1.0, sum = 0.0;
      MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else {
      MPI_Bcast(buffer, bytes, MPI_BYTE, root_cycle ? i % size : 0, MPI_COMM_WORLD);
    }
  }
}

static void measure(const char* name, enum op_kind kind, int bytes, int batches,
                    int calls_per_batch, int rank, int size) {
  char* buffer = (char*)malloc(bytes > 0 ? (size_t)bytes : 1);
  memset(buffer, rank, bytes > 0 ? (size_t)bytes : 1);
  /* Warm-up: also past the preload library's warm-up, so cachecomm state exists when timing starts.
   */
  run_calls(kind, calls_per_batch < 20 ? 20 : calls_per_batch, buffer, bytes, 1, size);
  double* per_call_us = (double*)malloc(sizeof(double) * (size_t)batches);
  for (int b = 0; b < batches; ++b) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    run_calls(kind, calls_per_batch, buffer, bytes, 0, size);
    double local = (MPI_Wtime() - start) / calls_per_batch * 1e6, slowest = 0;
    MPI_Reduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    per_call_us[b] = slowest;
  }
  if (rank == 0) {
    qsort(per_call_us, (size_t)batches, sizeof(double), compare_doubles);
    printf(
        "{\"op\": \"%s\", \"bytes\": %d, \"np\": %d, \"iters\": %d, \"median_us\": %.4f, "
        "\"p25_us\": %.4f, "
        "\"p75_us\": %.4f, \"min_us\": %.4f}\n",
        name, bytes, size, batches * calls_per_batch, per_call_us[batches / 2],
        per_call_us[batches / 4], per_call_us[(3 * batches) / 4], per_call_us[0]);
    fflush(stdout);
  }
  free(per_call_us);
  free(buffer);
}

int main(int argc, char** argv) {
  /* --quick: a smoke run that finishes even on a loaded, oversubscribed machine.
   * --thread-multiple: the same calls from one thread after MPI_Init_thread(MPI_THREAD_MULTIPLE)
   * (mpi4py's default level; MPI and the preload may take other paths there). */
  int quick = 0, multiple = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) quick = 1;
    if (strcmp(argv[i], "--thread-multiple") == 0) multiple = 1;
  }
  if (multiple) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int batches = quick ? 8 : 300, calls = quick ? 50 : 200;
  measure("barrier", op_barrier, 0, batches, calls, rank, size);
  measure("allreduce", op_allreduce, 8, batches, calls, rank, size);
  measure("bcast", op_bcast, 1 << 20, batches, quick ? 2 : 5, rank, size);

  long long* base = NULL;
  MPI_Win_allocate((MPI_Aint)(64 * sizeof(long long)), (int)sizeof(long long), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &base, &bench_window);
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Group_incl(world_group, 1, &left, &left_group);
  MPI_Group_incl(world_group, 1, &right, &right_group);
  MPI_Group_free(&world_group);
  measure("win_fence_put", op_fence_put, 8, batches, calls, rank, size);
  measure("win_pscw_put", op_pscw_put, 8, batches, calls, rank, size);
  measure("win_lock_put_flush", op_lock_put_flush, 8, batches, calls, rank, size);
  measure("win_fetch_and_op_fence", op_fetch_op_fence, 8, batches, calls, rank, size);
  measure("win_fetch_and_op_lock_all", op_fetch_op_lock_all, 8, batches, calls, rank, size);
  MPI_Group_free(&left_group);
  MPI_Group_free(&right_group);
  MPI_Win_free(&bench_window);
  MPI_Finalize();
  return 0;
}
