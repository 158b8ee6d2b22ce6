// MPI's completion calls, which drive the nonblocking collectives the preload serves
// (nonblocking_requests.hpp). While none is pending they go straight to MPI. Otherwise each test
// first advances every pending operation, and each wait becomes a loop of that and MPI's own test
// (a blocking MPI_Wait on a request of MPI's could otherwise hold up an operation whose peers need
// this rank's data), backing off per the wait policy. MPI's test runs after a pass that finished
// an operation, and otherwise only every few passes: it turns MPI's whole progress engine, which
// costs more than a pass, and while one of cachecomm's operations in the array is unfinished it
// cannot report the array complete.
#include <mpi.h>

#include "preload/nonblocking_requests.hpp"
#include "preload/progress_wait.hpp"

namespace preload = cachecomm::detail::preload;

using preload::drives_operations;
using preload::wait_with_progress;

extern "C" {

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (drives_operations()) preload::progress_nonblocking();
  return PMPI_Test(request, flag, status);
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (drives_operations()) preload::progress_nonblocking();
  return PMPI_Testall(count, requests, flag, statuses);
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (drives_operations()) preload::progress_nonblocking();
  return PMPI_Testany(count, requests, index, flag, status);
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (drives_operations()) preload::progress_nonblocking();
  return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (drives_operations()) preload::progress_nonblocking();
  return PMPI_Request_get_status(request, flag, status);
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!drives_operations()) return PMPI_Wait(request, status);
  if (preload::is_unfinished_served_request(*request)) {
    // One of cachecomm's: passes until it finishes (MPI's progress now and then, for MPI's own
    // traffic peers may be waiting on), then MPI's wait returns at once.
    const MPI_Request served = *request;
    for (unsigned round = 0;; ++round) {
      preload::progress_nonblocking();
      if (!preload::is_unfinished_served_request(served)) break;
      if (round % 64 == 63) {
        int flag = 0;
        PMPI_Request_get_status(served, &flag, MPI_STATUS_IGNORE);
      }
      preload::back_off(round);
    }
    return PMPI_Wait(request, status);
  }
  int code = MPI_SUCCESS;
  bool blocked = false;
  wait_with_progress(&blocked, [&] {
    int flag = 0;
    code = PMPI_Test(request, &flag, status);
    return code != MPI_SUCCESS || flag != 0;
  });
  return blocked ? PMPI_Wait(request, status) : code;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!drives_operations()) return PMPI_Waitall(count, requests, statuses);
  int code = MPI_SUCCESS;
  bool blocked = false;
  wait_with_progress(&blocked, [&] {
    int flag = 0;
    code = PMPI_Testall(count, requests, &flag, statuses);
    return code != MPI_SUCCESS || flag != 0;
  });
  return blocked ? PMPI_Waitall(count, requests, statuses) : code;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!drives_operations()) return PMPI_Waitany(count, requests, index, status);
  int code = MPI_SUCCESS;
  bool blocked = false;
  wait_with_progress(&blocked, [&] {
    int flag = 0;
    code = PMPI_Testany(count, requests, index, &flag, status);
    return code != MPI_SUCCESS || flag != 0;
  });
  return blocked ? PMPI_Waitany(count, requests, index, status) : code;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (!drives_operations()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  int code = MPI_SUCCESS;
  bool blocked = false;
  wait_with_progress(&blocked, [&] {
    code = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    // MPI_UNDEFINED: no active request, which ends MPI_Waitsome as well.
    return code != MPI_SUCCESS || *outcount != 0;
  });
  return blocked ? PMPI_Waitsome(incount, requests, outcount, indices, statuses) : code;
}

// A nonblocking collective cannot be cancelled (MPI: erroneous). The operation goes on; the program
// must still complete its request.
int MPI_Cancel(MPI_Request* request) {
  if (request == nullptr || preload::inside_cachecomm() || !preload::is_served_request(*request))
    return PMPI_Cancel(request);
  return preload::refuse_cancel(*request);
}

}  // extern "C"
