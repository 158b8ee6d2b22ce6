/* Paired A/B inside one process: per collective and size, batches of the MPI_ call (served by
 * the preload when it is loaded) alternate with batches of the PMPI_ call (always the MPI's own),
 * on the same buffers and ranks, and each pair gives a ratio mpi / preload. On a VM whose speed
 * changes 2-2.5x within seconds (vCPU placement), two runs launched one after the other (OSU plain,
 * OSU preloaded) land in different phases; two batches a millisecond apart share one. So the
 * per-pair ratios keep their precision where the rounds of bench/peers/osu_compare.sh spread over
 * 0.3-5x. Without the preload both sides are the MPI's call: the ratios must come out near 1.
 *
 * What it does not see: the calls a program makes before the choice settles (online selection's
 * trial: each size first gets --warmup calls of the served side, untimed). OSU's rows, plain and
 * preloaded in separate runs, include them.
 *
 * paired_bench [--ops bcast,reduce,...] [-m MIN:MAX] [--pairs N] [-i CALLS] [--warmup N]
 *              [--timing per-call|back-to-back] [--buffers hot|cold] [--buffer-offset BYTES]
 *              [--json FILE]
 * Ops: barrier bcast reduce allreduce allgather gather scatter alltoall reduce_scatter_block scan
 * exscan allgatherv gatherv ibarrier ibcast iallreduce iallgather igather ialltoall iscatter. Sizes
 * are OSU's: the vector for bcast and the reductions (MPI_FLOAT sums; below 4 bytes skipped), a
 * rank's block for the others. per-call: a PMPI_Barrier before every call, outside the timed part
 * (OSU's loop); back-to-back: the batch's calls in a row. cold: every buffer rewritten before every
 * call (outside the timed part; per-call only). A batch's figure is the ranks' average time per
 * call (OSU's "Avg Latency"). -i: calls per batch at 8 KiB, scaled to keep a batch's time about
 * even. --buffer-offset: where the buffers start past a page boundary, in bytes: 0 as OSU allocates
 * them (posix_memalign), 16 (the default) as a large malloc or calloc returns them. It matters:
 * glibc's `rep movsb` copies land in the AMD trap at 1-31 bytes (docs/architecture.md), so an MPI's
 * own copies into 16-byte-offset buffers can be several times slower than into OSU's.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* side 0: the MPI_ call (the preload's when loaded); side 1: the PMPI_ call (the MPI's own). */
#define CALL(side, name, ...) ((side) ? P##name(__VA_ARGS__) : name(__VA_ARGS__))

static const char* const op_names[] = {"barrier",    "bcast",      "reduce",
                                       "allreduce",  "allgather",  "gather",
                                       "scatter",    "alltoall",   "reduce_scatter_block",
                                       "scan",       "exscan",     "allgatherv",
                                       "gatherv",    "ibarrier",   "ibcast",
                                       "iallreduce", "iallgather", "igather",
                                       "ialltoall",  "iscatter"};
enum { op_count = sizeof op_names / sizeof op_names[0] };
enum op_kind {
  op_barrier,
  op_bcast,
  op_reduce,
  op_allreduce,
  op_allgather,
  op_gather,
  op_scatter,
  op_alltoall,
  op_reduce_scatter_block,
  op_scan,
  op_exscan,
  op_allgatherv,
  op_gatherv,
  op_ibarrier,
  op_ibcast,
  op_iallreduce,
  op_iallgather,
  op_igather,
  op_ialltoall,
  op_iscatter
};

static int rank, size;
static char *send_buffer, *receive_buffer;
static int *counts, *displacements;

static int is_reduction(int op) {
  return op == op_reduce || op == op_allreduce || op == op_reduce_scatter_block || op == op_scan ||
         op == op_exscan || op == op_iallreduce;
}

