#include "coll/mpi_library.hpp"

#include <mpi.h>

#include <string>

namespace cachecomm::detail {

mpi_library_family classify_mpi_library(std::string_view version_text) {
  const std::string_view first_line = version_text.substr(0, version_text.find('\n'));
  // Intel MPI derives from MPICH and may name it later on the line: test Intel first.
  for (const auto family :
       {mpi_library_family::intel_mpi, mpi_library_family::open_mpi, mpi_library_family::mpich}) {
    if (first_line.find(version_marker(family)) != std::string_view::npos) return family;
  }
  return mpi_library_family::unknown;
}

mpi_library_family running_mpi_family() {
  static const mpi_library_family family = [] {
    // Longer than any MPI's MPI_MAX_LIBRARY_VERSION_STRING (Open MPI 256, MPICH and Intel 8192).
    std::string text(1 << 16, '\0');
    int length = 0;
    if (MPI_Get_library_version(text.data(), &length) != MPI_SUCCESS)
      return mpi_library_family::unknown;
    text.resize(static_cast<std::size_t>(length));
    return classify_mpi_library(text);
  }();
  return family;
}

std::string_view to_string(mpi_library_family family) {
  switch (family) {
    case mpi_library_family::open_mpi: return "Open MPI";
    case mpi_library_family::mpich: return "MPICH";
    case mpi_library_family::intel_mpi: return "Intel MPI";
    case mpi_library_family::unknown: break;
  }
  return "unknown MPI";
}

std::string_view version_marker(mpi_library_family family) {
  switch (family) {
    case mpi_library_family::open_mpi: return "Open MPI v";
    case mpi_library_family::mpich: return "MPICH Version";
    case mpi_library_family::intel_mpi: return "Intel(R) MPI Library";
    case mpi_library_family::unknown: break;
  }
  return {};
}

}  // namespace cachecomm::detail
