// Which MPI a build is for and which MPI a process runs on. The preload library serves calls only
// when the two agree: its handles, constants and struct layouts are those of the MPI it was
// compiled against, and another MPI's handles would be misread.
#pragma once

#include <string>

namespace cachecomm::detail::preload {

/// An MPI implementation and its version, e.g. {"Open MPI", "4.1.4"}.
struct mpi_identity {
  std::string implementation;
  std::string version;
  std::string library;  ///< the MPI library file (built: the one linked; running: the one resolved)

  [[nodiscard]] std::string name() const;  ///< "Open MPI 4.1.4"
};

/// The MPI this build was compiled and linked against (from mpi.h and the build's link line).
[[nodiscard]] mpi_identity built_mpi();

/// The MPI this process runs on: MPI_Get_library_version (callable before MPI_Init) and the library
/// that provides PMPI_Init. CACHECOMM_TEST_MPI_LIBRARY_VERSION replaces the version string, and the
/// library is then reported as faked (tests).
[[nodiscard]] mpi_identity running_mpi();

/// Parses the first line of an MPI_Get_library_version string.
[[nodiscard]] mpi_identity parse_library_version(const std::string& text);

/// Same implementation and major version (the ABI the handles and constants belong to); for a build
/// against the MPI-5 standard ABI: the calls reach a libmpi_abi.so, whichever MPI ships it.
[[nodiscard]] bool compatible(const mpi_identity& built, const mpi_identity& running);

/// True when this process runs on the MPI the build is for. Otherwise prints one line on stderr
/// (once per job: on the launcher's rank 0) naming both, and the preload must serve nothing.
[[nodiscard]] bool runs_on_built_mpi();

}  // namespace cachecomm::detail::preload
