/* What the preload adds to a nonblocking collective it passes to MPI: one rank (where the
 * collective itself does next to nothing), a loop of start + MPI_Wait (and, last, start + MPI_Test
 * until done) of 128 KiB calls the preload does not serve (above its 64 KiB slot; Ibcast above
 * 16 KiB), best of 5 repetitions, nanoseconds per call. Run it plain and preloaded:
 *
 *   mpirun -np 1 cachecomm-passthrough-bench [CALLS]
 *   mpirun -np 1 env LD_PRELOAD=.../libcachecomm_mpi.so cachecomm-passthrough-bench [CALLS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { block_bytes = 128 * 1024, repetitions = 5 };

static void start(int which, float* buffer, MPI_Request* request) {
  const int floats = block_bytes / (int)sizeof(float);
  switch (which) {
    case 0:
    case 3: MPI_Ibcast(buffer, block_bytes, MPI_BYTE, 0, MPI_COMM_WORLD, request); break;
    case 1:
      MPI_Iallreduce(MPI_IN_PLACE, buffer, floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, request);
      break;
    default:
      MPI_Iallgather(MPI_IN_PLACE, 0, MPI_BYTE, buffer, block_bytes, MPI_BYTE, MPI_COMM_WORLD,
                     request);
      break;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int calls = argc > 1 ? atoi(argv[1]) : 100000;
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  float* buffer = calloc((size_t)block_bytes * (size_t)size, 1);
  if (calls <= 0 || buffer == NULL) {
    fprintf(stderr, "usage: cachecomm-passthrough-bench [CALLS > 0]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* The preload builds its communicator state in the first blocking collectives. */
  for (int i = 0; i < 5; ++i) MPI_Barrier(MPI_COMM_WORLD);
  const char* names[] = {"ibcast+wait", "iallreduce+wait", "iallgather+wait", "ibcast+test"};
  for (int which = 0; which < 4; ++which) {
    double best = 1e30;
    for (int repetition = 0; repetition < repetitions; ++repetition) {
      const double begin = MPI_Wtime();
      for (int i = 0; i < calls; ++i) {
        MPI_Request request = MPI_REQUEST_NULL;
        start(which, buffer, &request);
        if (which == 3) {
          int done = 0;
          while (!done) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        } else {
          MPI_Wait(&request, MPI_STATUS_IGNORE);
        }
      }
      const double per_call = (MPI_Wtime() - begin) / calls * 1e9;
      if (per_call < best) best = per_call;
    }
    printf("%-16s %7.1f ns per call (%d ranks, 128 KiB)\n", names[which], best, size);
  }
  free(buffer);
  MPI_Finalize();
  return 0;
}
