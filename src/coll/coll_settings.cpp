#include "coll/coll_settings.hpp"

#include "coll/algorithm_registry.hpp"
#include "shm/cache_line.hpp"

#include <algorithm>

namespace cachecomm::detail {

namespace {

const setting<long long> region_setting{
    "CACHECOMM_COLL_REGION",
    1048576,
    "Bytes of each of the two halves of the collectives' shared data region (per node); larger "
    "messages are pipelined through it.",
    {.min = 65536, .max = 1LL << 32}};
const setting<long long> ring_setting{
    "CACHECOMM_COLL_RING",
    0,
    "Bytes of each half of the data region as laid out, at least CACHECOMM_COLL_REGION: the "
    "rings through it (the central gather, scatter, allgather and alltoall paths, the ring "
    "broadcast, the large reductions' staging) use all of it, so that a line is rewritten only "
    "after it has left its readers' L2 (0: twice a core's L2 cache, at most 16 MiB, where each "
    "rank has a core of its own; CACHECOMM_COLL_REGION when oversubscribed).",
    {.min = 65536, .max = 1LL << 32, .zero_allowed = true}};
const setting<long long> chunk_setting{"CACHECOMM_COLL_CHUNK",
                                       131072,
                                       "Pipeline chunk of large broadcasts and bytes per step of "
                                       "large reductions (when oversubscribed "
                                       "the whole region is used, to save scheduler rounds).",
                                       {.min = 4096}};
// A power of two, so that slot numbers stay in order when the 32-bit step counter wraps.
const setting<long long> slots_setting{
    "CACHECOMM_COLL_SLOTS",
    0,
    "Slots of 4 KiB per rank for small collectives, used round "
    "robin; a power of two (0: 8, or 32 when "
    "oversubscribed).",
    {.min = 2, .max = 1024, .power_of_two = true, .zero_allowed = true}};
const setting<streaming_choice> streaming_setting{
    "CACHECOMM_STREAMING_STORES",
    "auto",
    "Copy into the collectives' shared region with non-temporal stores (1), ordinary ones (0), or "
    "auto: ordinary stores, except that on AMD CPUs when not oversubscribed gather-reduce's "
    "allreduce staging (from 64 KiB) and the region ring of allgather, allgatherv, alltoall, "
    "alltoallv and reduce_scatter_block (from 16 KiB) pick streaming or ordinary stores per call "
    "from each rank's measured call times; adaptive: that per-call choice there also on Intel "
    "CPUs and oversubscribed, other copies ordinary (see docs/architecture.md).",
    {{"auto", streaming_choice::automatic},
     {"0", streaming_choice::off},
     {"1", streaming_choice::on},
     {"adaptive", streaming_choice::adaptive}}};
const setting<staging_mode> staging_setting{
    "CACHECOMM_ALLGATHER_STAGING",
    "auto",
    "How the stage-or-pull allgather moves each rank's block: auto (staged in shared memory while "
    "that copy runs within 2x of a local copy, pulled with cross-memory attach otherwise, decided "
    "per rank from its own copy times), stage, pull, or alternate (staged and pulled in turn, "
    "ranks out of phase: for tests).",
    {{"auto", staging_mode::automatic},
     {"stage", staging_mode::stage},
     {"pull", staging_mode::pull},
     {"alternate", staging_mode::alternate}}};
const setting<bool> check_setting{
    "CACHECOMM_CHECK", false,
    "Verify on every collective that all ranks pass the same operation, count, type, reduction and "
    "root, and report bad arguments on every rank (one extra MPI allreduce per call; off by "
    "default)."};
const setting<broadcast_algorithm> broadcast_setting{
    "CACHECOMM_BCAST", "auto", algorithm_setting_text("Broadcast", broadcast_registry()),
    algorithm_choices(broadcast_registry())};
const setting<reduce_algorithm> reduce_setting{"CACHECOMM_REDUCE", "auto",
                                               algorithm_setting_text("Reduce", reduce_registry()),
                                               algorithm_choices(reduce_registry())};
const setting<reduce_algorithm> allreduce_setting{
    "CACHECOMM_ALLREDUCE", "auto", algorithm_setting_text("Allreduce", reduce_registry()),
    algorithm_choices(reduce_registry())};
const setting<allgather_algorithm> allgather_setting{
    "CACHECOMM_ALLGATHER", "auto", algorithm_setting_text("Allgather", allgather_registry()),
    algorithm_choices(allgather_registry())};
const setting<gather_algorithm> gather_setting{"CACHECOMM_GATHER", "auto",
                                               algorithm_setting_text("Gather", gather_registry()),
                                               algorithm_choices(gather_registry())};
const setting<scatter_algorithm> scatter_setting{
    "CACHECOMM_SCATTER", "auto", algorithm_setting_text("Scatter", scatter_registry()),
    algorithm_choices(scatter_registry())};
const setting<alltoall_algorithm> alltoall_setting{
    "CACHECOMM_ALLTOALL", "auto", algorithm_setting_text("Alltoall", alltoall_registry()),
    algorithm_choices(alltoall_registry())};
const setting<scan_algorithm> scan_setting{
    "CACHECOMM_SCAN", "auto", algorithm_setting_text("Scan and exscan", scan_registry()),
    algorithm_choices(scan_registry())};

// auto by default: from online_selector::automatic_min_bytes only (online_selection.hpp says why).
const setting<online_mode> online_setting{
    "CACHECOMM_ONLINE_SELECTION",
    "auto",
    "Online selection: where no tuning file and no CACHECOMM_<OP> decides, the first calls of each "
    "operation and power-of-two size on a one-node communicator try every candidate (the system "
    "MPI's call included, 3 calls each, then the two closest 8 calls in a row each), and the "
    "communicator keeps the fastest. auto: messages from 16 KiB (below, the built-in rules), and "
    "none on an oversubscribed node; on: every size, oversubscribed too; off: never.",
    {{"auto", online_mode::automatic},
     {"on", online_mode::on},
     {"1", online_mode::on},
     {"true", online_mode::on},
     {"yes", online_mode::on},
     {"off", online_mode::off},
     {"0", online_mode::off},
     {"false", online_mode::off},
     {"no", online_mode::off}}};
const setting<bool> recheck_setting{
    "CACHECOMM_ONLINE_RECHECK", true,
    "Whether online selection measures a settled size again, rarely (after 1024 more calls, then "
    "8x as many each time), its choice against the runner-up only, and keeps the faster; never "
    "between a reduction's system MPI call and cachecomm's rank-order algorithms, so a re-check "
    "never changes a result. off: a settled size keeps its choice for the communicator's life."};
const setting<long long> budget_setting{
    "CACHECOMM_ONLINE_BUDGET",
    online_selector::default_budget_percent,
    "Percent of a size's calls that online selection's trial may add beyond its leader (the "
    "rules' choice, or a candidate its first two rounds measured clearly faster) where the "
    "leader's call takes 20 us or more: before the last round and before the confirmation the "
    "leader runs untimed calls enough to keep that phase's extra cost within it (at most 1024 a "
    "pause), so that a short run is not slowed by the candidates it tries. 0: the rounds back to "
    "back at every size (settled within 59 calls).",
    {.min = 1, .max = 100, .zero_allowed = true}};
const setting<online_metric> metric_setting{
    "CACHECOMM_ONLINE_METRIC",
    "slowest",
    "What online selection calls fastest. slowest: the lowest time of the slowest node rank (the "
    "call is over when every rank has its data); average: the lowest time of the average node rank "
    "(what OSU and IMB's t_avg report: a root that leaves early counts), among the candidates "
    "whose "
    "slowest rank is at most 25 % behind the best slowest rank.",
    {{"slowest", online_metric::slowest}, {"average", online_metric::average}}};
const setting<reduce_scatter_algorithm> reduce_scatter_setting{
    "CACHECOMM_REDUCE_SCATTER", "auto",
    algorithm_setting_text("Reduce_scatter_block and reduce_scatter", reduce_scatter_registry()),
    algorithm_choices(reduce_scatter_registry())};
const setting<allgatherv_algorithm> allgatherv_setting{
    "CACHECOMM_ALLGATHERV", "auto", algorithm_setting_text("Allgatherv", allgatherv_registry()),
    algorithm_choices(allgatherv_registry())};
const setting<gatherv_algorithm> gatherv_setting{
    "CACHECOMM_GATHERV", "auto", algorithm_setting_text("Gatherv", gatherv_registry()),
    algorithm_choices(gatherv_registry())};

const setting<scatterv_algorithm> scatterv_setting{
    "CACHECOMM_SCATTERV", "auto", algorithm_setting_text("Scatterv", scatterv_registry()),
    algorithm_choices(scatterv_registry())};

const setting<alltoallv_algorithm> alltoallv_setting{
    "CACHECOMM_ALLTOALLV", "auto", algorithm_setting_text("Alltoallv", alltoallv_registry()),
    algorithm_choices(alltoallv_registry())};

}  // namespace

coll_settings read_coll_settings(const config& settings) {
  coll_settings result;
  result.region_bytes = static_cast<std::size_t>(region_setting.read(settings));
  result.chunk_bytes = static_cast<std::size_t>(chunk_setting.read(settings));
  result.ring_bytes = static_cast<std::size_t>(ring_setting.read(settings));
  result.slot_ring = static_cast<std::uint32_t>(slots_setting.read(settings));
  result.check = check_setting.read(settings);
  result.streaming = streaming_setting.read(settings);
  result.allgather_staging = staging_setting.read(settings);
  result.broadcast = broadcast_setting.read(settings);
  result.reduce = reduce_setting.read(settings);
  result.allreduce = allreduce_setting.read(settings);
  result.allgather = allgather_setting.read(settings);
  result.gather = gather_setting.read(settings);
  result.scatter = scatter_setting.read(settings);
  result.alltoall = alltoall_setting.read(settings);
  result.scan = scan_setting.read(settings);
  result.online_selection = online_setting.read(settings);
  result.online_recheck = recheck_setting.read(settings);
  result.online_budget_percent = static_cast<unsigned>(budget_setting.read(settings));
  result.selection_metric = metric_setting.read(settings);
  result.reduce_scatter = reduce_scatter_setting.read(settings);
  result.allgatherv = allgatherv_setting.read(settings);
  result.gatherv = gatherv_setting.read(settings);
  result.scatterv = scatterv_setting.read(settings);
  result.alltoallv = alltoallv_setting.read(settings);
  return result;
}

std::size_t region_half_bytes(std::size_t region_bytes, std::size_t ring_bytes,
                              std::size_t l2_cache_bytes, bool oversubscribed) {
  constexpr std::size_t page = 4096;
  constexpr std::size_t largest_automatic = 16U << 20;
  std::size_t half = ring_bytes;
  if (half == 0 && !oversubscribed) half = std::min(2 * l2_cache_bytes, largest_automatic);
  half = std::max(half, region_bytes);
  return (half + page - 1) / page * page;
}

std::uint32_t nonblocking_ring_slots(std::size_t slot_bytes, int ranks, std::size_t l2_cache_bytes,
                                     bool oversubscribed, std::uint32_t setting) {
  constexpr std::uint32_t fewest = 4;
  constexpr std::uint32_t most = 64;
  constexpr std::size_t largest_channel = 8U << 20;
  if (setting != 0) return setting;
  if (oversubscribed || l2_cache_bytes == 0) return fewest;
  const std::size_t slot_stride = padded_to_line(cache_line_size + slot_bytes);
  std::uint32_t slots = fewest;
  while (slots < most && slots * slot_stride < 2 * l2_cache_bytes) slots *= 2;
  const std::size_t per_slot_of_every_rank = slot_stride * static_cast<std::size_t>(ranks);
  while (slots > fewest && slots * per_slot_of_every_rank > largest_channel) slots /= 2;
  return slots;
}

std::size_t nonblocking_payload_offset(std::uint32_t sequence, std::uint32_t ring, std::size_t span,
                                       std::size_t slot_bytes, bool every_rank_reads_every_slot) {
  const std::size_t walk_from = every_rank_reads_every_slot ? nonblocking_walk_min_span : 16384;
  if (span < walk_from || ring == 0) return 0;
  const std::size_t area = (span + cache_line_size - 1) / cache_line_size * cache_line_size;
  const std::size_t places = std::max<std::size_t>(1, slot_bytes / area);
  return (sequence / ring) % places * area;
}

std::size_t nonblocking_chunk_capacity(std::size_t slot_bytes, int ranks, bool block_per_rank) {
  const std::size_t blocks = block_per_rank ? static_cast<std::size_t>(std::max(ranks, 1)) : 1;
  return std::max<std::size_t>(cache_line_size,
                               slot_bytes / blocks / cache_line_size * cache_line_size);
}

std::size_t nonblocking_largest_call(std::size_t slot_bytes, std::uint32_t ring, int ranks,
                                     bool block_per_rank) {
  const std::size_t blocks = block_per_rank ? static_cast<std::size_t>(std::max(ranks, 1)) : 1;
  return std::max<std::size_t>(
      slot_bytes, static_cast<std::size_t>(ring) *
                      nonblocking_chunk_capacity(slot_bytes, ranks, block_per_rank) * blocks);
}

std::size_t nonblocking_slot_bytes(std::size_t setting, int ranks) {
  constexpr std::size_t smallest = 64U << 10;
  constexpr std::size_t largest = 256U << 10;
  constexpr std::size_t four_slots_per_rank_within = 8U << 20;
  if (setting != 0) return setting;
  std::size_t slot = largest;
  while (slot > smallest &&
         4 * slot * static_cast<std::size_t>(std::max(ranks, 1)) > four_slots_per_rank_within)
    slot /= 2;
  return slot;
}

}  // namespace cachecomm::detail
