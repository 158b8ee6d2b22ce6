// The shared-memory protocol of the nonblocking collectives (the C++ API's, nonblocking.hpp, and
// the preload's): one segment per communicator (single node), separate from the blocking
// collectives' engine, so the two never share a slot or a sequence number.
//
// Operation number s (counted per communicator, the same on every rank: MPI orders collectives per
// communicator) uses slot s % ring of each rank (ring: 4 to 64, nonblocking_ring_slots). A rank
// contributes (copies its data into its slot, writes the slot header, then publishes the header's
// sequence = s) once every rank has released s - ring; it is ready once the ranks whose data it
// needs have published s in their slots; it finishes by reading their slots and publishing
// released = s (a single-copy call, below, publishes it in complete, once its blocks have moved).
// Every step is a poll: nothing here ever waits.
//
// The header's sequence is the arrival flag: while a reader waits for s, the slot holds s - ring
// or s (its owner cannot write s + ring before every rank released s). Data of up to
// inline_payload_bytes sits on the header's own line, so a small operation moves one line per
// contributor: the flag, what the call was, and the data (measured on the EPYC Zen 1 VM, where each
// further line a reader waits for cost 0.1-0.2 us). Each rank remembers the released words it last
// read, so a start reads its peers' (lines they write) only when the ring has come round to a slot
// those values do not show free. A call larger than a slot is cut into chunks (`chunks`, `chunk`),
// each an operation of its own with the next number: a reader copies chunk j while the writer
// copies chunk j + 1 in.
//
// Each rank writes only its own slot, except scatter's root, which writes block r into rank r's
// slot (rank r writes only that slot's header, on a line of its own): then every block fits one
// slot, as for gather.
//
// A large allreduce splits the reduction (splits_allreduce): rank r combines part r of every
// slot into its slot's result area and publishes reduced = s, then copies the other parts from
// their owners' result areas. A part whose owner has not published yet, it combines itself from
// the inputs (bit for bit the same fold), so no rank ever waits for another's finish: the only
// dependency stays arrival. Each rank reads about 2 inputs' worth instead of one per rank.
//
// Large moves without arithmetic (bcast, scatter, gather, allgather, alltoall) may take single copy
// (nonblocking_single_copy.cpp): a rank's slot then holds only the addresses of its buffers, and
// each block goes once, by cross-memory attach, from its owner's buffer into its reader's. Whoever
// of the two gets there first moves it: the reader pulls in its finish, or the owner, waiting for
// its readers before it may complete, pushes into a reader that has started but not pulled (a
// claim word per pair decides, so a block is moved once). So neither waits for the other's progress
// calls, only for its start, as with two copies: a reader blocked in a receive from the owner does
// not hold the owner up.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cachecomm/datatype.hpp"
#include "cachecomm/wait_policy.hpp"
#include "shm/cross_memory.hpp"
#include "shm/segment.hpp"

