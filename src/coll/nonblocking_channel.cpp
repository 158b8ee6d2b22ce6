#include "coll/nonblocking_channel.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_settings.hpp"
#include "shm/cache_line.hpp"
#include "shm/memory_copy.hpp"
#include "sync/waiter.hpp"

namespace cachecomm::detail {

namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return rank;
}

int size_of_comm(MPI_Comm comm) {
  int size = 1;
  PMPI_Comm_size(comm, &size);
  return size;
}

// Each rank's two words on lines of their own: released, reduced (arrival is in the slot headers).
constexpr std::size_t words_per_rank = 2;

// Up to this much data sits on its slot header's line (payload_offset).
constexpr std::size_t inline_payload_bytes = cache_line_size - 16;

/// Split allreduces from 2 ranks, with parts of at least 8 KiB. Measured at 2 ranks (OSU's
/// iallreduce, Zen 5 VM): 1.1-1.5x faster from 16 KiB (both ranks combine half), slower at 4-8
/// KiB, where the owners' flags and the extra copy cost what the halved combining saves. 4 ranks on
/// 2 cores: 7% slower at 32 KiB, 7-17% faster from 64 KiB.
constexpr int split_allreduce_from_ranks = 2;
constexpr std::size_t split_allreduce_part_bytes = 8192;

std::size_t result_room_of(std::size_t slot_bytes, int ranks) {
  if (ranks < split_allreduce_from_ranks) return 0;
  return padded_to_line(slot_bytes / static_cast<std::size_t>(ranks) + 2 * cache_line_size);
}

std::size_t segment_bytes(int ranks, std::uint32_t ring, std::size_t slots_offset,
                          std::size_t stride) {
  return slots_offset + static_cast<std::size_t>(ring) * static_cast<std::size_t>(ranks) * stride;
}

}  // namespace

nonblocking_channel::nonblocking_channel(MPI_Comm node_comm, std::size_t slot_bytes,
                                         std::uint32_t ring, const wait_policy& policy,
                                         const cross_memory* single_copy, bool every_move,
                                         std::size_t single_copy_min_bytes)
    : m_rank(rank_of(node_comm)),
      m_size(size_of_comm(node_comm)),
      m_slot_bytes(slot_bytes),
      m_result_room(result_room_of(slot_bytes, m_size)),
      m_slot_stride(padded_to_line(cache_line_size + slot_bytes + m_result_room)),
      m_slots_offset(static_cast<std::size_t>(m_size) * words_per_rank * cache_line_size),
      m_ring(ring),
      m_policy(policy) {
  // Only the sequence words are ready at once; the slots at this rank's first operation.
  m_segment = shm_segment(node_comm, segment_bytes(m_size, m_ring, m_slots_offset, m_slot_stride),
                          {}, {.leading_bytes = m_slots_offset});
  m_base = static_cast<std::byte*>(m_segment.data());
  m_populated.assign(m_ring, 0);
  for (const bool block_per_rank : {false, true}) {
    m_largest_call[block_per_rank ? 1 : 0] =
        nonblocking_largest_call(m_slot_bytes, m_ring, m_size, block_per_rank);
  }
  m_released_seen.assign(static_cast<std::size_t>(m_size), 0);
  m_inputs.resize(static_cast<std::size_t>(m_size));
  m_parts_left.resize(static_cast<std::size_t>(m_size));
  // Single copy needs both directions (a reader pulls, an owner pushes) and a claim word per reader
  // on the owner's header line (nonblocking_single_copy.cpp).
  if (single_copy != nullptr && single_copy->can_read() && single_copy->can_write() && m_size > 1 &&
      m_size <= nonblocking_single_copy_max_ranks)
    m_cross = *single_copy;
  m_single_copy_every_move = every_move;
  m_single_copy_min_bytes = single_copy_min_bytes;
}

namespace {
/// prepare's unit: at least this much of a slot at a time, so a run of small calls makes one
/// system call per place.
constexpr std::size_t least_populated_bytes = std::size_t{16} << 10;
}  // namespace

