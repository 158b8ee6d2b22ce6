// What this machine offers the job, read once per process through hwloc.
#pragma once

#include <cstddef>
#include <string>

namespace cachecomm::detail {

struct machine_description {
  std::string host;                ///< host name
  std::string cpu_model;           ///< e.g. "Intel(R) Xeon(R) ..." (empty if hwloc does not know)
  int cores = 1;                   ///< physical cores the job may use
  int processing_units = 1;        ///< hardware threads the job may use
  std::string caches;              ///< data cache sizes, e.g. "L1d 32K, L2 512K, L3 32M" (hwloc)
  std::size_t l2_cache_bytes = 0;  ///< the first L2 cache's size (hwloc), 0 when unknown
};

/// Loaded on first use and cached for the life of the process.
[[nodiscard]] const machine_description& this_machine();

/// Core (hwloc logical index) this thread last ran on, or -1 when hwloc cannot tell.
[[nodiscard]] int current_core();

}  // namespace cachecomm::detail
