/* Plain MPI program: a rank blocked in a point-to-point call still completes the nonblocking
 * collectives it started (MPI's progress rule). Each round, every rank but the root starts more
 * broadcasts from the root than the preload's ring holds (CACHECOMM_PRELOAD_NONBLOCKING_SLOTS=4:
 * the last ones wait for a free slot) and then blocks in one call that the root answers only after
 * its own MPI_Waitall on the same broadcasts, which needs those waiting contributions. The root
 * starts late, so the readers have filled the ring first. Under the preload the program hangs
 * unless the blocking call drives the pending operations.
 *
 * Usage: preload_blocking_progress [elements per broadcast] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nonblocking_check.h"

enum { outstanding = 7, root = 0, tag = 5 };

static int size, elements;
/* A communicator of the same ranks whose barrier the preload serves (CACHECOMM_BARRIER forces
 * cachecomm's): its wait must drive the broadcasts pending on the world. */
static MPI_Comm elsewhere;
static int* broadcast[outstanding];

static int value(int round, int op, int i) {
  return round * 100000 + op * 1000 + i % 997;
}

static void start_broadcasts(int round, MPI_Request requests[outstanding]) {
  for (int op = 0; op < outstanding; ++op) {
    for (int i = 0; i < elements; ++i)
      broadcast[op][i] = world_rank == root ? value(round, op, i) : -1;
    MPI_Ibcast(broadcast[op], elements, MPI_INT, root, MPI_COMM_WORLD, &requests[op]);
  }
}

static void check_broadcasts(int round) {
  for (int op = 0; op < outstanding; ++op) {
    for (int i = 0; i < elements; ++i)
      CHECK(broadcast[op][i] == value(round, op, i), "round %d broadcast %d element %d: %d", round,
            op, i, broadcast[op][i]);
  }
}

/* The blocking calls a reader makes while its broadcasts are pending; the root's answer. */
enum call {
  recv,
  probe,
  mprobe,
  sendrecv,
  sendrecv_replace,
  ssend,
  send_large,
  rsend,
  barrier_elsewhere,
  recv_large_count, /* MPI_Recv_c and MPI_Send_c (MPI-4; MPI_Recv and MPI_Send below that) */
  calls
};
static const char* const call_names[calls] = {"MPI_Recv",
                                              "MPI_Probe",
                                              "MPI_Mprobe",
                                              "MPI_Sendrecv",
                                              "MPI_Sendrecv_replace",
                                              "MPI_Ssend",
                                              "MPI_Send (large)",
                                              "MPI_Rsend",
                                              "MPI_Barrier on another communicator",
                                              "MPI_Recv_c (MPI_Recv before MPI-4)"};
enum { large = 1 << 18 }; /* ints: 1 MiB, past every MPI's eager limit */

