// The data collectives' settings, each declared once with its type and range (coll_settings.cpp)
// and read once per engine into this struct.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cachecomm/collectives.hpp"
#include "cachecomm/config.hpp"
#include "coll/online_selection.hpp"

namespace cachecomm::detail {

/// CACHECOMM_STREAMING_STORES.
enum class streaming_choice { automatic = 1, off, on, adaptive };
/// CACHECOMM_ALLGATHER_STAGING: how the stage-or-pull allgather moves each rank's block.
enum class staging_mode { automatic = 1, stage, pull, alternate };

struct coll_settings {
  std::size_t region_bytes = 0;  ///< CACHECOMM_COLL_REGION: each half of the data region
  std::size_t chunk_bytes = 0;   ///< CACHECOMM_COLL_CHUNK
  std::uint32_t slot_ring = 0;   ///< CACHECOMM_COLL_SLOTS (0: by oversubscription)
  bool check = false;            ///< CACHECOMM_CHECK
  streaming_choice streaming = streaming_choice::automatic;
  staging_mode allgather_staging = staging_mode::automatic;        ///< CACHECOMM_ALLGATHER_STAGING
  broadcast_algorithm broadcast = broadcast_algorithm::automatic;  ///< CACHECOMM_BCAST
  reduce_algorithm reduce = reduce_algorithm::automatic;           ///< CACHECOMM_REDUCE
  reduce_algorithm allreduce = reduce_algorithm::automatic;        ///< CACHECOMM_ALLREDUCE
  allgather_algorithm allgather = allgather_algorithm::automatic;  ///< CACHECOMM_ALLGATHER
  gather_algorithm gather = gather_algorithm::automatic;           ///< CACHECOMM_GATHER
  scatter_algorithm scatter = scatter_algorithm::automatic;        ///< CACHECOMM_SCATTER
  alltoall_algorithm alltoall = alltoall_algorithm::automatic;     ///< CACHECOMM_ALLTOALL
  online_mode online_selection = online_mode::automatic;           ///< CACHECOMM_ONLINE_SELECTION
  bool online_recheck = true;                                      ///< CACHECOMM_ONLINE_RECHECK
  online_metric selection_metric = online_metric::slowest;         ///< CACHECOMM_ONLINE_METRIC
  reduce_scatter_algorithm reduce_scatter =
      reduce_scatter_algorithm::automatic;  ///< CACHECOMM_REDUCE_SCATTER (both)
  allgatherv_algorithm allgatherv = allgatherv_algorithm::automatic;  ///< CACHECOMM_ALLGATHERV
  gatherv_algorithm gatherv = gatherv_algorithm::automatic;           ///< CACHECOMM_GATHERV
  scatterv_algorithm scatterv = scatterv_algorithm::automatic;        ///< CACHECOMM_SCATTERV
  alltoallv_algorithm alltoallv = alltoallv_algorithm::automatic;     ///< CACHECOMM_ALLTOALLV
};

/// Throws invalid_argument naming the variable, its value and what it accepts.
[[nodiscard]] coll_settings read_coll_settings(const config& settings);

}  // namespace cachecomm::detail
