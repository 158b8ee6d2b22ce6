// Node-local data collectives over one shared-memory segment per communicator and node.
//
// Every call is a sequence of numbered steps that all node ranks take in the same order. In step k
// a rank writes only its slot number k % ring (256-byte slots for messages up to 240 bytes, 4 KiB
// slots up to 4080) or the half k % 2 of the data region, and before writing it waits until every
// rank has finished step k - depth (depth = the ring for slots; 2 for the region: double buffering;
// 1: the seed's single buffer). Writers announce step k with a sequence number (in the slot's first
// line, or in their `posted` line); readers announce that they are finished with `done` = k.
// Sequence numbers only grow, so nothing is ever reset.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "coll/algorithm_registry.hpp"
#include "coll/coll_settings.hpp"
#include "coll/online_selection.hpp"
#include "coll/staging_choice.hpp"
#include "coll/store_mode.hpp"
#include "coll/tuning_table.hpp"
#include "shm/cache_line.hpp"
#include "shm/cross_memory.hpp"
#include "shm/segment.hpp"
#include "sync/waiter.hpp"

namespace cachecomm::detail {

class comm_impl;

struct coll_tuning {
  std::size_t region_bytes = 1 << 20;  ///< each half of the data region
  std::size_t chunk_bytes =
      128 << 10;                  ///< pipeline chunk (broadcast) / per-step message bytes (reduce)
  bool streaming_stores = false;  ///< copies into the shared region bypass the caches
  staging_mode allgather_staging = staging_mode::automatic;  ///< CACHECOMM_ALLGATHER_STAGING
  /// gather-reduce's allreduce staging chooses its store mode per call from the measured call
  /// times (store_mode.hpp) instead of following streaming_stores
  bool adaptive_stores = false;
  bool amd_cpu = false;  ///< cpu_is_amd(): some built-in rules were measured only there
  bool check = false;    ///< verify matching arguments across ranks
  // CACHECOMM_BCAST / _REDUCE / _ALLREDUCE / _ALLGATHER (automatic: selection.hpp)
  broadcast_algorithm broadcast = broadcast_algorithm::automatic;
  reduce_algorithm reduce = reduce_algorithm::automatic;
  reduce_algorithm allreduce = reduce_algorithm::automatic;
  allgather_algorithm allgather = allgather_algorithm::automatic;
  // CACHECOMM_GATHER / _SCATTER / _ALLTOALL
  gather_algorithm gather = gather_algorithm::automatic;
  scatter_algorithm scatter = scatter_algorithm::automatic;
  alltoall_algorithm alltoall = alltoall_algorithm::automatic;
  scan_algorithm scan = scan_algorithm::automatic;  // CACHECOMM_SCAN
  // CACHECOMM_REDUCE_SCATTER / _ALLGATHERV / _GATHERV
  reduce_scatter_algorithm reduce_scatter = reduce_scatter_algorithm::automatic;
  allgatherv_algorithm allgatherv = allgatherv_algorithm::automatic;
  gatherv_algorithm gatherv = gatherv_algorithm::automatic;
  scatterv_algorithm scatterv = scatterv_algorithm::automatic;     // CACHECOMM_SCATTERV
  alltoallv_algorithm alltoallv = alltoallv_algorithm::automatic;  // CACHECOMM_ALLTOALLV
};

class coll_engine {
 public:
  /// Collective over the node communicator of `impl`.
  explicit coll_engine(comm_impl& impl);
  // Its waits hold a pointer to it (m_check).
  coll_engine(const coll_engine&) = delete;
  coll_engine& operator=(const coll_engine&) = delete;
  /// Node rank 0 adds the online selection report to the process's selection log.
  ~coll_engine();
  /// The engine of `impl`, built on first use.
  static coll_engine& of(comm_impl& impl);

