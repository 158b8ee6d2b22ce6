/* Plain MPI program: errors under MPI_ERRORS_RETURN come back as error codes.
 *   (no argument)  invalid roots: the same error classes with and without the preload library.
 *   cachecomm-failure: run with the preload library and a setting that makes building cachecomm's
 *                  state fail; the failure must come back from MPI_Barrier as an MPI error class.
 *   mismatch:      (preloaded only: an erroneous program, whose outcome under MPI differs by
 *                  implementation) ranks pass different counts, operations or types to one call;
 *                  the ranks that read the others' data must fail at once with the matching class.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* class_name(int code) {
  int error_class = MPI_SUCCESS;
  if (code == MPI_SUCCESS) return "MPI_SUCCESS";
  MPI_Error_class(code, &error_class);
  if (error_class == MPI_ERR_ROOT) return "MPI_ERR_ROOT";
  if (error_class == MPI_ERR_ARG) return "MPI_ERR_ARG";
  if (error_class == MPI_ERR_COUNT) return "MPI_ERR_COUNT";
  if (error_class == MPI_ERR_OTHER) return "MPI_ERR_OTHER";
  if (error_class == MPI_ERR_TRUNCATE) return "MPI_ERR_TRUNCATE";
  if (error_class == MPI_ERR_OP) return "MPI_ERR_OP";
  if (error_class == MPI_ERR_TYPE) return "MPI_ERR_TYPE";
  return "another error class";
}

/* A fresh communicator past the warm-up, returning errors. */
static MPI_Comm warm_comm(void) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  for (int i = 0; i < 4; ++i) MPI_Barrier(comm);
  return comm;
}

/* Prints "<label>: <class of rank 0>, others <class>" when every other rank got the same class
 * (else each rank's class), and whether it took less than 10 s (a wait for the timeout does not).
 */
static void verdict(const char* label, int code, double started, int rank, int size) {
  int error_class = MPI_SUCCESS;
  if (code != MPI_SUCCESS) MPI_Error_class(code, &error_class);
  int* classes = malloc(sizeof(int) * (size_t)size);
  MPI_Gather(&error_class, 1, MPI_INT, classes, 1, MPI_INT, 0, MPI_COMM_WORLD);
  double elapsed = MPI_Wtime() - started, slowest = 0;
  MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    int same = 1;
    for (int r = 2; r < size; ++r) same = same && classes[r] == classes[1];
    printf("%s: rank 0 %s", label, class_name(classes[0]));
    if (size > 1 && same) printf(", others %s", class_name(classes[1]));
    for (int r = 1; r < size && !same; ++r) printf(", rank %d %s", r, class_name(classes[r]));
    printf(" (%s)\n", slowest < 10.0 ? "at once" : "slow");
  }
  free(classes);
}

static void mismatches(int rank, int size) {
  int data[64];
  for (int i = 0; i < 64; ++i) data[i] = rank + i;
  int out[64];
  /* Broadcast: the root sends 8 ints, the others expect 4. */
  MPI_Comm comm = warm_comm();
  double started = MPI_Wtime();
  int code = MPI_Bcast(data, rank == 0 ? 8 : 4, MPI_INT, 0, comm);
  verdict("bcast count", code, started, rank, size);
  MPI_Comm_free(&comm);
  /* Allreduce: rank 0 passes 4 ints, the others 8. */
  comm = warm_comm();
  started = MPI_Wtime();
  code = MPI_Allreduce(data, out, rank == 0 ? 4 : 8, MPI_INT, MPI_SUM, comm);
  verdict("allreduce count", code, started, rank, size);
  MPI_Comm_free(&comm);
  /* Allreduce: rank 0 sums, the others take the maximum. */
  comm = warm_comm();
  started = MPI_Wtime();
  code = MPI_Allreduce(data, out, 4, MPI_INT, rank == 0 ? MPI_SUM : MPI_MAX, comm);
  verdict("allreduce op", code, started, rank, size);
  MPI_Comm_free(&comm);
  /* Allreduce: rank 0 reduces ints, the others floats. */
  comm = warm_comm();
  started = MPI_Wtime();
  code = MPI_Allreduce(data, out, 4, rank == 0 ? MPI_INT : MPI_FLOAT, MPI_SUM, comm);
  verdict("allreduce type", code, started, rank, size);
  MPI_Comm_free(&comm);
  /* Allgather of large blocks (through the data region): rank 0 sends 8000 bytes, the others 16000.
   */
  comm = warm_comm();
  char* block = calloc(16000, 1);
  char* all = calloc(16000 * (size_t)size, 1);
  started = MPI_Wtime();
  code = MPI_Allgather(block, rank == 0 ? 8000 : 16000, MPI_BYTE, all, rank == 0 ? 8000 : 16000,
                       MPI_BYTE, comm);
  verdict("allgather count", code, started, rank, size);
  free(block);
  free(all);
  MPI_Comm_free(&comm);
  /* A correct call afterwards still works. */
  comm = warm_comm();
  int one = 1, total = 0;
  code = MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, comm);
  if (rank == 0) printf("afterwards: %s, sum %d\n", class_name(code), total);
  MPI_Comm_free(&comm);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

  if (argc > 1 && strcmp(argv[1], "mismatch") == 0) {
    mismatches(rank, size);
  } else if (argc > 1 && strcmp(argv[1], "cachecomm-failure") == 0) {
    /* The first calls pass through (warm-up); the call that builds the state fails; the
     * communicator then passes through and keeps working. */
    int failures = 0, last = MPI_SUCCESS;
    for (int round = 0; round < 8; ++round) {
      int code = MPI_Barrier(comm);
      if (code != MPI_SUCCESS) {
        ++failures;
        last = code;
      }
    }
    if (rank == 0) printf("barrier failures: %d, error class %s\n", failures, class_name(last));
  } else {
    for (int round = 0; round < 6; ++round) {
      int value = 5;
      int code = MPI_Bcast(&value, 1, MPI_INT, size + 3, comm);
      int sum = 0;
      int reduce_code = MPI_Reduce(&value, &sum, 1, MPI_INT, MPI_SUM, -7, comm);
      int good_code = MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, comm);
      int barrier_code = MPI_Barrier(comm);
      if (rank == 0) {
        printf(
            "round %d: bcast root %d -> %s; reduce root -7 -> %s; allreduce -> %s (%d); barrier -> "
            "%s\n",
            round, size + 3, class_name(code), class_name(reduce_code), class_name(good_code), sum,
            class_name(barrier_code));
      }
    }
  }
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
