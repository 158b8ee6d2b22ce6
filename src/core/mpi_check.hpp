// The small MPI helpers every layer shares: return codes into cachecomm::mpi_error (the macro
// evaluates its argument once), the finalized check for destructors, cancelling a request, and the
// int count guard.
#pragma once

#include <mpi.h>

#include <climits>
#include <cstddef>

#include "cachecomm/error.hpp"

namespace cachecomm::detail {

inline void mpi_check(int code, const char* call) {
  if (code != MPI_SUCCESS) throw mpi_error(call, code);
}

/// True once MPI_Finalize has run: a destructor must not call MPI then.
[[nodiscard]] inline bool mpi_finalized() noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

/// Cancels a pending request and completes it (the request becomes MPI_REQUEST_NULL). True when
/// the cancel took effect; false when the operation had completed (a receive matched) first, so
/// that its message was delivered after all.
inline bool cancel_request(MPI_Request& request) noexcept {
  MPI_Cancel(&request);
  MPI_Status status{};
  MPI_Wait(&request, &status);
  int cancelled = 0;
  MPI_Test_cancelled(&status, &cancelled);
  return cancelled != 0;
}

/// `count` as MPI's int count. A larger count would be cut modulo 2^32 (or turn negative), so it
/// throws `Error(describe())` instead; `describe` runs only then, keeping the check off the hot
/// path's allocations.
template <typename Error, typename Describe>
[[nodiscard]] int mpi_int_count(std::size_t count, Describe&& describe) {
  if (count > static_cast<std::size_t>(INT_MAX)) [[unlikely]] {
    throw Error(describe());
  }
  return static_cast<int>(count);
}

}  // namespace cachecomm::detail

#define CACHECOMM_MPI(call) ::cachecomm::detail::mpi_check((call), #call)