  /// Payload bytes of one slot: messages up to this size go through slots. The payload starts in
  /// the line holding the slot's sequence number, so a small message costs one line transfer.
  static constexpr std::size_t slot_header_bytes = 16;
  static constexpr std::size_t slot_payload = 4096 - slot_header_bytes;
  /// Slots per rank, used round robin: a writer checks its readers only every few steps, and a
  /// root may run that many small broadcasts ahead of its readers (more when oversubscribed,
  /// where readers run in bursts when the scheduler gets to them).
  [[nodiscard]] std::uint32_t slot_ring() const { return m_slot_ring; }
  /// Messages up to this size use the small slots (256 bytes each, a deeper ring of them).
  static constexpr std::size_t small_slot_payload = 256 - slot_header_bytes;

  [[nodiscard]] bool single_copy_available() const { return m_cma; }
  /// Single copy with the root pushing part of the message into the readers' buffers.
  [[nodiscard]] bool single_copy_push_available() const { return m_cma_push; }
  [[nodiscard]] const coll_tuning& tuning() const { return m_tuning; }
  /// Each half of the data region as laid out (region_half_bytes): what the rings go through.
  [[nodiscard]] std::size_t half_bytes() const { return m_half_bytes; }
  [[nodiscard]] int node_size() const { return m_size; }
  [[nodiscard]] int node_rank() const { return m_rank; }
  [[nodiscard]] bool oversubscribed() const { return m_oversubscribed; }

  /// What the algorithms' applicability and the automatic choice read.
  [[nodiscard]] node_shape shape() const { return {m_size, m_oversubscribed, m_cma, m_cma_push}; }

  /// Concrete algorithms only (run through their registry entry). Ranks are node ranks.
  void broadcast(void* buffer, std::size_t bytes, int root, broadcast_algorithm algorithm);
  /// root < 0: every rank receives (allreduce). `input` may equal `output`.
  void reduce(const void* input, void* output, std::size_t count, datatype type, reduce_op op,
              int root, reduce_algorithm algorithm);
  /// `input` may equal output + node_rank * block_bytes.
  void allgather(const void* input, void* output, std::size_t block_bytes,
                 allgather_algorithm algorithm);
  /// Before a call the system MPI carries out (the automatic choice gave it to MPI): waits until
  /// every node rank has announced its call and throws mismatch_error when one announced another (a
  /// rank whose arguments took cachecomm's path would never enter MPI's call, and MPI's would never
  /// return). `bytes`: the message (allgather: one block); reductions also pass type and operation.
  void agree_on_system_call(tuned_op op, std::size_t bytes, datatype type = datatype::byte,
                            std::uint32_t operation = 0xffU);
  /// Online selection's handshake (online_selection.hpp): publishes the first `count` values of
  /// `mine`, agrees on the call as agree_on_system_call does (a mismatch throws), and returns for
  /// each the largest and the average value the node ranks published. Every node rank calls it in
  /// the same call.
  [[nodiscard]] online_selector::trial_views agree_on_trial(
      tuned_op op, std::size_t bytes, datatype type, std::uint32_t operation,
      const online_selector::trial_values& mine, std::size_t count, unsigned parity);
  /// Per (operation, size bucket): the online selection's state on this rank.
  [[nodiscard]] online_selector& online() { return m_online; }
  [[nodiscard]] const online_selector& online() const { return m_online; }
  /// This rank's adaptive store modes (reported at finalize; tests read them).
  [[nodiscard]] const store_mode_choosers& store_modes() const { return m_store_modes; }
  /// This rank's adaptive store modes for its copies into the region ring (ring_stores).
  [[nodiscard]] const store_mode_choosers& ring_store_modes() const { return m_ring_store_modes; }

