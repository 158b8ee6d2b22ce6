// MPI_Init, MPI_Init_thread, MPI_Finalize: the preload library's life follows MPI's.
#include <mpi.h>

#include "preload/nonblocking_requests.hpp"
#include "preload/runtime.hpp"

namespace preload = cachecomm::detail::preload;

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int code = PMPI_Init(argc, argv);
  if (code == MPI_SUCCESS) {
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    preload::start(provided);
  }
  return code;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int code = PMPI_Init_thread(argc, argv, required, provided);
  if (code == MPI_SUCCESS) preload::start(*provided);
  return code;
}

int MPI_Finalize(void) {
  // Operations whose requests the program freed complete before MPI goes away.
  if (preload::nonblocking_needs_attention()) preload::drain_nonblocking();
  preload::stop();
  return PMPI_Finalize();
}

}  // extern "C"