void nonblocking_channel::prepare(const nonblocking_call& call) {
  if (m_places_populated == m_ring) return;
  // The start of a small call, once every place has its least (the hot path of programs that
  // only make small calls, which never fill the slots): its data does not walk through the slot,
  // so header and data fit the least.
  static_assert(cache_line_size + nonblocking_walk_min_span <= least_populated_bytes);
  const std::size_t blocks = contributes_per_rank(call.kind) ? static_cast<std::size_t>(m_size) : 1;
  if (m_places_at_least == m_ring && call.bytes * blocks < nonblocking_walk_min_span) return;
  // The numbers the call will take (next_sequences); each chunk's slot span at its place.
  const std::uint32_t count = chunks(call);
  const std::uint32_t first = m_started + 1;
  for (std::uint32_t index = 0; index < count; ++index) {
    const std::uint32_t sequence = first + index;
    const nonblocking_call part = count == 1 ? call : chunk(call, index);
    populate_place(sequence % m_ring, payload_offset(sequence, part) + slot_span(part));
  }
}

void nonblocking_channel::populate_place(std::uint32_t place, std::size_t bytes) {
  std::size_t& ready = m_populated[place];
  if (bytes <= ready) return;
  // The least, or the whole place: beyond the least a call is large or walks through its slot
  // (nonblocking_payload_offset), and its successors at this place will want the rest.
  const std::size_t wanted = bytes <= least_populated_bytes ? least_populated_bytes : m_slot_stride;
  // Every rank's slot of this place, not only this rank's: it reads the peers' (and scatter's
  // root writes them), and each process fills its own page tables. Each page is allocated once,
  // by whichever rank comes first; populating keeps what a peer may be writing there already.
  for (int rank = 0; rank < m_size; ++rank) {
    const std::size_t slot = static_cast<std::size_t>(place) * static_cast<std::size_t>(m_size) +
                             static_cast<std::size_t>(rank);
    const std::size_t offset = m_slots_offset + slot * m_slot_stride + ready;
    if (const int error = m_segment.populate(offset, wanted - ready); error != 0) {
      throw system_error("cachecomm: reserving " + std::to_string(wanted - ready) +
                             " bytes of a slot of a communicator's nonblocking collectives",
                         error);
    }
  }
  if (ready == 0) ++m_places_at_least;
  ready = wanted;
  if (ready == m_slot_stride) ++m_places_populated;
}

bool nonblocking_channel::arrived(int rank, std::uint32_t sequence) const {
  return header(rank, sequence).sequence.load(std::memory_order_acquire) == sequence;
}

std::atomic<std::uint32_t>& nonblocking_channel::released(int rank) const {
  const std::size_t offset = static_cast<std::size_t>(rank) * words_per_rank * cache_line_size;
  return reinterpret_cast<padded_flag*>(m_base + offset)->value;
}

std::atomic<std::uint32_t>& nonblocking_channel::reduced(int rank) const {
  const std::size_t offset =
      (static_cast<std::size_t>(rank) * words_per_rank + 1) * cache_line_size;
  return reinterpret_cast<padded_flag*>(m_base + offset)->value;
}

bool nonblocking_channel::splits_allreduce(const nonblocking_call& call) const {
  if (call.kind != nonblocking_kind::allreduce || m_size < split_allreduce_from_ranks ||
      call.bytes != call.own_bytes ||
      call.bytes < static_cast<std::size_t>(m_size) * split_allreduce_part_bytes)
    return false;
  return padded_to_line(call.bytes) + split_part_elements(call) * size_of(call.type) <=
         m_slot_bytes + m_result_room;
}

std::size_t nonblocking_channel::split_part_elements(const nonblocking_call& call) const {
  const std::size_t element = size_of(call.type);
  const std::size_t per_line = cache_line_size % element == 0 ? cache_line_size / element : 1;
  const auto ranks = static_cast<std::size_t>(m_size);
  const std::size_t even = (call.count + ranks - 1) / ranks;
  return (even + per_line - 1) / per_line * per_line;
}