  /// Block collectives (gather.cpp, scatter.cpp, alltoall.cpp): `root` is a node rank; the root's
  /// `input` may equal output + root * block_bytes (gather), its `output` may be null (scatter,
  /// its block stays in place); alltoall's input and output must not overlap.
  void gather(const void* input, void* output, std::size_t block_bytes, int root,
              gather_algorithm algorithm);
  void scatter(const void* input, void* output, std::size_t block_bytes, int root,
               scatter_algorithm algorithm);
  void alltoall(const void* input, void* output, std::size_t block_bytes,
                alltoall_algorithm algorithm);
  /// Prefix reduction in rank order (scan.cpp); `exclusive`: node rank 0's output is untouched.
  /// `input` may equal `output`. Both algorithms give the same bits (the rank-ordered fold).
  void scan(const void* input, void* output, std::size_t count, datatype type, reduce_op op,
            bool exclusive, scan_algorithm algorithm);
  void scan_region(const void* input, void* output, std::size_t count, datatype type, reduce_op op,
                   bool exclusive);
  void scan_single_copy(const void* input, void* output, std::size_t count, datatype type,
                        reduce_op op, bool exclusive);

  /// reduce_scatter_block (reduce_scatter_block.cpp): node rank r's output is block r of every
  /// input combined in rank order; `output` may be `input` (its first block receives the result).
  void reduce_scatter_block(const void* input, void* output, std::size_t count, datatype type,
                            reduce_op op, reduce_scatter_algorithm algorithm);
  /// reduce_scatter with per-rank counts (reduce_scatter_block.cpp): `call.counts` and
  /// `call.offsets` are set. `description` digests the counts (the call's description, so ranks
  /// that disagree on them fail instead of reading short blocks: every rank that reads another's
  /// input checks it; a rank that receives nothing reads nothing in the slots' path).
  void reduce_scatter_counts(const reduce_scatter_call& call, std::uint64_t description,
                             reduce_scatter_algorithm algorithm);
  /// allgatherv (allgatherv.cpp): `fingerprint` digests the per-rank counts (the call's
  /// description, so ranks that disagree on them fail). `call.root` is ignored.
  void allgatherv(const vector_call& call, std::uint64_t fingerprint,
                  allgatherv_algorithm algorithm);
  /// gatherv (gatherv.cpp): every rank's count travels with its first step and the root checks it;
  /// central also sends the root's counts to every rank, so both sides report a disagreement.
  void gatherv(const vector_call& call, gatherv_algorithm algorithm);
  /// The automatic gatherv of a pair of ranks (gatherv.cpp): the non-root's block, which both know
  /// after the first step, chooses from thresholds::pair_gatherv_planned_min_bytes on
  /// (in_call_planner); smaller blocks take the single-copy path, posted and left.
  void gatherv_pair(const vector_call& call, in_call_planner& planner);
  /// scatterv (scatterv.cpp): the root decides the path and posts it with its counts; a rank whose
  /// receive count differs from the root's count for it fails after the call. The root's `output`
  /// may be null (in place).
  void scatterv(const vector_call& call, scatterv_algorithm algorithm);
  /// alltoallv (alltoallv.cpp): every rank posts its counts (and its blocks when they fit) in its
  /// slot; every rank reads all slots, so all agree on the path of the larger blocks. A rank whose
  /// receive count from a rank differs from what that rank sends it fails after the call.
  void alltoallv(const exchange_call& call, alltoallv_algorithm algorithm);
  /// The automatic alltoallv: its path is chosen inside the call, once the first step has told
  /// every rank every count (in_call_planner).
  void alltoallv(const exchange_call& call, in_call_planner& planner);
  /// Bytes of blocks (to the other ranks) that fit in a rank's slot beside its counts: a rank that
  /// sends no more is never read from its own buffer.
  [[nodiscard]] std::size_t alltoallv_inline_bytes() const;

