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
/// call). MPI's test runs after a pass that finished an operation, and otherwise only every few
/// passes: it turns MPI's whole progress engine, which costs more than a pass.
template <typename MpiTest>
void wait_with_progress(bool* blocked, MpiTest&& mpi_test) {
  constexpr unsigned mpi_test_every = 16;
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
