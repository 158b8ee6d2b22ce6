/* Nonblocking collectives that ranks start on either side of a blocking collective: in each round
 * one rank (the "early" one) starts MPI_Iallreduce (MPI_BAND) and tests it before a barrier, the
 * others start theirs after the barrier; everyone waits after. The system MPI lets the two pass
 * each other, and mpi4py's fallback Comm.Iagree (Open MPI 4 has no MPIX_Comm_iagree) relies on it.
 * The preload library once hung here: it built its state (a communicator duplicated from the
 * program's) inside a barrier while the early rank's Iallreduce was pending in MPI, and later
 * waited in the barrier for that Iallreduce to finish. The rounds run on a fresh duplicate (so the
 * state and the nonblocking area are built in the middle of the crossing) and then again on a
 * communicator whose state already exists. Rank 0 prints every rank's results. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { fields = 4 };

/* Returns the number of wrong results on this rank; fills `seen` (rounds x fields). */
static int crossed_rounds(MPI_Comm comm, int rounds, int* seen) {
  int rank = 0, size = 0, wrong = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int round = 0; round < rounds; ++round) {
    const int early = round % size;
    /* Every rank's bits: 0b1011 from the early rank, 0b1101 from the others (AND: 0b1001 with
     * more than one rank), plus a bit only this round sets on every rank. */
    const int bits = (rank == early ? 0xB : 0xD) | (1 << (4 + round % 8));
    int result = -1, done_early = -1, untouched = 1;
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Barrier(comm);
    if (rank == early) {
      MPI_Iallreduce(&bits, &result, 1, MPI_INT, MPI_BAND, comm, &request);
      MPI_Test(&request, &done_early, MPI_STATUS_IGNORE);
      MPI_Barrier(comm);
    } else {
      MPI_Barrier(comm);
      untouched = result == -1;
      MPI_Iallreduce(&bits, &result, 1, MPI_INT, MPI_BAND, comm, &request);
    }
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    const int expected = (size > 1 ? 0x9 : 0xB) | (1 << (4 + round % 8));
    if (result != expected || !untouched) ++wrong;
    /* Done before the others started: impossible with more than one rank. */
    const int finished_alone = size > 1 && rank == early && done_early != 0;
    seen[round * fields + 0] = result;
    seen[round * fields + 1] = expected;
    seen[round * fields + 2] = untouched;
    seen[round * fields + 3] = finished_alone;
    wrong += finished_alone;
  }
  return wrong;
}

static void report(const char* label, MPI_Comm comm, int rounds, const int* seen, int wrong) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int* all = rank == 0 ? malloc(sizeof(int) * (size_t)(size * rounds * fields)) : NULL;
  MPI_Gather(seen, rounds * fields, MPI_INT, all, rounds * fields, MPI_INT, 0, MPI_COMM_WORLD);
  int total_wrong = 0;
  MPI_Reduce(&wrong, &total_wrong, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      for (int round = 0; round < rounds; ++round) {
        const int* f = all + (r * rounds + round) * fields;
        printf(
            "%s rank %d round %d: result %#x expected %#x untouched-before-start %d "
            "finished-alone %d\n",
            label, r, round, f[0], f[1], f[2], f[3]);
      }
    }
    printf("%s: %s (%d wrong)\n", label, total_wrong == 0 ? "ok" : "WRONG", total_wrong);
    free(all);
  }
  (void)comm;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = 4 * size;
  int* seen = calloc((size_t)(rounds * fields), sizeof(int));
  int failures = 0;

  /* A fresh communicator: the state is built during the rounds (after the warm-up barriers; the
   * test runs with CACHECOMM_PRELOAD_EAGER_CHILDREN=0, as for a parent's later children). */
  MPI_Comm fresh;
  MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
  int wrong = crossed_rounds(fresh, rounds, seen);
  report("fresh", fresh, rounds, seen, wrong);
  failures += wrong;
  /* The same communicator again: state and nonblocking area exist from the start. */
  wrong = crossed_rounds(fresh, rounds, seen);
  report("built", fresh, rounds, seen, wrong);
  failures += wrong;
  MPI_Comm_free(&fresh);

  free(seen);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