  // The algorithms, called by their registry entries (algorithm_registry.cpp).
  void reduce_scatter_central(const reduce_scatter_call& call);
  void reduce_scatter_single_copy(const reduce_scatter_call& call);
  void allgatherv_central(const vector_call& call);
  void allgatherv_single_copy(const vector_call& call);
  /// Both gatherv algorithms: with `single_copy` the root pulls blocks larger than a slot with
  /// cross-memory attach (and posts no counts: the others post and leave) instead of taking them
  /// through the data region.
  void gatherv(const vector_call& call, bool single_copy);
  /// Both scatterv algorithms: `pull_large` lets the root choose the single-copy path.
  void scatterv(const vector_call& call, bool pull_large);
  /// Both alltoallv algorithms: `pull` lets the ranks pull the blocks that left the slots from
  /// their owners' buffers; otherwise they go through the data region.
  void alltoallv(const exchange_call& call, bool pull);
  void gather_central(const void* input, void* output, std::size_t block_bytes, int root);
  void gather_single_copy(const void* input, void* output, std::size_t block_bytes, int root);
  void scatter_central(const void* input, void* output, std::size_t block_bytes, int root);
  void scatter_single_copy(const void* input, void* output, std::size_t block_bytes, int root);
  void alltoall_central(const void* input, void* output, std::size_t block_bytes);
  void alltoall_single_copy(const void* input, void* output, std::size_t block_bytes);

  void broadcast_slots(void* buffer, std::size_t bytes, int root);
  void broadcast_tree(void* buffer, std::size_t bytes, int root);
  void broadcast_region(void* buffer, std::size_t bytes, int root, std::uint32_t depth);
  void broadcast_ring(void* buffer, std::size_t bytes, int root);
  /// The root copies `chunk`-byte pieces into the data region, the others copy them out; up to
  /// `depth` steps in flight (1, 2, or an even ring depth with depth / 2 chunks per half).
  void broadcast_chunks(void* buffer, std::size_t bytes, int root, std::size_t chunk,
                        std::uint32_t depth);
  void broadcast_single_copy(void* buffer, std::size_t bytes, int root);
  void reduce_slots(const void* input, void* output, std::size_t count, datatype type, reduce_op op,
                    int root);
  void reduce_scatter(const void* input, void* output, std::size_t count, datatype type,
                      reduce_op op, int root);
  void reduce_gather(const void* input, void* output, std::size_t count, datatype type,
                     reduce_op op, int root);  // reduce_large.cpp
  void reduce_split(const void* input, void* output, std::size_t count, datatype type, reduce_op op,
                    int root);  // reduce_split.cpp
  void allgather_central(const void* input, void* output, std::size_t block_bytes);
  void allgather_single_copy(const void* input, void* output,
                             std::size_t block_bytes);  // allgather_single_copy.cpp
  void allgather_stage_or_pull(const void* input, void* output,
                               std::size_t block_bytes);  // allgather_stage_or_pull.cpp

