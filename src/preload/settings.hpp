// The preload library's settings (settings.cpp), read once when MPI is initialized.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "cachecomm/config.hpp"
#include "preload/call_stats.hpp"

namespace cachecomm::detail::preload {

struct preload_settings {
  bool enabled = false;  ///< CACHECOMM_PRELOAD
  bool summary = false;  ///< CACHECOMM_PRELOAD_SUMMARY
  long long warmup = 3;  ///< CACHECOMM_PRELOAD_WARMUP
  /// CACHECOMM_PRELOAD_EAGER_CHILDREN: communicators made from one parent whose state is built in
  /// the call that makes them (runtime.hpp, build_child_state).
  long long eager_children = 8;
  /// CACHECOMM_PRELOAD_MPI_WARMUP: calls of each data collective per communicator passed to MPI
  /// before cachecomm serves that collective there (see settings.cpp).
  long long mpi_warmup = 0;
  std::size_t nonblocking_bytes = 0;    ///< CACHECOMM_PRELOAD_NONBLOCKING_BYTES (0: automatic)
  std::uint32_t nonblocking_slots = 0;  ///< CACHECOMM_PRELOAD_NONBLOCKING_SLOTS (0: automatic)
  /// Per call kind, its CACHECOMM_PRELOAD_<kind> switch (false for kinds that have none).
  std::array<bool, static_cast<std::size_t>(call_kind::count_)> serve{};
};

/// Throws invalid_argument naming the variable, its value and what it accepts.
[[nodiscard]] preload_settings read_preload_settings(const config& settings);

}  // namespace cachecomm::detail::preload
