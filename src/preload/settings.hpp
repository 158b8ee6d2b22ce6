// The preload library's settings (settings.cpp), read once when MPI is initialized.
#pragma once

#include <array>
#include <cstddef>

#include "cachecomm/config.hpp"
#include "preload/call_stats.hpp"

namespace cachecomm::detail::preload {

struct preload_settings {
  bool enabled = false;  ///< CACHECOMM_PRELOAD
  bool summary = false;  ///< CACHECOMM_PRELOAD_SUMMARY
  long long warmup = 3;  ///< CACHECOMM_PRELOAD_WARMUP
  /// CACHECOMM_PRELOAD_MPI_WARMUP: calls of each data collective per communicator passed to MPI
  /// before cachecomm serves that collective there; -1: mpi_warmup_for(the running MPI).
  long long mpi_warmup = -1;
  std::size_t nonblocking_bytes = 65536;  ///< CACHECOMM_PRELOAD_NONBLOCKING_BYTES
  /// Per call kind, its CACHECOMM_PRELOAD_<kind> switch (false for kinds that have none).
  std::array<bool, static_cast<std::size_t>(call_kind::count_)> serve{};
};

/// The default of CACHECOMM_PRELOAD_MPI_WARMUP: Intel MPI 2021 sets up its shared-memory
/// collectives over the first ~550 calls of an operation on a communicator (one call in four then
/// takes 10-20 us more, whatever the size); a program that leaves those calls to cachecomm meets
/// them later, when online selection times the MPI's call (it then loses buckets it wins warm), or
/// when the MPI's call was chosen. A plain program pays them at its first calls; the preloaded
/// program then pays them at the same calls, no more. Other MPIs: 0 (no such warm-up measured).
[[nodiscard]] long long mpi_warmup_for(bool intel_mpi);

/// Throws invalid_argument naming the variable, its value and what it accepts.
[[nodiscard]] preload_settings read_preload_settings(const config& settings);

}  // namespace cachecomm::detail::preload