static void reader(enum call call, int round, int* message) {
  MPI_Request requests[outstanding];
  start_broadcasts(round, requests);
  MPI_Status status;
  int got = -1, count = 0;
  switch (call) {
    case recv:
      MPI_Recv(&got, 1, MPI_INT, root, tag, MPI_COMM_WORLD, &status);
      CHECK(got == round && status.MPI_SOURCE == root && status.MPI_TAG == tag, "recv %d", got);
      break;
    case probe:
      MPI_Probe(root, tag, MPI_COMM_WORLD, &status);
      MPI_Get_count(&status, MPI_INT, &count);
      CHECK(count == 1 && status.MPI_SOURCE == root, "probe count %d", count);
      MPI_Recv(&got, 1, MPI_INT, root, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(got == round, "recv after probe %d", got);
      break;
    case mprobe: {
      MPI_Message handle;
      MPI_Mprobe(root, tag, MPI_COMM_WORLD, &handle, &status);
      MPI_Mrecv(&got, 1, MPI_INT, &handle, &status);
      CHECK(got == round && status.MPI_TAG == tag, "mrecv %d", got);
      break;
    }
    case sendrecv: {
      const int mine = world_rank;
      MPI_Sendrecv(&mine, 1, MPI_INT, root, tag, &got, 1, MPI_INT, root, tag, MPI_COMM_WORLD,
                   &status);
      CHECK(got == round && status.MPI_SOURCE == root, "sendrecv %d", got);
      break;
    }
    case sendrecv_replace: {
      int pair[2] = {world_rank, -world_rank};
      MPI_Sendrecv_replace(pair, 2, MPI_INT, root, tag, root, tag, MPI_COMM_WORLD, &status);
      MPI_Get_count(&status, MPI_INT, &count);
      CHECK(pair[0] == round && pair[1] == -round && count == 2, "replace %d %d (count %d)",
            pair[0], pair[1], count);
      break;
    }
    case ssend: {
      const int mine = world_rank + round;
      MPI_Ssend(&mine, 1, MPI_INT, root, tag, MPI_COMM_WORLD);
      break;
    }
    case send_large:
      for (int i = 0; i < large; ++i) message[i] = world_rank + i;
      MPI_Send(message, large, MPI_INT, root, tag, MPI_COMM_WORLD);
      break;
    case rsend: {
      /* The root posted its receive before its go-ahead. */
      MPI_Recv(&got, 1, MPI_INT, root, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const int mine = world_rank * 3 + round;
      MPI_Rsend(&mine, 1, MPI_INT, root, tag, MPI_COMM_WORLD);
      break;
    }
    case barrier_elsewhere: MPI_Barrier(elsewhere); break;
    case recv_large_count:
#if MPI_VERSION >= 4
      MPI_Recv_c(&got, 1, MPI_INT, root, tag, MPI_COMM_WORLD, &status);
#else
      MPI_Recv(&got, 1, MPI_INT, root, tag, MPI_COMM_WORLD, &status);
#endif
      CHECK(got == round && status.MPI_SOURCE == root, "large-count recv %d", got);
      break;
    case calls: break;
  }
  MPI_Waitall(outstanding, requests, MPI_STATUSES_IGNORE);
  check_broadcasts(round);
}

static void answer(enum call call, int round, int* message) {
  MPI_Request posted[64];
  CHECK(size <= 64, "at most 64 ranks");
  if (call == rsend) {
    for (int peer = 1; peer < size; ++peer)
      MPI_Irecv(&message[peer], 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &posted[peer]);
  }
  sleep_ms(30); /* the readers start first and fill the ring */
  MPI_Request requests[outstanding];
  start_broadcasts(round, requests);
  MPI_Waitall(outstanding, requests, MPI_STATUSES_IGNORE);
  for (int peer = 1; peer < size; ++peer) {
    int got = -1;
    switch (call) {
      case recv:
      case probe:
      case mprobe: MPI_Send(&round, 1, MPI_INT, peer, tag, MPI_COMM_WORLD); break;
      case sendrecv:
        MPI_Sendrecv(&round, 1, MPI_INT, peer, tag, &got, 1, MPI_INT, peer, tag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        CHECK(got == peer, "sendrecv from %d: %d", peer, got);
        break;
      case sendrecv_replace: {
        int pair[2] = {round, -round};
        MPI_Sendrecv_replace(pair, 2, MPI_INT, peer, tag, peer, tag, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
        CHECK(pair[0] == peer && pair[1] == -peer, "replace from %d: %d %d", peer, pair[0],
              pair[1]);
        break;
      }
      case ssend:
        MPI_Recv(&got, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(got == peer + round, "ssend from %d: %d", peer, got);
        break;
      case send_large:
        MPI_Recv(message, large, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < large; ++i)
          CHECK(message[i] == peer + i, "large send from %d, element %d: %d", peer, i, message[i]);
        break;
      case rsend:
        MPI_Send(&round, 1, MPI_INT, peer, tag + 1, MPI_COMM_WORLD);
        MPI_Wait(&posted[peer], MPI_STATUS_IGNORE);
        CHECK(message[peer] == peer * 3 + round, "rsend from %d: %d", peer, message[peer]);
        break;
      case recv_large_count:
#if MPI_VERSION >= 4
        MPI_Send_c(&round, 1, MPI_INT, peer, tag, MPI_COMM_WORLD);
#else
        MPI_Send(&round, 1, MPI_INT, peer, tag, MPI_COMM_WORLD);
#endif
        break;
      case barrier_elsewhere:
      case calls: break;
    }
  }
  if (call == barrier_elsewhere) MPI_Barrier(elsewhere);
  check_broadcasts(round);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  elements = argc > 1 ? atoi(argv[1]) : 16;
  CHECK(elements > 0, "elements per broadcast: %s", argv[1]);
  for (int op = 0; op < outstanding; ++op) broadcast[op] = malloc((size_t)elements * sizeof(int));
  int* message = malloc((size_t)large * sizeof(int));
  MPI_Comm_dup(MPI_COMM_WORLD, &elsewhere);
  for (int warm = 0; warm < 4; ++warm) MPI_Barrier(elsewhere); /* past the preload's warm-up */
  for (int round = 0; round < 2 * calls; ++round) {
    const enum call call = (enum call)(round % calls);
    if (world_rank == root)
      answer(call, round, message);
    else
      reader(call, round, message);
    if (world_rank == root)
      printf("%s while %d broadcasts of %d ints pend: ok\n", call_names[call], outstanding,
             elements);
  }
  free(message);
  MPI_Comm_free(&elsewhere);
  for (int op = 0; op < outstanding; ++op) free(broadcast[op]);
  MPI_Finalize();
  return 0;
}