 private:
  // The description of the call a slot's data belongs to rides in the slot's first line next to
  // the sequence number, so every reader compares it with its own for free (an erroneous program
  // whose ranks pass different sizes fails at once instead of reading short data).
  struct slot_header {
    std::atomic<std::uint32_t> sequence;
    std::uint32_t call_info;
    std::uint64_t call_bytes;
  };
  static_assert(sizeof(slot_header) == slot_header_bytes);
  /// What every rank of one call must agree on.
  enum class call_kind : std::uint32_t {
    broadcast = 1,
    reduce = 2,
    allgather = 3,
    gather = 4,
    scatter = 5,
    alltoall = 6,
    scan = 7,
    reduce_scatter = 8,
    allgatherv = 9,             ///< bytes: the fingerprint of the per-rank counts
    gatherv = 10,               ///< bytes: 0 (the counts are compared in the call's first step)
    scatterv = 11,              ///< bytes: 0 (as gatherv)
    alltoallv = 12,             ///< bytes: 0 (the counts are compared in the call's first step)
    reduce_scatter_counts = 13  ///< bytes: total bytes << 24 | a digest of the per-rank counts
  };
  struct call_description {
    std::uint32_t number = 0;      ///< calls of this engine so far, this one included (never 0)
    std::uint32_t first_step = 0;  ///< the call's first step (tells calls apart on posted lines)
    std::uint32_t info = 0;        ///< kind << 16 | element type << 8 | operation
    std::uint64_t bytes = 0;
    std::int32_t root = -1;  ///< the root's node rank; -1 where the call has none (an allreduce)
  };
  /// Counts the call and announces its description on this rank's call line (call_check.cpp), the
  /// one place every path of every collective shares.
  void begin_call(call_kind kind, std::size_t bytes, datatype type, std::uint32_t op,
                  int root = -1);
  /// Whether a call of this description may go through the data region: every call but those the
  /// small slots carry (the vector calls' byte counts are known only inside the call).
  [[nodiscard]] static bool may_use_region(call_kind kind, std::size_t bytes) {
    return bytes > small_slot_payload || kind == call_kind::gatherv ||
           kind == call_kind::scatterv || kind == call_kind::alltoallv ||
           kind == call_kind::allgatherv;
  }
  /// The data region's first use on this communicator (from begin_call, so every node rank comes
  /// here in the same call): fills this rank's page tables for it, writes its own part of both
  /// halves once, and waits until every rank has.
  void prepare_region();
  /// Announces the call (begin_call) and waits until every node rank announced one with this
  /// number; throws mismatch_error when a rank describes it differently.
  void agree_on_call(tuned_op op, std::size_t bytes, datatype type, std::uint32_t operation);
  /// What a rank's call line says; false while its owner rewrites it.
  bool read_call_line(int rank, call_description& seen) const;
  /// The wait_check of every wait of the engine: throws mismatch_error when a peer's call line
  /// describes this call differently, or when the awaited peer has moved on to a later call while
  /// the wait is still not over (it left this call without what this rank waits for).
  void inspect_peers(int waited_node_rank, wait_check::ready_function ready, void* ready_context);
  [[noreturn]] void call_abandoned(int rank, std::uint32_t number);
  void wait_for(const std::atomic<std::uint32_t>& word, std::uint32_t target, int rank,
                const char* what) {
    m_wait->wait_reach(word, target, rank, what, &m_check);
  }
  /// Compares what `rank` wrote for its call with this rank's call; throws mismatch_error (after
  /// finishing `step`, so the others can go on) when they differ.
  void check_call(int rank, std::uint32_t step, std::uint32_t info, std::uint64_t bytes);
  [[noreturn]] void call_mismatch(int rank, std::uint32_t step, std::uint32_t info,
                                  std::uint64_t bytes, std::int32_t root);
  void describe_slot(std::uint32_t step, std::size_t bytes) const;
  /// Whether `rank` has posted its slot of `step` already (no waiting).
  [[nodiscard]] bool slot_posted(int rank, std::uint32_t step, std::size_t bytes) const {
    return sequence_reached(slot_sequence(rank, step, bytes).load(std::memory_order_relaxed), step);
  }
  /// A reader whose writer is calls ahead (a loop of collectives with nothing between them) asks
  /// for the writer's next slot right away: the next call then finds that line here instead of
  /// waiting one line transfer for it (2 ranks, back-to-back 8-64 B broadcasts: 0.10-0.12 us per
  /// call without, 0.08-0.09 with, Open MPI 0.08). Only when the writer was ahead this step: when
  /// it was not, the read would take the line from it just before it writes it.
  void prefetch_next_slot(int rank, std::uint32_t step, std::size_t bytes) const {
    __builtin_prefetch(slot(rank, step + 1, bytes), 0, 3);
  }

