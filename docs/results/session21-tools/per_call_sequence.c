// Session 21: per-call times of one collective at one size, averaged over the ranks, printed as
// "call time |" pairs. Before the timed calls WARM=<n> calls of WARM_OP (allgather, barrier,
// allreduce, bcast) of WARM_BYTES; NOBARRIER=1 drops the barrier before each timed call; DUP=1
// runs the allgather on a duplicate of MPI_COMM_WORLD.
// Build: mpicc -O2 per_call_sequence.c -o seq; run: mpirun -n 2 ./seq BYTES CALLS [OP]
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t bytes = argc > 1 ? strtoul(argv[1], 0, 10) : 16384;
  int calls = argc > 2 ? atoi(argv[2]) : 150;
  const char* op = argc > 3 ? argv[3] : "allgather";
  char* in = malloc(bytes * size);
  char* out = malloc(bytes * size);
  memset(in, 1, bytes * size);
  memset(out, 0, bytes * size);
  double* t = malloc(sizeof(double) * calls);
  MPI_Comm cc = MPI_COMM_WORLD;
  if (getenv("DUP")) MPI_Comm_dup(MPI_COMM_WORLD, &cc);
  int warm = getenv("WARM") ? atoi(getenv("WARM")) : 0;
  size_t wbytes = getenv("WARM_BYTES") ? strtoul(getenv("WARM_BYTES"), 0, 10) : 8;
  const char* wop = getenv("WARM_OP") ? getenv("WARM_OP") : "allgather";
  for (int i = 0; i < warm; ++i) {
    if (!strcmp(wop, "barrier"))
      MPI_Barrier(MPI_COMM_WORLD);
    else if (!strcmp(wop, "allreduce"))
      MPI_Allreduce(in, out, wbytes / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else if (!strcmp(wop, "bcast"))
      MPI_Bcast(in, wbytes, MPI_CHAR, 0, MPI_COMM_WORLD);
    else
      MPI_Allgather(in, wbytes, MPI_CHAR, out, wbytes, MPI_CHAR, MPI_COMM_WORLD);
  }
  for (int i = 0; i < calls; ++i) {
    if (!getenv("NOBARRIER")) MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (!strcmp(op, "allgather"))
      MPI_Allgather(in, bytes, MPI_CHAR, out, bytes, MPI_CHAR, cc);
    else if (!strcmp(op, "allreduce"))
      MPI_Allreduce(in, out, bytes / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else if (!strcmp(op, "reduce"))
      MPI_Reduce(in, out, bytes / 4, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    else if (!strcmp(op, "bcast"))
      MPI_Bcast(in, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
    t[i] = (MPI_Wtime() - t0) * 1e6;
  }
  double* all = malloc(sizeof(double) * calls * size);
  MPI_Gather(t, calls, MPI_DOUBLE, all, calls, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int i = 0; i < calls; ++i) {
      double m = 0;
      for (int r = 0; r < size; ++r) m += all[r * calls + i];
      printf("%d %.2f%s", i, m / size, (i % 10 == 9) ? "\n" : " | ");
    }
    printf("\n");
  }
  MPI_Finalize();
  return 0;
}
