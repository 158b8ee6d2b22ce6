// For each collective: per-call times of its first CALLS calls at SIZE bytes (fresh op), in blocks
// of 100: how many calls took over 3x the block's fastest.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void call(const char* op, char* s, char* r, int n, int np) {
  MPI_Comm w = MPI_COMM_WORLD;
  if (!strcmp(op, "bcast"))
    MPI_Bcast(s, n, MPI_CHAR, 0, w);
  else if (!strcmp(op, "reduce"))
    MPI_Reduce(s, r, n / 4, MPI_FLOAT, MPI_SUM, 0, w);
  else if (!strcmp(op, "allreduce"))
    MPI_Allreduce(s, r, n / 4, MPI_FLOAT, MPI_SUM, w);
  else if (!strcmp(op, "allgather"))
    MPI_Allgather(s, n, MPI_CHAR, r, n, MPI_CHAR, w);
  else if (!strcmp(op, "gather"))
    MPI_Gather(s, n, MPI_CHAR, r, n, MPI_CHAR, 0, w);
  else if (!strcmp(op, "scatter"))
    MPI_Scatter(s, n, MPI_CHAR, r, n, MPI_CHAR, 0, w);
  else if (!strcmp(op, "alltoall"))
    MPI_Alltoall(s, n, MPI_CHAR, r, n, MPI_CHAR, w);
  else if (!strcmp(op, "rsb"))
    MPI_Reduce_scatter_block(s, r, n / 4, MPI_FLOAT, MPI_SUM, w);
  else if (!strcmp(op, "barrier"))
    MPI_Barrier(w);
  else if (!strcmp(op, "scan"))
    MPI_Scan(s, r, n / 4, MPI_FLOAT, MPI_SUM, w);
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int n = atoi(argv[1]), calls = atoi(argv[2]);
  char *s = calloc((size_t)n * np, 1), *r = calloc((size_t)n * np, 1);
  double* t = malloc(sizeof(double) * calls);
  for (int a = 3; a < argc; a++) {
    MPI_Barrier(MPI_COMM_WORLD);
    char name[32];
    int pn = n, pc = calls;
    strcpy(name, argv[a]);
    char* colon = strchr(name, ':');
    if (colon) {
      *colon = 0;
      sscanf(colon + 1, "%d:%d", &pn, &pc);
    }
    if (colon) {
      double b = MPI_Wtime();
      for (int i = 0; i < pc; i++) call(name, s, r, pn, np);
      if (rank == 0)
        printf("%-10s %d calls of %d B: %.0f us\n", name, pc, pn, (MPI_Wtime() - b) * 1e6);
      continue;
    }
    for (int i = 0; i < calls; i++) {
      double b = MPI_Wtime();
      call(argv[a], s, r, n, np);
      t[i] = MPI_Wtime() - b;
    }
    if (rank == 0) {
      printf("%-10s", argv[a]);
      for (int b = 0; b < calls; b += 100) {
        double mn = 1, sum = 0;
        int slow = 0;
        for (int i = b; i < b + 100; i++) {
          if (t[i] < mn) mn = t[i];
          sum += t[i];
        }
        for (int i = b; i < b + 100; i++) slow += t[i] > 3 * mn + 2e-6;
        printf(" %2d/%.1f", slow, sum / 100 * 1e6);
      }
      printf("  (slow calls / mean us per 100)\n");
    }
  }
  MPI_Finalize();
}
