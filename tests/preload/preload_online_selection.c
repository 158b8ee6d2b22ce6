/* A plain MPI loop calling each collective many times at a few sizes, with random per-rank pauses
 * between calls: preloaded, online selection tries every candidate in the first calls of each size
 * (the system MPI's call among them, passed through as mpi-faster) and every result is checked,
 * during the trial and after. Prints only what plain MPI would print too. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { iterations = 30 };

static void pause_randomly(unsigned* seed) {
  const int micros = rand_r(seed) % 200;
  if (rand_r(seed) % 2 == 0) {
    struct timespec delay = {0, micros * 1000L};
    nanosleep(&delay, NULL);
  }
}

static long long value(int from, int i, int iteration) {
  return (long long)i * 3 + from * 1000 + iteration;
}

static int check(int ok, const char* what, int count, int iteration) {
  if (!ok) {
    fprintf(stderr, "wrong result: %s, %d elements, iteration %d\n", what, count, iteration);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return ok;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  unsigned seed = 17U + (unsigned)rank * 7919U;
  const int counts[] = {2, 1200, 40000};
  for (int c = 0; c < 3; ++c) {
    const int count = counts[c];
    long long* input = malloc(sizeof(long long) * (size_t)count);
    long long* output = malloc(sizeof(long long) * (size_t)count * (size_t)size);
    for (int iteration = 0; iteration < iterations; ++iteration) {
      for (int i = 0; i < count; ++i) input[i] = value(rank, i, iteration);
      const int root = iteration % size;

      pause_randomly(&seed);
      for (int i = 0; i < count; ++i) output[i] = rank == root ? value(root, i, iteration) : -1;
      MPI_Bcast(output, count, MPI_LONG_LONG, root, MPI_COMM_WORLD);
      for (int i = 0; i < count; ++i)
        check(output[i] == value(root, i, iteration), "MPI_Bcast", count, iteration);

      pause_randomly(&seed);
      MPI_Reduce(input, output, count, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD);
      if (rank == root) {
        for (int i = 0; i < count; ++i) {
          long long sum = 0;
          for (int from = 0; from < size; ++from) sum += value(from, i, iteration);
          check(output[i] == sum, "MPI_Reduce", count, iteration);
        }
      }

      pause_randomly(&seed);
      MPI_Allreduce(input, output, count, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      for (int i = 0; i < count; ++i) {
        long long sum = 0;
        for (int from = 0; from < size; ++from) sum += value(from, i, iteration);
        check(output[i] == sum, "MPI_Allreduce", count, iteration);
      }

      pause_randomly(&seed);
      MPI_Allgather(input, count, MPI_LONG_LONG, output, count, MPI_LONG_LONG, MPI_COMM_WORLD);
      for (int from = 0; from < size; ++from) {
        for (int i = 0; i < count; ++i)
          check(output[(size_t)from * (size_t)count + (size_t)i] == value(from, i, iteration),
                "MPI_Allgather", count, iteration);
      }
    }
    free(input);
    free(output);
    if (rank == 0)
      printf("%d elements: %d iterations of bcast, reduce, allreduce, allgather ok\n", count,
             iterations);
  }
  MPI_Finalize();
  return 0;
}
