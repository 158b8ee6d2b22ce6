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
  std::size_t ring_bytes = 0;    ///< CACHECOMM_COLL_RING (0: from the L2 cache)
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
  unsigned online_budget_percent = 0;                              ///< CACHECOMM_ONLINE_BUDGET
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

/// Each half of the collectives' data region as laid out: at least `region_bytes`, the part the
/// pipelined paths use. The central paths rotate their areas through the whole half
/// (coll_engine::region_ring), and a rewritten line is cheap only once it has left its readers'
/// L2: on a 2-core AMD EPYC VM (1 MiB L2) a 2-rank exchange of 32 KiB through rings of 1 and 2 MiB
/// per rank took 2.8 and 2.0 us, 4.5-5.8 through 128 KiB, and OSU's allgather and alltoall of 8-64
/// KiB ran 1.2-1.7x faster with 2 MiB halves than with 1 MiB ones. Hence `ring_bytes` when set,
/// otherwise twice the L2 (at most 16 MiB) where each rank has a core of its own; oversubscribed
/// ranks share caches, and a smaller half keeps the lines in them.
[[nodiscard]] std::size_t region_half_bytes(std::size_t region_bytes, std::size_t ring_bytes,
                                            std::size_t l2_cache_bytes, bool oversubscribed);

}  // namespace cachecomm::detail
