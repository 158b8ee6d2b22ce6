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
  scan_algorithm scan = scan_algorithm::automatic;                 ///< CACHECOMM_SCAN (both)
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

/// The largest message (what one rank puts in) a nonblocking collective carries through the
/// channel of a communicator with `ranks` on the node: `setting` when not 0
/// (CACHECOMM_NONBLOCKING_BYTES, CACHECOMM_PRELOAD_NONBLOCKING_BYTES), otherwise 256 KiB up to 8
/// ranks, then halved as ranks double (4 slots per rank stay within 8 MiB), at least 64 KiB. OSU,
/// pure communication, 2 ranks, 3 interleaved rounds, 128 KiB - 1 MiB, geometric mean of plain /
/// preloaded: 256 KiB slots 1.12-2.16x under Open MPI 4.1 and 5 and MPICH 5 (ibcast, igather,
/// iallreduce, iallgather, ialltoall), where 64 KiB slots gave 0.91-1.09 (the larger messages
/// passed through); under Intel MPI 2021 ibcast 1.91 and igather 1.44 against 1.07 and 0.82,
/// iallreduce 0.94 against 0.90, iallgather and ialltoall 0.93 and 0.91 against 1.05 and 0.95.
[[nodiscard]] std::size_t nonblocking_slot_bytes(std::size_t setting, int ranks);
/// What the slot settings accept (CACHECOMM_NONBLOCKING_BYTES, CACHECOMM_PRELOAD_NONBLOCKING_BYTES;
/// 0: automatic).
inline constexpr integer_limits nonblocking_slot_bytes_limits{
    .min = 64, .max = 1 << 26, .zero_allowed = true};
/// What the ring settings accept (CACHECOMM_NONBLOCKING_SLOTS, CACHECOMM_PRELOAD_NONBLOCKING_SLOTS;
/// 0: automatic, nonblocking_ring_slots).
inline constexpr integer_limits nonblocking_ring_limits{
    .min = 4, .max = 64, .power_of_two = true, .zero_allowed = true};

/// How many slots per rank the nonblocking collectives' channel cycles through (a power of two, 4
/// to 64), for slots of `slot_bytes` (and a header line each). `setting`, when not 0, decides
/// (CACHECOMM_NONBLOCKING_SLOTS, CACHECOMM_PRELOAD_NONBLOCKING_SLOTS). A slot is rewritten every
/// `ring` operations, and a rewrite is cheap only once its lines have left the cores that read
/// them: on the 2-core EPYC VM (1 MiB L2) OSU's iallgather of 64 KiB took 5.3 us (pure
/// communication) through 4 slots and 3.7 through 32, iallreduce of 32 KiB 2.9 and 2.2. So each
/// rank's ring spans twice the L2 where every rank has a core of its own, within 8 MiB for the
/// whole channel; 4 when oversubscribed (the readers share the writer's caches) or the L2 is
/// unknown.
[[nodiscard]] std::uint32_t nonblocking_ring_slots(std::size_t slot_bytes, int ranks,
                                                   std::size_t l2_cache_bytes, bool oversubscribed,
                                                   std::uint32_t setting = 0);

/// The largest chunk of each block a call larger than a slot puts into one slot: the slot, or for
/// calls that put a block per rank into it (alltoall, reduce_scatter_block) its `ranks`-th, in
/// whole cache lines.
[[nodiscard]] std::size_t nonblocking_chunk_capacity(std::size_t slot_bytes, int ranks,
                                                     bool block_per_rank);

/// The largest call (bytes one rank puts in: `ranks` blocks where `block_per_rank`) the channel
/// serves: as many chunks as the ring has slots, so that a call goes in whole when it starts (with
/// the ring free) and no peer ever waits for its owner's progress. Larger ones go to the system
/// MPI. Chunked through the slots (one copy in, one copy out, overlapped chunk by chunk), OSU's
/// calls of 1 MiB ran 1.0-3.5x faster than through MPI (see docs/architecture.md, "Chunks").
[[nodiscard]] std::size_t nonblocking_largest_call(std::size_t slot_bytes, std::uint32_t ring,
                                                   int ranks, bool block_per_rank);

/// Where in its slot operation `sequence` puts `span` bytes (a multiple of the cache line). The
/// operation owns its whole slot (sequence - ring was released), so its data may lie anywhere in
/// it, and successive uses of a slot walk through it: a line is then rewritten only after
/// slot / span times `ring` operations, once it has left its readers' caches. OSU, pure
/// communication, 2 ranks, 32 slots (median of 5-7 interleaved rounds, Open MPI 4.1 and Intel MPI
/// 2021, the 2-core EPYC VM): walking took iallgather of 16 KiB 1.10-1.14 us against 1.36-1.47
/// from the slot's start, ibcast of 32 KiB 0.68 against 0.92-0.96, ialltoall of 2 x 16 KiB 1.12
/// against 1.46-1.53. Below 16 KiB it cost ibcast (8 KiB: 0.44 against 0.34-0.36) and ialltoall (2
/// x 4 KiB: 0.63 against 0.48-0.56) but still helped where every rank reads every slot, iallgather
/// and iallreduce (4-8 KiB: 0.46-0.75 against 0.59-0.87): hence walking from 16 KiB, or from 4 KiB
/// when `every_rank_reads_every_slot`. Smaller messages stay at the slot's start, in the caches.
/// The smallest span that walks (where every rank reads every slot; 16 KiB otherwise): smaller
/// ones lie at the slot's start.
inline constexpr std::size_t nonblocking_walk_min_span = 4096;
[[nodiscard]] std::size_t nonblocking_payload_offset(std::uint32_t sequence, std::uint32_t ring,
                                                     std::size_t span, std::size_t slot_bytes,
                                                     bool every_rank_reads_every_slot);

}  // namespace cachecomm::detail