std::size_t nonblocking_channel::chunk_capacity(const nonblocking_call& call) const {
  return nonblocking_chunk_capacity(m_slot_bytes, m_size, contributes_per_rank(call.kind));
}

std::uint32_t nonblocking_channel::chunks(const nonblocking_call& call) const {
  const std::size_t capacity = chunk_capacity(call);
  if (call.kind == nonblocking_kind::barrier || call.bytes <= capacity || single_copy(call))
    return 1;
  return static_cast<std::uint32_t>((call.bytes + capacity - 1) / capacity);
}

nonblocking_call nonblocking_channel::chunk(const nonblocking_call& call,
                                            std::uint32_t index) const {
  const std::uint32_t count = chunks(call);
  if (count == 1) return call;
  // Even chunks of whole lines (every element size divides a line), the last one shorter.
  const std::size_t even = (call.bytes + count - 1) / count;
  const std::size_t length = padded_to_line(even);
  const std::size_t first = std::min(call.bytes, static_cast<std::size_t>(index) * length);
  const std::size_t bytes = std::min(call.bytes, first + length) - first;
  nonblocking_call part = call;
  part.stride = block_stride(call);
  part.bytes = bytes;
  // This rank's own block: as long as the call's, or a marker that differs (the peers report the
  // mismatch) without reading past a short block.
  if (call.own_bytes == call.bytes)
    part.own_bytes = bytes;
  else if (call.own_bytes > call.bytes || contributes_per_rank(call.kind))
    part.own_bytes = bytes + 1;  // per-rank kinds: zeros go in (contribute)
  else
    part.own_bytes = call.own_bytes > first ? std::min(bytes, call.own_bytes - first) : 0;
  const std::size_t element = call.count > 0 ? call.bytes / call.count : 1;
  if (call.count > 0) part.count = bytes / element;
  if (call.send != nullptr) part.send = static_cast<const std::byte*>(call.send) + first;
  if (call.recv != nullptr) part.recv = static_cast<std::byte*>(call.recv) + first;
  return part;
}

std::size_t nonblocking_channel::slot_span(const nonblocking_call& call) const {
  // Single copy: the buffers' addresses and the claims, on the header's line.
  if (single_copy(call)) return inline_payload_bytes;
  if (contributes_per_rank(call.kind)) return static_cast<std::size_t>(m_size) * call.bytes;
  // A split allreduce: the input, then the result part.
  if (splits_allreduce(call))
    return padded_to_line(call.bytes) + split_part_elements(call) * size_of(call.type);
  return call.bytes;
}

nonblocking_channel::slot_header& nonblocking_channel::header(int rank,
                                                              std::uint32_t sequence) const {
  const std::size_t slot =
      static_cast<std::size_t>(sequence % m_ring) * static_cast<std::size_t>(m_size) +
      static_cast<std::size_t>(rank);
  return *reinterpret_cast<slot_header*>(m_base + m_slots_offset + slot * m_slot_stride);
}

std::size_t nonblocking_channel::payload_offset(std::uint32_t sequence,
                                                const nonblocking_call& call) const {
  // Small data on the header's line; not two-copy scatter's, which its root writes into the
  // others' slots while each writes its own header.
  static_assert(sizeof(slot_header) + inline_payload_bytes == cache_line_size);
  if ((call.kind != nonblocking_kind::scatter || single_copy(call)) &&
      slot_span(call) <= inline_payload_bytes)
    return sizeof(slot_header);
  const bool every_rank_reads_every_slot =
      call.kind == nonblocking_kind::allgather || call.kind == nonblocking_kind::allreduce;
  return cache_line_size + nonblocking_payload_offset(sequence, m_ring, slot_span(call),
                                                      m_slot_bytes, every_rank_reads_every_slot);
}

std::byte* nonblocking_channel::payload(int rank, std::uint32_t sequence,
                                        const nonblocking_call& call) const {
  return reinterpret_cast<std::byte*>(&header(rank, sequence)) + payload_offset(sequence, call);
}

