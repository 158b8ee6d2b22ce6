// Waiting inside MPI while the preload has nonblocking collectives pending: MPI's blocking calls
// (a wait on MPI's own request, a blocking send, receive or probe) become loops of a progress pass
// and MPI's nonblocking test, so a rank blocked in one still contributes and finishes the
// operations its peers wait for (MPI's progress rule: an operation started on a rank blocked in MPI
// completes). Used by intercept_completion.cpp and intercept_point_to_point.cpp.
#pragma once

#include "preload/nonblocking_requests.hpp"
#include "preload/runtime.hpp"

namespace cachecomm::detail::preload {

/// Whether this MPI call must drive the pending operations: some are pending, and the call comes
/// from the program, not from inside cachecomm.
[[nodiscard]] inline bool drives_operations() {
  return nonblocking_pending() && !inside_cachecomm();
}

/// Runs progress passes until `mpi_test()` (MPI's own nonblocking test) says done, or until
/// nothing of cachecomm's is pending (`*blocked` set: the caller hands over to MPI's blocking
/// call). MPI's test runs after a pass that finished an operation, and otherwise every
/// `mpi_test_every` passes: the completion calls test an array, whose test turns MPI's whole
/// progress engine and costs more than a pass (16); a point-to-point call waits for one message,
/// whose test is cheap and whose latency is the point (1: an 8-byte MPI_Sendrecv with a
/// collective pending took 1.06 us against MPI's 0.26 testing every 16th pass).
template <unsigned mpi_test_every = 16, typename MpiTest>
void wait_with_progress(bool* blocked, MpiTest&& mpi_test) {
  for (unsigned round = 0;; ++round) {
    if (!nonblocking_pending()) {
      *blocked = true;
      return;
    }
    const int finished = progress_nonblocking();
    if ((finished > 0 || round % mpi_test_every == 0) && mpi_test()) return;
    back_off(round);
  }
}

}  // namespace cachecomm::detail::preload