/* One call of `op` on `bytes` (see the header for what the size is). */
static void call(int op, int side, size_t bytes) {
  const int n = (int)(is_reduction(op) ? bytes / sizeof(float) : bytes);
  void* s = send_buffer;
  void* r = receive_buffer;
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Request q = MPI_REQUEST_NULL;
  switch (op) {
    case op_barrier: CALL(side, MPI_Barrier, w); break;
    case op_bcast: CALL(side, MPI_Bcast, s, n, MPI_BYTE, 0, w); break;
    case op_reduce: CALL(side, MPI_Reduce, s, r, n, MPI_FLOAT, MPI_SUM, 0, w); break;
    case op_allreduce: CALL(side, MPI_Allreduce, s, r, n, MPI_FLOAT, MPI_SUM, w); break;
    case op_allgather: CALL(side, MPI_Allgather, s, n, MPI_BYTE, r, n, MPI_BYTE, w); break;
    case op_gather: CALL(side, MPI_Gather, s, n, MPI_BYTE, r, n, MPI_BYTE, 0, w); break;
    case op_scatter: CALL(side, MPI_Scatter, s, n, MPI_BYTE, r, n, MPI_BYTE, 0, w); break;
    case op_alltoall: CALL(side, MPI_Alltoall, s, n, MPI_BYTE, r, n, MPI_BYTE, w); break;
    case op_reduce_scatter_block:
      CALL(side, MPI_Reduce_scatter_block, s, r, n, MPI_FLOAT, MPI_SUM, w);
      break;
    case op_scan: CALL(side, MPI_Scan, s, r, n, MPI_FLOAT, MPI_SUM, w); break;
    case op_exscan: CALL(side, MPI_Exscan, s, r, n, MPI_FLOAT, MPI_SUM, w); break;
    case op_allgatherv:
      CALL(side, MPI_Allgatherv, s, n, MPI_BYTE, r, counts, displacements, MPI_BYTE, w);
      break;
    case op_gatherv:
      CALL(side, MPI_Gatherv, s, n, MPI_BYTE, r, counts, displacements, MPI_BYTE, 0, w);
      break;
    case op_ibarrier: CALL(side, MPI_Ibarrier, w, &q); break;
    case op_ibcast: CALL(side, MPI_Ibcast, s, n, MPI_BYTE, 0, w, &q); break;
    case op_iallreduce: CALL(side, MPI_Iallreduce, s, r, n, MPI_FLOAT, MPI_SUM, w, &q); break;
    case op_iallgather: CALL(side, MPI_Iallgather, s, n, MPI_BYTE, r, n, MPI_BYTE, w, &q); break;
    case op_igather: CALL(side, MPI_Igather, s, n, MPI_BYTE, r, n, MPI_BYTE, 0, w, &q); break;
    case op_ialltoall: CALL(side, MPI_Ialltoall, s, n, MPI_BYTE, r, n, MPI_BYTE, w, &q); break;
    case op_iscatter: CALL(side, MPI_Iscatter, s, n, MPI_BYTE, r, n, MPI_BYTE, 0, w, &q); break;
    default: break;
  }
  if (op >= op_ibarrier) CALL(side, MPI_Wait, &q, MPI_STATUS_IGNORE);
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The ranks' average time per call of a batch of `calls`, in microseconds (every rank gets it). */
static double batch(int op, int side, size_t bytes, int calls, int per_call, int cold) {
  const size_t touched = bytes * (size_t)size;
  double mine = 0;
  if (!per_call) {
    PMPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < calls; ++i) call(op, side, bytes);
    mine = MPI_Wtime() - start;
  } else {
    for (int i = 0; i < calls; ++i) {
      if (cold) {
        memset(send_buffer, 0, touched);
        memset(receive_buffer, 0, touched);
      }
      PMPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      call(op, side, bytes);
      mine += MPI_Wtime() - start;
    }
  }
  double total = 0;
  PMPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return total / size / calls * 1e6;
}

struct summary {
  double median, p25, p75, min;
};
static struct summary summarize(double* values, int n) {
  qsort(values, (size_t)n, sizeof(double), compare_doubles);
  return (struct summary){values[n / 2], values[n / 4], values[(3 * n) / 4], values[0]};
}

static int parse_ops(char* list, int* selected) {
  for (char* name = strtok(list, ","); name != NULL; name = strtok(NULL, ",")) {
    int found = -1;
    for (int op = 0; op < op_count; ++op)
      if (strcmp(name, op_names[op]) == 0) found = op;
    if (found < 0) return -1;
    selected[found] = 1;
  }
  return 0;
}