namespace cachecomm::detail {

enum class nonblocking_kind : std::uint32_t {
  barrier = 1,
  bcast,
  reduce,
  allreduce,
  allgather,
  gather,
  scatter,
  alltoall,
  reduce_scatter_block,
  scan,
  exscan,
};

/// Whether a rank's contribution is one block per rank (alltoall, reduce_scatter_block): its slot
/// then holds size * bytes.
[[nodiscard]] constexpr bool contributes_per_rank(nonblocking_kind kind) {
  return kind == nonblocking_kind::alltoall || kind == nonblocking_kind::reduce_scatter_block;
}

/// What one rank passed to one nonblocking collective, in cachecomm's terms.
struct nonblocking_call {
  nonblocking_kind kind = nonblocking_kind::barrier;
  /// This rank's contribution (bcast, scatter: the root's buffer; alltoall, reduce_scatter_block:
  /// size blocks of `bytes`).
  const void* send = nullptr;
  void* recv = nullptr;   ///< where the result goes (null where this rank gets none)
  std::size_t bytes = 0;  ///< bytes every rank agrees on (gather, scatter, alltoall...: a block)
  std::size_t own_bytes = 0;  ///< bytes of this rank's block (may differ: an erroneous program)
  std::size_t count = 0;      ///< reductions: elements (reduce_scatter_block: of one block)
  datatype type = datatype::byte;
  reduce_op op = reduce_op::sum;
  int root = 0;  ///< bcast, reduce, gather, scatter: node rank of the root
  /// Where the user's buffers hold a block per rank (scatter's, alltoall's and
  /// reduce_scatter_block's send; gather's, allgather's and alltoall's recv): the distance between
  /// blocks. 0: `bytes` (blocks back to back); a chunk (nonblocking_channel::chunk) keeps the
  /// whole call's.
  std::size_t stride = 0;
};

/// The distance between a call's per-rank blocks in the user's buffers.
[[nodiscard]] constexpr std::size_t block_stride(const nonblocking_call& call) {
  return call.stride != 0 ? call.stride : call.bytes;
}

class nonblocking_channel {
 public:
  /// Collective over `node_comm` (every rank of the communicator shares this node), with `ring`
  /// slots of `slot_bytes` per rank (nonblocking_ring_slots: the same on every rank).
  /// `single_copy`: the comm's cross-memory attach where large moves should use it
  /// (make_nonblocking_channel), or null; the same on every rank. `every_move`: single copy for
  /// every kind it serves, not only broadcasts (CACHECOMM_NONBLOCKING_SINGLE_COPY=all), from blocks
  /// of `single_copy_min_bytes`.
  nonblocking_channel(MPI_Comm node_comm, std::size_t slot_bytes, std::uint32_t ring,
                      const wait_policy& policy, const cross_memory* single_copy = nullptr,
                      bool every_move = false, std::size_t single_copy_min_bytes = 64U << 10);

  [[nodiscard]] int rank() const { return m_rank; }
  [[nodiscard]] int size() const { return m_size; }
  [[nodiscard]] std::size_t slot_bytes() const { return m_slot_bytes; }
  [[nodiscard]] const wait_policy& policy() const { return m_policy; }
  /// The first of the `chunks` numbers of the next operation started on this rank.
  [[nodiscard]] std::uint32_t next_sequences(std::uint32_t chunks) {
    const std::uint32_t first = m_started + 1;
    m_started += chunks;
    return first;
  }
  [[nodiscard]] std::uint32_t ring() const { return m_ring; }
  /// The largest call the channel carries (nonblocking_largest_call), with a block per rank in
  /// each slot (alltoall, reduce_scatter_block) or not.
  [[nodiscard]] std::size_t largest_call(bool block_per_rank) const {
    return m_largest_call[block_per_rank ? 1 : 0];
  }

  /// How many chunks `call` takes (1 when it fits a slot): each is an operation of its own, with
  /// its own number and slot, over a part of every block (chunk j: bytes [j c, (j + 1) c) of each,
  /// c a whole number of lines and elements). Depends only on what every rank agrees on.
  [[nodiscard]] std::uint32_t chunks(const nonblocking_call& call) const;
  /// Chunk `index` of `call`, as a call of its own (its buffers offset into the call's, its
  /// blocks `block_stride(call)` apart).
  [[nodiscard]] nonblocking_call chunk(const nonblocking_call& call, std::uint32_t index) const;
  /// Makes the part of the slots that the next operation, `call`, will use ready for this rank
  /// (reserves that memory and fills this rank's page tables for every rank's slot of each of its
  /// chunks), before it is numbered; a no-op once every slot is ready. Throws system_error where
  /// memory is short. Not at construction, and not all at once: most communicators never start a
  /// nonblocking collective, allocating, mapping and freeing the slots was most of what building
  /// and freeing one cost (comm_churn.c), and a communicator that makes a few small calls would
  /// otherwise pay for the whole ring at its first (6 MiB at 2 ranks: 2.5-3.3 ms on the EPYC VM).
  void prepare(const nonblocking_call& call);

