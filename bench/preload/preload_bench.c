/* Plain MPI benchmark (no cachecomm API): times MPI_Barrier, an 8-byte MPI_Allreduce and a 1 MiB
 * MPI_Bcast. Run it with and without LD_PRELOAD=libcachecomm_mpi.so (run_preload_bench.sh does
 * both) to see what the preload library gives an unmodified program.
 *
 * Each operation is timed in batches; a batch's time is the slowest rank's, divided by the calls in
 * it. One JSON object per operation goes to stdout: median, quartiles and minimum over the batches.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op_kind { op_barrier, op_allreduce, op_bcast };

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void run_calls(enum op_kind kind, int calls, char* buffer, int bytes, int root_cycle,
                      int size) {
  for (int i = 0; i < calls; ++i) {
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
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  /* --quick: a smoke run that finishes even on a loaded, oversubscribed machine. */
  int batches = quick ? 8 : 300, calls = quick ? 50 : 200;
  measure("barrier", op_barrier, 0, batches, calls, rank, size);
  measure("allreduce", op_allreduce, 8, batches, calls, rank, size);
  measure("bcast", op_bcast, 1 << 20, batches, quick ? 2 : 5, rank, size);
  MPI_Finalize();
  return 0;
}
