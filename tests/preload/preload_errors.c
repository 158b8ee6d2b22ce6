/* Plain MPI program: errors under MPI_ERRORS_RETURN come back as error codes.
 *   (no argument)  invalid roots: the same error classes with and without the preload library.
 *   cachecomm-failure: run with the preload library and a setting that makes building cachecomm's
 *                  state fail; the failure must come back from MPI_Barrier as an MPI error class.
 *   mismatch:      (preloaded only: an erroneous program, whose outcome under MPI differs by
 *                  implementation) ranks pass different counts, operations or types to one call;
 *                  the ranks that read the others' data must fail at once with the matching class,
 *                  also when their sizes lie on either side of a threshold of cachecomm's choice
 *                  (src/coll/selection.hpp) and send them down different paths.
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

/* A call that fails "at once" took less than this on its slowest rank; a wait for
 * CACHECOMM_TIMEOUT (set higher by the test) does not. Generous for oversubscribed, loaded runs. */
#define AT_ONCE_SECONDS 3.0

/* Prints "<label>: <class of rank 0>, others <class>" when every other rank got the same class
 * (else each rank's class), and whether it took less than AT_ONCE_SECONDS (a wait for the timeout
 * does not). */
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
    printf(" (%s)\n", slowest < AT_ONCE_SECONDS ? "at once" : "slow");
  }
  free(classes);
}

enum { READERS_FAIL, ROOT_FAILS, ALL_FAIL };

/* For mismatches across paths: prints "<label>: <class> (at once)" when every rank that must
 * notice the mismatch got `expected` and the others got it or MPI_SUCCESS (a broadcast root that
 * posted its data and left, a reduce's contributor), within AT_ONCE_SECONDS; else each rank's
 * class and the time. Rank 0 is the root. */
static void path_verdict(const char* label, int code, double started, int expected, int who,
                         int rank, int size) {
  int error_class = MPI_SUCCESS;
  if (code != MPI_SUCCESS) MPI_Error_class(code, &error_class);
  int* classes = malloc(sizeof(int) * (size_t)size);
  MPI_Gather(&error_class, 1, MPI_INT, classes, 1, MPI_INT, 0, MPI_COMM_WORLD);
  double elapsed = MPI_Wtime() - started, slowest = 0;
  MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    int good = 1;
    for (int r = 0; r < size; ++r) {
      const int must = who == ALL_FAIL || (who == ROOT_FAILS ? r == 0 : r != 0);
      good = good && (classes[r] == expected || (!must && classes[r] == MPI_SUCCESS));
    }
    if (good) {
      printf("%s: %s (%s)\n", label, class_name(expected),
             slowest < AT_ONCE_SECONDS ? "at once" : "slow");
    } else {
      printf("%s: wrong classes:", label);
      for (int r = 0; r < size; ++r) printf(" rank %d %s", r, class_name(classes[r]));
      printf("\n");
    }
    printf("  (%s: slowest rank %.3f s)\n", label, slowest);
  }
  free(classes);
}

/* Root 0 broadcasts `root_bytes`, the others expect `other_bytes`. */
static void bcast_across(const char* label, int root_bytes, int other_bytes, int rank, int size) {
  MPI_Comm comm = warm_comm();
  char* buffer = calloc((size_t)(root_bytes > other_bytes ? root_bytes : other_bytes), 1);
  double started = MPI_Wtime();
  int code = MPI_Bcast(buffer, rank == 0 ? root_bytes : other_bytes, MPI_BYTE, 0, comm);
  path_verdict(label, code, started, MPI_ERR_TRUNCATE, READERS_FAIL, rank, size);
  free(buffer);
  MPI_Comm_free(&comm);
}

/* Rank 0 reduces `first_count` elements of `first_type`, the others `other_count` of `other_type`
 * (rooted at 0 when `rooted`). */
static void reduce_across(const char* label, int rooted, int first_count, MPI_Datatype first_type,
                          int other_count, MPI_Datatype other_type, int expected, int rank,
                          int size) {
  MPI_Comm comm = warm_comm();
  const int most = first_count > other_count ? first_count : other_count;
  double* in = calloc((size_t)most, sizeof(double));
  double* out = calloc((size_t)most, sizeof(double));
  const int count = rank == 0 ? first_count : other_count;
  MPI_Datatype type = rank == 0 ? first_type : other_type;
  double started = MPI_Wtime();
  int code = rooted ? MPI_Reduce(in, out, count, type, MPI_SUM, 0, comm)
                    : MPI_Allreduce(in, out, count, type, MPI_SUM, comm);
  path_verdict(label, code, started, expected, rooted ? ROOT_FAILS : ALL_FAIL, rank, size);
  free(in);
  free(out);
  MPI_Comm_free(&comm);
}

