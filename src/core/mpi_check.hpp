// Turns MPI return codes into cachecomm::mpi_error. Evaluates its argument once.
#pragma once

#include <mpi.h>

#include "cachecomm/error.hpp"

namespace cachecomm::detail {

inline void mpi_check(int code, const char* call) {
  if (code != MPI_SUCCESS) throw mpi_error(call, code);
}

}  // namespace cachecomm::detail

#define CACHECOMM_MPI(call) ::cachecomm::detail::mpi_check((call), #call)
