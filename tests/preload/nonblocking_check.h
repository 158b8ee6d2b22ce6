/* What the nonblocking preload tests share (preload_nonblocking.c, preload_nonblocking_blocks.c,
 * preload_nonblocking_only.c):
 * CHECK, which aborts the job naming the rank and line, and sleep_ms, the "computation" of a rank
 * between start and wait. Each program sets world_rank after MPI_Init. */
#ifndef CACHECOMM_TESTS_PRELOAD_NONBLOCKING_CHECK_H
#define CACHECOMM_TESTS_PRELOAD_NONBLOCKING_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <time.h>

static int world_rank;

#define CHECK(cond, ...)                                                           \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "rank %d: check failed at line %d: ", world_rank, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                                \
      fprintf(stderr, "\n");                                                       \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                \
    }                                                                              \
  } while (0)

static inline void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

#endif