  std::uint32_t begin_step();
  void ensure_free(std::uint32_t step, std::uint32_t depth);
  void finish_step(std::uint32_t step);
  static constexpr std::size_t slot_stride = 4096;
  static constexpr std::size_t small_slot_stride = 256;
  // Slots come in two sizes: `bytes` (the same on every rank in a step) picks which. Inline, and
  // rings are powers of two (a mask, not a division): a small collective computes several of these.
  [[nodiscard]] std::byte* slot(int rank, std::uint32_t step, std::size_t bytes) const {
    const auto size = static_cast<std::size_t>(m_size);
    const auto index = static_cast<std::size_t>(rank);
    if (bytes <= small_slot_payload) {
      return m_small_slots + ((step & (m_small_slot_ring - 1)) * size + index) * small_slot_stride;
    }
    return m_slots + ((step & (m_slot_ring - 1)) * size + index) * slot_stride;
  }
  [[nodiscard]] std::uint32_t slot_depth(std::size_t bytes) const {
    return bytes <= small_slot_payload ? m_small_slot_ring : m_slot_ring;
  }
  [[nodiscard]] std::byte* slot_data(int rank, std::uint32_t step, std::size_t bytes) const {
    return slot(rank, step, bytes) + slot_header_bytes;
  }
  [[nodiscard]] std::atomic<std::uint32_t>& slot_sequence(int rank, std::uint32_t step,
                                                          std::size_t bytes) const {
    return reinterpret_cast<slot_header*>(slot(rank, step, bytes))->sequence;
  }
  [[nodiscard]] std::byte* region(std::uint32_t step) const {
    return m_region + (step & 1U) * m_half_bytes;
  }
  /// The data region as a ring of positions: each half holds `positions` areas of `area` bytes
  /// per rank, and consecutive steps of a half walk through them, so that an area is rewritten
  /// only after the rest of its half was (region_ring_of). Ordinary stores are fast only into
  /// lines that have left their readers' caches: rewriting the lines a reader took from the same
  /// half two steps before moved 2.2-2.5 GB/s on the 2-core EPYC VM (shared_copy.hpp). Steps
  /// keep ensure_free's depth 2: a call whose chunk leaves room for more than one position takes
  /// one step, and depth 2 waits until every earlier step, whatever its layout, is finished.
  struct region_ring {
    std::size_t area = 0;       ///< bytes of one rank's area
    std::size_t positions = 1;  ///< areas per rank in each half
  };
  /// A step's chunk through the region: `room` (a rank's share of a half, per destination), or
  /// less for a message that fits, rounded to cache lines so that the ring's areas stay aligned.
  [[nodiscard]] static std::size_t fitted_chunk(std::size_t room, std::size_t bytes) {
    const std::size_t lines = room / cache_line_size * cache_line_size;
    if (lines == 0) return room;
    return std::min(lines, (bytes + cache_line_size - 1) / cache_line_size * cache_line_size);
  }
  [[nodiscard]] region_ring region_ring_of(std::size_t area) const {
    const std::size_t per_rank = m_half_bytes / static_cast<std::size_t>(m_size);
    return {area, std::max<std::size_t>(1, per_rank / area)};
  }
  [[nodiscard]] std::byte* ring_area(const region_ring& ring, std::size_t rank,
                                     std::uint32_t step) const {
    return region(step) + (rank * ring.positions + (step >> 1U) % ring.positions) * ring.area;
  }
  /// The areas of alltoall, alltoallv and reduce_scatter_block: a chunk per destination. A
  /// message that fits in one step (`fits`) leaves out the writer's own chunk, which is never
  /// written: its ring is then deeper (2 ranks: twice as deep; 16-128 KiB alltoall 1.13-1.36x
  /// faster on the 2-core EPYC VM). Larger messages keep P chunks: there the deeper ring was
  /// 2-10 % slower (alltoall and reduce_scatter_block of 1-4 MiB), as for allgather.
  struct destination_chunks {
    std::size_t chunk = 0;
    bool compact = false;  ///< no chunk for the writer itself
    [[nodiscard]] std::size_t per_area(std::size_t size) const {
      return (compact ? size - 1 : size) * chunk;
    }
    /// Where the writer's area holds its chunk for `destination` (never the writer itself).
    [[nodiscard]] std::size_t offset(std::size_t destination, std::size_t writer) const {
      return (compact && destination > writer ? destination - 1 : destination) * chunk;
    }
  };
  /// One call's copies into the region ring, for the paths whose every rank writes and reads
  /// (allgather, allgatherv, alltoall, alltoallv, reduce_scatter_block): in the store mode this
  /// rank's chooser picks for the call's size (ring_store_modes; CACHECOMM_STREAMING_STORES=auto
  /// on AMD when not oversubscribed, or adaptive), the whole call timed for it; otherwise in the
  /// configured mode. On the 2-core EPYC VM a 2-rank exchange of 32 KiB took 2.0 us with ordinary
  /// stores and 5.3 with streaming ones in the VM's usual state, 16.7 and 4.7 in its slow one
  /// (minutes at a time, about one sample in six). The whole call, not the copy: the copy alone
  /// misses what the mode costs the readers, and at 16-32 KiB it led the chooser to streaming
  /// stores in the usual state. Gather's writers and scatter's readers do not do both, so those
  /// keep the configured mode. Each rank chooses alone: the mode moves lines, never bits.
  class ring_stores {
   public:
    ring_stores(coll_engine& engine, std::size_t call_bytes);
    void copy(void* area, const void* from, std::size_t bytes);
    /// Gives the chooser the call's copy time per KiB (a call that threw records nothing).
    void finish();

