/* Plain MPI loop (no cachecomm API) for online selection's cost: per operation and size, `calls`
 * calls on the same buffers (cache-hot, as OSU does), each call timed on every rank; a call's time
 * is the slowest rank's. Prints one JSON object per (operation, size): the sum of the first
 * `head` calls (where online selection runs its trial) and the median call after them. Run it
 * plain, and preloaded with CACHECOMM_ONLINE_SELECTION=on and off, to compare.
 *
 * online_selection_bench [--calls N] [--head N]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int calls = 2000;
  int head = 60;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--calls") == 0) calls = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--head") == 0) head = atoi(argv[i + 1]);
  }
  if (calls <= head || head < 1) {
    fprintf(stderr, "online_selection_bench: --calls must exceed --head (>= 1)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int sizes[] = {8, 4096, 65536, 1 << 20};
  const char* names[] = {"allreduce", "bcast"};
  double* times = malloc(sizeof(double) * (size_t)calls);
  double* slowest = malloc(sizeof(double) * (size_t)calls);
  for (int op = 0; op < 2; ++op) {
    for (int s = 0; s < 4; ++s) {
      const int bytes = sizes[s];
      const int count = bytes / 8;
      double* input = calloc((size_t)count, sizeof(double));
      double* output = calloc((size_t)count, sizeof(double));
      for (int i = 0; i < count; ++i) input[i] = rank + i;
      MPI_Barrier(MPI_COMM_WORLD);
      for (int call = 0; call < calls; ++call) {
        const double start = MPI_Wtime();
        if (op == 0)
          MPI_Allreduce(input, output, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else
          MPI_Bcast(input, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        times[call] = MPI_Wtime() - start;
      }
      MPI_Reduce(times, slowest, calls, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      if (rank == 0) {
        double first = 0;
        for (int call = 0; call < head; ++call) first += slowest[call];
        qsort(slowest + head, (size_t)(calls - head), sizeof(double), compare_doubles);
        const double median = slowest[head + (calls - head) / 2];
        printf(
            "{\"op\": \"%s\", \"bytes\": %d, \"first_calls\": %d, \"first_us\": %.1f, "
            "\"median_after_us\": %.3f}\n",
            names[op], bytes, head, first * 1e6, median * 1e6);
      }
      free(input);
      free(output);
    }
  }
  free(times);
  free(slowest);
  MPI_Finalize();
  return 0;
}