std::uint32_t nonblocking_channel::info_of(const nonblocking_call& call) const {
  const bool reduction =
      call.kind == nonblocking_kind::reduce || call.kind == nonblocking_kind::allreduce ||
      call.kind == nonblocking_kind::reduce_scatter_block || call.kind == nonblocking_kind::scan ||
      call.kind == nonblocking_kind::exscan;
  const bool rooted =
      call.kind == nonblocking_kind::reduce || call.kind == nonblocking_kind::bcast ||
      call.kind == nonblocking_kind::gather || call.kind == nonblocking_kind::scatter;
  std::uint32_t info = static_cast<std::uint32_t>(call.kind) << 24U;
  if (reduction) {
    info |= (static_cast<std::uint32_t>(call.type) & 0xffU) << 16U;
    info |= (static_cast<std::uint32_t>(call.op) & 0xffU) << 8U;
  }
  if (rooted) info |= static_cast<std::uint32_t>(call.root) & 0xffU;
  // Never a reduction: a rank that took the other way (an erroneous program) is reported, not read.
  if (single_copy(call)) info |= 1U << 16U;
  return info;
}

bool nonblocking_channel::released_by(int peer, std::uint32_t sequence) const {
  std::uint32_t& seen = m_released_seen[static_cast<std::size_t>(peer)];
  if (sequence_reached(seen, sequence)) return true;
  seen = released(peer).load(std::memory_order_acquire);
  return sequence_reached(seen, sequence);
}

bool nonblocking_channel::slot_free(std::uint32_t sequence) const {
  const std::uint32_t previous = sequence - m_ring;
  for (int rank = 0; rank < m_size; ++rank) {
    if (!released_by(rank, previous)) return false;
  }
  return true;
}

void nonblocking_channel::copy_contribution(std::byte* into, std::size_t span,
                                            const nonblocking_call& call, std::size_t own_span) {
  if (call.send == nullptr) {
    std::memset(into, 0, span);
    return;
  }
  const std::size_t copied = std::min(own_span, span);
  copy_memory(into, call.send, copied);
  // A short contribution (erroneous program) leaves no stale bytes behind.
  if (copied < span) std::memset(into + copied, 0, span - copied);
}

void nonblocking_channel::contribute(std::uint32_t sequence, const nonblocking_call& call) {
  if (single_copy(call)) return contribute_single_copy(sequence, call);
  const auto ranks = static_cast<std::size_t>(m_size);
  switch (call.kind) {
    case nonblocking_kind::barrier: break;
    case nonblocking_kind::bcast:
      if (call.root == m_rank)
        copy_contribution(payload(m_rank, sequence, call), call.bytes, call, call.bytes);
      break;
    case nonblocking_kind::scatter:
      // The root puts block r straight into rank r's slot: a block per slot, as gather's.
      if (call.root == m_rank && call.send != nullptr) {
        for (int rank = 0; rank < m_size; ++rank) {
          copy_memory(payload(rank, sequence, call),
                      static_cast<const std::byte*>(call.send) +
                          static_cast<std::size_t>(rank) * block_stride(call),
                      call.bytes);
        }
      }
      break;
    case nonblocking_kind::alltoall:
    case nonblocking_kind::reduce_scatter_block: {
      std::byte* slot = payload(m_rank, sequence, call);
      if (call.send == nullptr || call.own_bytes != call.bytes) {
        // A block of another size (an erroneous program): zeros go in, and the peers report it.
        std::memset(slot, 0, ranks * call.bytes);
        break;
      }
      // The send buffer's blocks, back to back; alltoall's own block goes from send to recv
      // directly (below), never into the slot.
      const bool skip_own = sends_own_alltoall_block_directly(call);
      const auto* send = static_cast<const std::byte*>(call.send);
      if (block_stride(call) == call.bytes && !skip_own) {
        copy_memory(slot, send, ranks * call.bytes);
        break;
      }
      for (int rank = 0; rank < m_size; ++rank) {
        if (skip_own && rank == m_rank) continue;
        copy_memory(slot + static_cast<std::size_t>(rank) * call.bytes,
                    send + static_cast<std::size_t>(rank) * block_stride(call), call.bytes);
      }
      break;
    }
    case nonblocking_kind::reduce:
    case nonblocking_kind::allreduce:
    case nonblocking_kind::allgather:
    case nonblocking_kind::gather:
    case nonblocking_kind::scan:
    case nonblocking_kind::exscan:
      copy_contribution(payload(m_rank, sequence, call), call.bytes, call, call.own_bytes);
      break;
  }
  slot_header& own = header(m_rank, sequence);
  own.info = info_of(call);
  own.bytes = call.own_bytes;
  own.sequence.store(sequence, std::memory_order_release);
  // A gathered result's own block now, from the slot still in this core's cache: the peers wait
  // for `arrived`, not for this copy, and finish is left with theirs only (the blocking engine's
  // central allgather does the same). Alltoall's own block is the one it sends itself.
  if (copies_own_block_early(call)) {
    const std::size_t own = static_cast<std::size_t>(m_rank) * block_stride(call);
    std::byte* into = static_cast<std::byte*>(call.recv) + own;
    const std::byte* from = payload(m_rank, sequence, call);
    if (call.kind == nonblocking_kind::alltoall) {
      from = sends_own_alltoall_block_directly(call)
                 ? static_cast<const std::byte*>(call.send) + own
                 : from + static_cast<std::size_t>(m_rank) * call.bytes;
    }
    if (into != from && into != call.send) copy_memory(into, from, call.bytes);
  }
}