   private:
    store_mode_chooser* m_chooser = nullptr;
    bool m_streaming = false;
    std::uint64_t m_start = 0;  // time stamp counter at the call's start
    std::size_t m_bytes = 0;    // the call's bytes (the chooser's time is per KiB of them)
  };
  void post_slot(std::uint32_t step, std::size_t bytes);
  void wait_slot(int rank, std::uint32_t step, std::size_t bytes, const char* what);
  /// post_slot in two halves, for a rank that reads other slots right after posting its own.
  void store_slot(std::uint32_t step, std::size_t bytes);
  void wake_slot(std::uint32_t step, std::size_t bytes);
  void post_region(std::uint32_t step);
  void wait_region(int rank, std::uint32_t step, const char* what);

  /// Bytes each rank stages per step in reduce_gather (smaller when the region is short).
  static constexpr std::size_t reduce_gather_chunk = 64U << 10;
  /// Bytes of one rank's slice of a chunk in reduce_split (smaller when the region is short).
  static constexpr std::size_t split_slice_bytes = 16U << 10;
  /// Bytes each rank pulls from one other rank per single-copy step of a reduction (the pulled
  /// inputs stay in the puller's cache for the fold).
  static constexpr std::size_t pull_chunk_bytes = 64U << 10;
  /// Bytes per step of one block: whole elements, whole cache lines where a line fits.
  static std::size_t whole_chunk(std::size_t room, std::size_t element) {
    std::size_t chunk = std::max<std::size_t>(element, room / element * element);
    if (chunk >= cache_line_size) chunk = chunk / cache_line_size * cache_line_size;
    return chunk;
  }
  /// Single copy: publishes `address` for this step's readers (the address line, then `posted`).
  void publish_address(std::uint32_t step, const void* address);
  /// The address `rank` published for `step` (waits for it).
  std::uint64_t published_address(int rank, std::uint32_t step, const char* what);
  /// Waits until every other rank has finished `step` (they read this rank's buffer).
  void wait_readers(std::uint32_t step, const char* what);
  // alltoallv's parts (alltoallv.cpp): the counts step, then the path of the blocks that left the
  // slots, then the report of a count disagreement this rank saw.
  struct alltoallv_counts {
    std::size_t largest_outside = 0;  ///< the largest block not in a slot: the same on every rank
    bool own_inline = true;           ///< this rank's blocks went in its slot
    bool system_possible = true;      ///< every rank can hand the call to the system MPI
    int disagreeing = -1;             ///< the first rank whose count disagreed with this rank's
    std::size_t disagreeing_sent = 0;
  };
  bool alltoallv_alone(const exchange_call& call);  ///< one rank (done), or too many ranks (throws)
  alltoallv_counts alltoallv_counts_step(const exchange_call& call, bool system_possible);
  void alltoallv_system_call(const exchange_call& call, const alltoallv_counts& counts,
                             in_call_planner& planner);
  void alltoallv_pull_step(const exchange_call& call, const alltoallv_counts& counts);
  void alltoallv_region_steps(const exchange_call& call, const alltoallv_counts& counts);
  void alltoallv_report(const exchange_call& call, const alltoallv_counts& counts) const;

