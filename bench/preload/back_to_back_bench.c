/* Plain MPI loop (no cachecomm API) for back-to-back timing: per size, a batch of calls of one
 * collective on the same buffers (cache-hot) with nothing between them, as an iterative code makes
 * them; OSU instead puts a barrier after every call. A batch's time is the slowest rank's, divided
 * by its calls; the figure is the median over the batches. Its output has OSU's layout ("# Size
 * Avg Latency(us)" rows; one number for the barrier), so bench/peers/osu_compare.sh compares it
 * plain and preloaded under every MPI like an OSU program (its `b2b-<op>` operations).
 *
 * back_to_back_bench --op bcast|reduce|allreduce|allgather|barrier [-m MIN:MAX] [-i CALLS]
 *                    [--batches N]
 * bcast and allgather move bytes (MPI_BYTE); reduce and allreduce sum floats (sizes below 4 bytes
 * are skipped). -i: calls per batch at 8 KiB; fewer for larger sizes, more for smaller ones.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op_kind { op_bcast, op_reduce, op_allreduce, op_allgather, op_barrier };

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static int parse_op(const char* name) {
  const char* names[] = {"bcast", "reduce", "allreduce", "allgather", "barrier"};
  for (int op = 0; op < 5; ++op)
    if (strcmp(name, names[op]) == 0) return op;
  return -1;
}

static void call(int op, void* send, void* receive, size_t bytes) {
  const int count = (int)(op == op_reduce || op == op_allreduce ? bytes / sizeof(float) : bytes);
  switch (op) {
    case op_bcast: MPI_Bcast(send, count, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case op_reduce: MPI_Reduce(send, receive, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case op_allreduce:
      MPI_Allreduce(send, receive, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case op_allgather:
      MPI_Allgather(send, count, MPI_BYTE, receive, count, MPI_BYTE, MPI_COMM_WORLD);
      break;
    default: MPI_Barrier(MPI_COMM_WORLD); break;
  }
}

/* The median over `batches` of the slowest rank's time per call, in microseconds. */
static double time_calls(int op, void* send, void* receive, size_t bytes, int calls, int batches) {
  double* per_call = malloc(sizeof(double) * (size_t)batches);
  for (int warm = 0; warm < calls / 4 + 1; ++warm) call(op, send, receive, bytes);
  for (int batch = 0; batch < batches; ++batch) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < calls; ++i) call(op, send, receive, bytes);
    double mine = (MPI_Wtime() - start) / calls, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    per_call[batch] = slowest * 1e6;
  }
  qsort(per_call, (size_t)batches, sizeof(double), compare_doubles);
  const double median = per_call[batches / 2];
  free(per_call);
  return median;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int op = -1, calls = 200, batches = 7;
  size_t min_bytes = 1, max_bytes = 4u << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--op") == 0) op = parse_op(argv[i + 1]);
    if (strcmp(argv[i], "-i") == 0) calls = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--batches") == 0) batches = atoi(argv[i + 1]);
    if (strcmp(argv[i], "-m") == 0 && sscanf(argv[i + 1], "%zu:%zu", &min_bytes, &max_bytes) != 2)
      op = -2;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (op < 0 || calls < 1 || batches < 1 || min_bytes < 1 || max_bytes < min_bytes) {
    if (rank == 0)
      fprintf(stderr,
              "back_to_back_bench: --op bcast|reduce|allreduce|allgather|barrier [-m MIN:MAX] "
              "[-i CALLS >= 1] [--batches N >= 1]\n");
    MPI_Finalize();
    return 2;
  }
  if (op == op_barrier) {
    const double us = time_calls(op, NULL, NULL, 0, calls * 4, batches);
    if (rank == 0)
      printf("# back-to-back MPI_Barrier, %d ranks\n# Avg Latency(us)\n%.2f\n", size, us);
    MPI_Finalize();
    return 0;
  }
  const size_t receive_bytes = op == op_allgather ? max_bytes * (size_t)size : max_bytes;
  char* send = malloc(max_bytes);
  char* receive = malloc(receive_bytes);
  memset(send, 0, max_bytes); /* zeros: sums stay finite however many calls */
  memset(receive, 0, receive_bytes);
  if (rank == 0) printf("# back-to-back, %d ranks\n# Size          Avg Latency(us)\n", size);
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    if ((op == op_reduce || op == op_allreduce) && bytes < sizeof(float)) continue;
    /* About the same time per batch at every size: `calls` at 8 KiB, 8 at least. */
    long scaled = (long)calls * 8192 / (long)bytes;
    if (scaled < 8) scaled = 8;
    if (scaled > (long)calls * 8) scaled = (long)calls * 8;
    const double us = time_calls(op, send, receive, bytes, (int)scaled, batches);
    if (rank == 0) printf("%-10zu%18.2f\n", bytes, us);
    fflush(stdout);
  }
  free(send);
  free(receive);
  MPI_Finalize();
  return 0;
}
