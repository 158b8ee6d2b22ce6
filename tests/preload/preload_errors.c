/* Plain MPI program: errors under MPI_ERRORS_RETURN come back as error codes.
 *   (no argument)  invalid roots: the same error classes with and without the preload library.
 *   cachecomm-failure: run with the preload library and a setting that makes building cachecomm's
 *                  state fail; the failure must come back from MPI_Barrier as an MPI error class.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static const char* class_name(int code) {
  int error_class = MPI_SUCCESS;
  if (code == MPI_SUCCESS) return "MPI_SUCCESS";
  MPI_Error_class(code, &error_class);
  if (error_class == MPI_ERR_ROOT) return "MPI_ERR_ROOT";
  if (error_class == MPI_ERR_ARG) return "MPI_ERR_ARG";
  if (error_class == MPI_ERR_COUNT) return "MPI_ERR_COUNT";
  if (error_class == MPI_ERR_OTHER) return "MPI_ERR_OTHER";
  return "another error class";
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

  if (argc > 1 && strcmp(argv[1], "cachecomm-failure") == 0) {
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
