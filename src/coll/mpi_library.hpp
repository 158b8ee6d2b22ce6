// Which MPI implementation the process runs on, for the built-in rules that hand a call to the
// system MPI where that implementation's own collective was measured faster (selection.hpp).
#pragma once

#include <cstdint>
#include <string_view>

namespace cachecomm::detail {

enum class mpi_library_family : std::uint8_t { unknown, open_mpi, mpich, intel_mpi };

/// The family named by the first line of an MPI_Get_library_version string ("Intel(R) MPI Library
/// 2021.19 ...", "Open MPI v4.1.4, ...", "MPICH Version: 5.0.2"); unknown for anything else.
[[nodiscard]] mpi_library_family classify_mpi_library(std::string_view version_text);

/// The family of the MPI this process runs on (MPI_Get_library_version, asked once).
[[nodiscard]] mpi_library_family running_mpi_family();

/// "Open MPI", "MPICH", "Intel MPI", "unknown MPI".
[[nodiscard]] std::string_view to_string(mpi_library_family family);

/// The text a family's version string names it with; its version follows ("Open MPI v" 4.1.4).
/// Empty for unknown.
[[nodiscard]] std::string_view version_marker(mpi_library_family family);

}  // namespace cachecomm::detail