  int m_size = 1;
  int m_rank = 0;
  bool m_oversubscribed = false;
  bool m_cma = false;
  bool m_cma_push = false;  // the root may also write into the readers' buffers (process_vm_writev)
  coll_tuning m_tuning;
  waiter* m_wait = nullptr;
  shm_segment m_segment;
  slot_array<padded_flag> m_posted;
  slot_array<padded_flag> m_done;
  slot_array<padded_flag> m_call_lines;  // each rank's current call: number, info, bytes (seqlock)
  wait_check m_check;
  slot_array<padded_flag>
      m_address;  // single copy: each rank's buffer address (word 0), root's failed push (word 1)
  std::byte* m_slots = nullptr;  // [step % slot_ring][rank] slots of 4096 bytes: sequence + payload
  std::byte* m_region = nullptr;              // two halves of m_half_bytes
  std::size_t m_region_offset = 0;            // in the segment
  bool m_region_ready = false;                // prepare_region() has run
  slot_array<padded_flag> m_region_prepared;  // each rank's: 1 once it has prepared the region
  // Each half's bytes (region_half_bytes): the pipelined paths use its first region_bytes, the
  // region ring all of it.
  std::size_t m_half_bytes = 0;
  const cross_memory* m_cross = nullptr;  // the comm's single copy (probed once per comm)
  std::vector<const void*> m_inputs;  // reduction inputs in rank order (kept to avoid allocating)
  std::vector<const void*> m_block_inputs;  // reduce_split: m_inputs advanced to one block
  std::vector<std::byte> m_scratch;         // reduce-scatter: a non-receiver's reduced slice
  std::vector<std::byte> m_pulled;          // single-copy reduce_scatter_block: the blocks pulled
  std::vector<std::uint64_t> m_addresses;   // single copy: the addresses the others published
  // alltoallv: per rank what its slot told this rank (bytes it sends here, whether they came in
  // its slot, their address in its buffer), kept past the slot's step.
  static constexpr std::size_t peer_words = 3;
  std::vector<std::uint64_t> m_peer_words;
  std::uint32_t m_slot_ring = 8;
  std::uint32_t m_small_slot_ring = 64;
  std::byte* m_small_slots = nullptr;  // [step % small ring][rank] slots of 256 bytes
  std::uint32_t m_step = 0;
  staging_choice m_staging;      // stage-or-pull allgather: how this rank's block travels
  std::uint32_t m_all_done = 0;  // every other rank has finished at least this step
  call_description m_call;       // the call this rank is in
  online_selector m_online;
  // gather-reduce's staging store mode, per size class. It starts ordinary (the choosers' start):
  // a streaming start, kept from when the halves were 1 MiB, spent the online trial of a 1 MiB
  // allreduce in the slow mode (gather-reduce 125-145 us against the system MPI's 131-150, within
  // noise of losing the bucket) and switched only after 95 calls.
  store_mode_choosers m_store_modes{"staging stores"};
  // The region ring's: switching only for a clear gain: its calls are a few microseconds, and a
  // switch on noise costs the calls until the next probe (the slow state's gain was 3x).
  // Per octave of sizes: a class's calls must take alike times per KiB.
  store_mode_choosers m_ring_store_modes{"region ring stores", store_mode::ordinary,
                                         store_mode_policy{.switch_below = 0.6},
                                         size_classes::octaves};
  // Online selection's handshake values: per rank, [parity][candidate] (own lines).
  static constexpr std::size_t trial_values_per_rank = 2 * online_selector::max_candidates;
  std::uint64_t* m_trial_values = nullptr;
  std::size_t m_trial_stride = 0;  // values between two ranks' rows (whole cache lines)
};

}  // namespace cachecomm::detail