bool nonblocking_channel::sends_own_alltoall_block_directly(const nonblocking_call& call) const {
  return call.send != nullptr && call.recv != nullptr && call.own_bytes == call.bytes &&
         call.kind == nonblocking_kind::alltoall;
}

bool nonblocking_channel::copies_own_block_early(const nonblocking_call& call) const {
  return call.recv != nullptr &&
         (call.kind == nonblocking_kind::allgather || call.kind == nonblocking_kind::alltoall ||
          (call.kind == nonblocking_kind::gather && call.root == m_rank));
}

bool nonblocking_channel::ready(std::uint32_t sequence, const nonblocking_call& call) const {
  auto arrived_below = [&](int end) {
    for (int rank = 0; rank < end; ++rank) {
      if (!arrived(rank, sequence)) return false;
    }
    return true;
  };
  switch (call.kind) {
    case nonblocking_kind::bcast:
    case nonblocking_kind::scatter: return call.root == m_rank || arrived(call.root, sequence);
    case nonblocking_kind::reduce:
    case nonblocking_kind::gather:
      // A contributor's data went into its slot: it has nothing to wait for.
      return call.root != m_rank || arrived_below(m_size);
    case nonblocking_kind::scan: return arrived_below(m_rank + 1);
    case nonblocking_kind::exscan: return arrived_below(m_rank);
    case nonblocking_kind::barrier:
    case nonblocking_kind::allreduce:
    case nonblocking_kind::allgather:
    case nonblocking_kind::alltoall:
    case nonblocking_kind::reduce_scatter_block: return arrived_below(m_size);
  }
  return false;
}

int nonblocking_channel::check(int rank, std::uint32_t sequence, const nonblocking_call& call,
                               std::string& problem) const {
  const slot_header& seen = header(rank, sequence);
  // After ready: the acquire there saw `sequence`, so the rest of the header is this operation's.
  if (seen.sequence.load(std::memory_order_relaxed) == sequence && seen.info == info_of(call) &&
      seen.bytes == call.bytes)
    return MPI_SUCCESS;
  problem = "rank " + std::to_string(rank) + " of the communicator called nonblocking collective " +
            std::to_string(sequence) + " with " + std::to_string(seen.bytes) +
            " bytes (call code " + std::to_string(seen.info) + ") where this rank has " +
            std::to_string(call.bytes) + " bytes (call code " + std::to_string(info_of(call)) +
            "): the ranks made different calls";
  return seen.bytes != call.bytes ? MPI_ERR_TRUNCATE : MPI_ERR_OTHER;
}

}  // namespace cachecomm::detail
