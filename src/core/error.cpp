#include "cachecomm/error.hpp"

#include <mpi.h>

#include <cstring>

namespace cachecomm {

system_error::system_error(const std::string& what_failed, int errno_value)
    : error(what_failed + ": " + std::strerror(errno_value)), m_errno(errno_value) {}

namespace {
std::string mpi_message(const std::string& call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    return call + " failed with MPI error code " + std::to_string(code);
  }
  return call + " failed: " + std::string(text, static_cast<std::size_t>(length));
}
}  // namespace

mpi_error::mpi_error(const std::string& call, int mpi_code)
    : error(mpi_message(call, mpi_code)), m_code(mpi_code) {}

}  // namespace cachecomm