  /// Whether operation `sequence` may write its slot (every rank released sequence - ring).
  [[nodiscard]] bool slot_free(std::uint32_t sequence) const;
  /// Copies this rank's data into its slot and announces it. Only when slot_free.
  void contribute(std::uint32_t sequence, const nonblocking_call& call);
  /// Whether every rank whose data this rank needs has contributed.
  [[nodiscard]] bool ready(std::uint32_t sequence, const nonblocking_call& call) const;
  /// Reads the result and releases the slots (nonblocking_finish.cpp). Only when ready, in
  /// operation order. Returns MPI_SUCCESS, or an error class with `problem` set when the ranks'
  /// calls differ (an erroneous program); the slots are released either way so the others go on
  /// (a single-copy call's by complete).
  int finish(std::uint32_t sequence, const nonblocking_call& call, std::string& problem);
  /// Whether `call` moves its data by single copy (the top of this file): on every rank the same
  /// answer for the same call.
  [[nodiscard]] bool single_copy(const nonblocking_call& call) const;
  /// Whether calls of `kind` and `bytes` take single copy (alltoall: unless in place).
  [[nodiscard]] bool single_copy_applies(nonblocking_kind kind, std::size_t bytes) const;
  /// After finish: whether this rank's operation `sequence` may complete. A single-copy call
  /// completes once every block it owns or reads has moved (it pushes a block a started reader has
  /// not claimed, and pulls one whose owner's push failed), and then releases its slots; every
  /// other call at once. A failed pull sets `error` (an MPI error class) and `problem`, as finish.
  [[nodiscard]] bool complete(std::uint32_t sequence, const nonblocking_call& call, int& error,
                              std::string& problem);

 private:
  struct slot_header {
    std::atomic<std::uint32_t>
        sequence;        ///< the operation whose data the slot holds (published last)
    std::uint32_t info;  ///< kind << 24 | type << 16 | op << 8 | root
    std::uint64_t bytes;
  };
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
  /// Whether `rank` has contributed to operation `sequence` (its slot's header says so).
  [[nodiscard]] bool arrived(int rank, std::uint32_t sequence) const;
  [[nodiscard]] std::atomic<std::uint32_t>& released(int rank) const;
  /// The last split allreduce whose part `rank` has combined into its result area.
  [[nodiscard]] std::atomic<std::uint32_t>& reduced(int rank) const;
  [[nodiscard]] slot_header& header(int rank, std::uint32_t sequence) const;
  /// Where `rank`'s data for operation `sequence` lies in its slot (walks through the slot).
  [[nodiscard]] std::byte* payload(int rank, std::uint32_t sequence,
                                   const nonblocking_call& call) const;
  /// Where the data lies from the start of a slot (its header's line included).
  [[nodiscard]] std::size_t payload_offset(std::uint32_t sequence,
                                           const nonblocking_call& call) const;
  /// Makes the first `bytes` of every rank's slot of ring place `place` ready (prepare).
  void populate_place(std::uint32_t place, std::size_t bytes);
  [[nodiscard]] std::uint32_t info_of(const nonblocking_call& call) const;
  int check(int rank, std::uint32_t sequence, const nonblocking_call& call,
            std::string& problem) const;
  /// Whether contribute copies this rank's own block of the result (allgather, alltoall, gather's
  /// root): finish then copies the peers' blocks only.
  [[nodiscard]] bool copies_own_block_early(const nonblocking_call& call) const;
  /// Whether an alltoall's own block goes from send to recv directly, never into the slot (a
  /// well-formed call: a short contribution is padded with zeros in the slot instead).
  [[nodiscard]] bool sends_own_alltoall_block_directly(const nonblocking_call& call) const;
  /// Copies this rank's contribution into `into` (`span` bytes; a short one is padded with zeros).
  static void copy_contribution(std::byte* into, std::size_t span, const nonblocking_call& call,
                                std::size_t own_span);
  /// Combines `inputs` in rank order into call.recv (reductions' finish).
  void combine(int inputs, std::size_t block_offset, std::uint32_t sequence,
               const nonblocking_call& call);
  /// Whether an allreduce combines by parts (the comment at the top), and the elements of a part
  /// (a whole number of cache lines where the element divides a line).
  [[nodiscard]] bool splits_allreduce(const nonblocking_call& call) const;
  [[nodiscard]] std::size_t split_part_elements(const nonblocking_call& call) const;
  /// The largest chunk of `call`'s blocks, in bytes (a whole number of lines).
  [[nodiscard]] std::size_t chunk_capacity(const nonblocking_call& call) const;
  /// The bytes an operation uses in its slot (the walk places that span).
  [[nodiscard]] std::size_t slot_span(const nonblocking_call& call) const;
  /// finish of a split allreduce (nonblocking_finish.cpp).
  void finish_split_allreduce(std::uint32_t sequence, const nonblocking_call& call);
  /// contribute and finish of a single-copy call (nonblocking_single_copy.cpp).
  void contribute_single_copy(std::uint32_t sequence, const nonblocking_call& call);
  int finish_single_copy(std::uint32_t sequence, const nonblocking_call& call,
                         std::string& problem);
  /// Whether rank `peer` has released operation `sequence` (reads its word only when the value
  /// last seen does not show it).
  [[nodiscard]] bool released_by(int peer, std::uint32_t sequence) const;
  /// A single-copy call's block from `owner` to `reader`, moved by this rank (one of the two).
  /// Returns 0 or the errno of cross-memory attach.
  [[nodiscard]] int move_block(int owner, int reader, std::uint32_t sequence,
                               const nonblocking_call& call) const;
  /// Pulls `owner`'s block for this rank when its claim is still open (returns whether it did);
  /// a failure sets `result` and `problem` unless `result` holds one already.
  bool pull_block(int owner, std::uint32_t sequence, const nonblocking_call& call, int& result,
                  std::string& problem);
  /// complete() of a single-copy call.
  [[nodiscard]] bool single_copy_moved(std::uint32_t sequence, const nonblocking_call& call,
                                       int& result, std::string& problem);