static void cpu_model(char* model, size_t capacity) {
  snprintf(model, capacity, "unknown");
  FILE* info = fopen("/proc/cpuinfo", "r");
  if (info == NULL) return;
  char line[256];
  while (fgets(line, sizeof line, info) != NULL) {
    char* colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
      snprintf(model, capacity, "%s", colon + 2);
      model[strcspn(model, "\n")] = '\0';
      break;
    }
  }
  fclose(info);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int selected[op_count] = {0}, pairs = 25, calls = 50, warmup = 150, per_call = 1, cold = 0;
  int bad = 0;
  long buffer_offset = 16;
  size_t min_bytes = 1, max_bytes = 4u << 20;
  const char* json = NULL;
  char default_ops[] = "barrier,bcast,reduce,allreduce,allgather";
  char* ops = default_ops;
  for (int i = 1; i < argc; ++i) {
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (value == NULL) {
      bad = 1;
    } else if (strcmp(argv[i], "--ops") == 0) {
      ops = argv[++i];
    } else if (strcmp(argv[i], "-m") == 0) {
      bad |= sscanf(argv[++i], "%zu:%zu", &min_bytes, &max_bytes) != 2;
    } else if (strcmp(argv[i], "--pairs") == 0) {
      pairs = atoi(argv[++i]);
    } else if (strcmp(argv[i], "-i") == 0) {
      calls = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--warmup") == 0) {
      warmup = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--timing") == 0) {
      per_call = strcmp(argv[++i], "per-call") == 0;
      bad |= !per_call && strcmp(argv[i], "back-to-back") != 0;
    } else if (strcmp(argv[i], "--buffers") == 0) {
      cold = strcmp(argv[++i], "cold") == 0;
      bad |= !cold && strcmp(argv[i], "hot") != 0;
    } else if (strcmp(argv[i], "--buffer-offset") == 0) {
      buffer_offset = atol(argv[++i]);
    } else if (strcmp(argv[i], "--json") == 0) {
      json = argv[++i];
    } else {
      bad = 1;
    }
  }
  bad |= parse_ops(ops, selected) != 0 || pairs < 2 || calls < 1 || warmup < 0 || min_bytes < 1 ||
         max_bytes < min_bytes || (cold && !per_call) || buffer_offset < 0 || buffer_offset >= 4096;
  if (bad) {
    if (rank == 0)
      fprintf(stderr,
              "paired_bench: [--ops OP,...] [-m MIN:MAX] [--pairs N >= 2] [-i CALLS >= 1] "
              "[--warmup N] [--timing per-call|back-to-back] [--buffers hot|cold (per-call)] "
              "[--buffer-offset BYTES < 4096] [--json FILE]\n");
    MPI_Finalize();
    return 2;
  }
  const size_t buffer_bytes = max_bytes * (size_t)size;
  void* pages[2] = {NULL, NULL};
  for (int b = 0; b < 2; ++b) {
    if (posix_memalign(&pages[b], 4096, buffer_bytes + (size_t)buffer_offset) != 0) {
      fprintf(stderr, "paired_bench: cannot allocate %zu bytes\n", buffer_bytes);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(pages[b], 0, buffer_bytes + (size_t)buffer_offset); /* zeros: sums stay finite */
  }
  send_buffer = (char*)pages[0] + buffer_offset;
  receive_buffer = (char*)pages[1] + buffer_offset;
  counts = malloc(sizeof(int) * (size_t)size);
  displacements = malloc(sizeof(int) * (size_t)size);
  double* ratios = malloc(sizeof(double) * (size_t)pairs);
  double* times[2] = {malloc(sizeof(double) * (size_t)pairs),
                      malloc(sizeof(double) * (size_t)pairs)};

  const char* preload = getenv("LD_PRELOAD");
  const int preloaded = preload != NULL && strstr(preload, "cachecomm") != NULL;
  char library[MPI_MAX_LIBRARY_VERSION_STRING] = "", model[128];
  int length = 0;
  MPI_Get_library_version(library, &length);
  library[strcspn(library, "\n,")] = '\0';
  cpu_model(model, sizeof model);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  FILE* out = rank == 0 && json != NULL ? fopen(json, "w") : NULL;
  if (rank == 0) {
    printf(
        "# paired A/B, %d ranks on %ld cores%s, %s, %s buffers %ld bytes past a page, %d pairs; "
        "preload %s\n",
        size, cores, size > cores ? " (oversubscribed)" : "",
        per_call ? "per call" : "back to back", cold ? "cold" : "hot", buffer_offset, pairs,
        preloaded ? "loaded" : "NOT loaded (both sides MPI)");
    printf("# ratio = mpi / preload per pair (> 1: the preload is faster): median [p25-p75]\n");
  }
  if (out != NULL)
    fprintf(out,
            "{\"tool\": \"paired_bench\", \"suite\": \"preload-paired\", \"machine\": {\"cpu\": "
            "\"%s\", \"cores\": %ld, \"mpi\": \"%s\"}, \"np\": %d, \"oversubscribed\": %s, "
            "\"preloaded\": %s, \"buffer_offset\": %ld, \"results\": [",
            model, cores, library, size, size > cores ? "true" : "false",
            preloaded ? "true" : "false", buffer_offset);
  int rows = 0;
  for (int op = 0; op < op_count; ++op) {
    if (!selected[op]) continue;
    if (rank == 0)
      printf("# %s\n# %10s %12s %12s %8s %15s\n", op_names[op], "bytes", "mpi us", "preload us",
             "ratio", "p25-p75");
    const int sized = op != op_barrier && op != op_ibarrier;
    for (size_t bytes = sized ? min_bytes : 0; bytes <= (sized ? max_bytes : 0);
         bytes = sized ? bytes * 2 : 1) {
      if (is_reduction(op) && bytes < sizeof(float)) continue;
      long scaled = bytes == 0 ? (long)calls * 8 : (long)calls * 8192 / (long)bytes;
      scaled = scaled < 4 ? 4 : scaled > (long)calls * 8 ? (long)calls * 8 : scaled;
      /* The v-calls' counts and displacements: one block per rank, set outside the timed calls. */
      const int n = (int)(is_reduction(op) ? bytes / sizeof(float) : bytes);
      for (int i = 0; i < size; ++i) {
        counts[i] = n;
        displacements[i] = i * n;
      }
      for (int i = 0; i < warmup; ++i) call(op, 0, bytes);
      for (int i = 0; i < warmup / 8 + 1; ++i) call(op, 1, bytes);
      for (int p = 0; p < pairs; ++p) {
        const int first = p % 2; /* which side goes first alternates */
        double t[2];
        t[first] = batch(op, first, bytes, (int)scaled, per_call, cold);
        t[!first] = batch(op, !first, bytes, (int)scaled, per_call, cold);
        times[0][p] = t[0];
        times[1][p] = t[1];
        ratios[p] = t[1] / t[0];
      }
      const struct summary ratio = summarize(ratios, pairs);
      const struct summary served = summarize(times[0], pairs);
      const struct summary own = summarize(times[1], pairs);
      if (rank == 0) {
        printf("  %10zu %12.2f %12.2f %8.2f %7.2f-%-7.2f\n", bytes, own.median, served.median,
               ratio.median, ratio.p25, ratio.p75);
        fflush(stdout);
      }
      if (out == NULL) continue;
      const char* fields =
          "{\"op\": \"%s\", \"impl\": \"%s\", \"algorithm\": \"%s\", \"mpi_library\": \"%s\", "
          "\"buffers\": \"%s\", \"timing\": \"%s\", \"bytes\": %zu, \"iters\": %ld, "
          "\"median_us\": %.4f, \"p25_us\": %.4f, \"p75_us\": %.4f, \"min_us\": %.4f";
      for (int side = 1; side >= 0; --side) {
        const struct summary s = side ? own : served;
        fprintf(out, rows++ ? ",\n  " : "\n  ");
        fprintf(out, fields, op_names[op], side ? "mpi" : "cachecomm", side ? "default" : "preload",
                library, cold ? "cold" : "hot", per_call ? "per-call" : "back-to-back", bytes,
                scaled * pairs, s.median, s.p25, s.p75, s.min);
        if (!side)
          fprintf(out, ", \"ratio_median\": %.4f, \"ratio_p25\": %.4f, \"ratio_p75\": %.4f",
                  ratio.median, ratio.p25, ratio.p75);
        fprintf(out, "}");
      }
    }
  }
  if (out != NULL) {
    fprintf(out, "\n]}\n");
    fclose(out);
  }
  free(ratios);
  free(times[0]);
  free(times[1]);
  free(pages[0]);
  free(pages[1]);
  free(counts);
  free(displacements);
  MPI_Finalize();
  return 0;
}