/* Rank 0 gathers blocks of `first_bytes`, the others of `other_bytes`. */
static void allgather_across(const char* label, int first_bytes, int other_bytes, int rank,
                             int size) {
  MPI_Comm comm = warm_comm();
  const int most = first_bytes > other_bytes ? first_bytes : other_bytes;
  char* block = calloc((size_t)most, 1);
  char* all = calloc((size_t)most * (size_t)size, 1);
  const int bytes = rank == 0 ? first_bytes : other_bytes;
  double started = MPI_Wtime();
  int code = MPI_Allgather(block, bytes, MPI_BYTE, all, bytes, MPI_BYTE, comm);
  path_verdict(label, code, started, MPI_ERR_TRUNCATE, ALL_FAIL, rank, size);
  free(block);
  free(all);
  MPI_Comm_free(&comm);
}

/* Sizes on either side of each threshold of src/coll/selection.hpp (detail::thresholds and the
 * slot sizes of coll_engine.hpp), each way round. Which paths a size takes also depends on the
 * ranks per node and oversubscription: run at 2, 3 and 4 ranks, every boundary is crossed in some
 * run (single copy and the system MPI's allgather at 2 ranks on their own cores). */
static void mismatches_across_paths(int rank, int size) {
  /* 240 bytes: small slots / 4 KiB slots. 4080: slots / the data region (and several slots). */
  bcast_across("bcast 200/280 bytes", 200, 280, rank, size);
  bcast_across("bcast 280/200 bytes", 280, 200, rank, size);
  bcast_across("bcast 4000/4200 bytes", 4000, 4200, rank, size);
  bcast_across("bcast 4200/4000 bytes", 4200, 4000, rank, size);
  bcast_across("bcast 8000/4000 bytes", 8000, 4000, rank, size);
  /* 128 KiB: double buffer / single copy. */
  bcast_across("bcast 120/136 KiB", 120 << 10, 136 << 10, rank, size);
  bcast_across("bcast 136/120 KiB", 136 << 10, 120 << 10, rank, size);
  /* Reductions: 240 and 4080 bytes as above; 128 KiB for an oversubscribed rooted reduce. */
  reduce_across("allreduce 60/70 ints", 0, 60, MPI_INT, 70, MPI_INT, MPI_ERR_TRUNCATE, rank, size);
  reduce_across("allreduce 1020/1030 ints", 0, 1020, MPI_INT, 1030, MPI_INT, MPI_ERR_TRUNCATE, rank,
                size);
  reduce_across("allreduce 1030/1020 ints", 0, 1030, MPI_INT, 1020, MPI_INT, MPI_ERR_TRUNCATE, rank,
                size);
  reduce_across("allreduce 1020 ints/1020 doubles", 0, 1020, MPI_INT, 1020, MPI_DOUBLE,
                MPI_ERR_TYPE, rank, size);
  reduce_across("reduce 32000/33000 ints", 1, 32000, MPI_INT, 33000, MPI_INT, MPI_ERR_TRUNCATE,
                rank, size);
  reduce_across("reduce 33000/32000 ints", 1, 33000, MPI_INT, 32000, MPI_INT, MPI_ERR_TRUNCATE,
                rank, size);
  /* Allgather blocks: 240 and 4080 bytes; 64 KiB central / single copy; 1 MiB single copy / the
   * system MPI's allgather. */
  allgather_across("allgather 200/280 bytes", 200, 280, rank, size);
  allgather_across("allgather 4000/4200 bytes", 4000, 4200, rank, size);
  allgather_across("allgather 60/72 KiB", 60 << 10, 72 << 10, rank, size);
  allgather_across("allgather 72/60 KiB", 72 << 10, 60 << 10, rank, size);
  allgather_across("allgather 1000/1100 KiB", 1000 << 10, 1100 << 10, rank, size);
  allgather_across("allgather 1100/1000 KiB", 1100 << 10, 1000 << 10, rank, size);
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
  mismatches_across_paths(rank, size);
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