  shm_segment m_segment;
  std::byte* m_base = nullptr;  ///< m_segment's memory: the layout below is fixed, so no checks
  int m_rank = 0;
  int m_size = 1;
  std::size_t m_slot_bytes = 0;
  /// Room past slot_bytes for a split allreduce's result part (a full slot's: slot_bytes / size).
  std::size_t m_result_room = 0;
  std::size_t m_slot_stride = 0;
  std::size_t m_slots_offset = 0;
  std::uint32_t m_ring = 4;
  wait_policy m_policy;
  std::size_t m_largest_call[2] = {0, 0};
  std::uint32_t m_started = 0;
  /// Per ring place: the bytes from the start of each rank's slot ready for this rank (prepare).
  /// The released words last read, per rank (slot_free reads a peer's line only when these do not
  /// show the slot free: released only grows).
  mutable std::vector<std::uint32_t> m_released_seen;
  std::vector<std::size_t> m_populated;
  std::uint32_t m_places_populated = 0;  ///< places whose whole slots are ready
  std::uint32_t m_places_at_least = 0;   ///< places with prepare's least (or all) ready
  std::vector<const void*> m_inputs;     ///< the reductions' inputs, one per rank (finish)
  std::vector<bool> m_parts_left;        ///< a split allreduce's parts not copied yet, per owner
  cross_memory m_cross;                  ///< empty where large moves keep two copies
  bool m_single_copy_every_move = false;
  std::size_t m_single_copy_min_bytes = 0;  ///< the smallest block single copy takes
  /// The single-copy operation whose open claims this rank, as their owner, first saw (complete),
  /// and when: it pushes only once a reader has left a block unclaimed that long.
  std::uint32_t m_grace_sequence = 0;
  bool m_grace_started = false;
  std::chrono::steady_clock::time_point m_grace_start;
};

/// The most ranks single copy serves: a claim word per reader fits the owner's header line.
inline constexpr int nonblocking_single_copy_max_ranks = 6;

/// Whether a channel on a node of this shape should move large calls by single copy: 2 ranks on
/// their own cores (the blocking single-copy algorithms' rule, selection.hpp). Oversubscribed, a
/// rank's copies cost the core its peer would run on; with more readers they contend for the
/// owner's page tables (unmeasured here).
[[nodiscard]] constexpr bool nonblocking_single_copy_wanted(int node_size, bool oversubscribed) {
  return node_size == 2 && !oversubscribed;
}

class comm_impl;

/// The channel of `impl`'s comm, collectively over its node communicator, with single copy where
/// CACHECOMM_NONBLOCKING_SINGLE_COPY and the node's shape want it.
[[nodiscard]] std::shared_ptr<nonblocking_channel> make_nonblocking_channel(
    comm_impl& impl, std::size_t slot_bytes, std::uint32_t ring, const wait_policy& policy);

}  // namespace cachecomm::detail
