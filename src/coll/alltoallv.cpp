// Alltoallv on one node. In the call's first step every rank posts in its slot its send count for
// every rank and either its blocks for the others, when they fit beside the counts, or its buffer's
// address and send displacements. Up to 13 ranks that header lies in the 256-byte slot (one cache
// line for a few bytes at 2 ranks), and blocks that do not fit there in the rank's 4 KiB slot of
// the same step. Every rank reads every slot, so all ranks know every count and take the same path
// for the blocks that did not fit: with single copy each rank pulls them from their owners' buffers
// in one more step (the owners wait for their readers); otherwise they go through the data region,
// one chunk per pair of ranks and step, as many steps as the largest of them needs. The automatic
// choice is taken there too, from the largest block that did not fit (the same on every rank):
// the rules, the tuning file or online selection, which may hand the whole call to the system MPI
// (in_call_planner). A rank that receives from a rank another count than that rank sends it
// takes the smaller part and fails after the call, naming both (as MPI reports a truncation at the
// receiver); the other ranks are not affected.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/mismatch_error.hpp"
#include "coll/shared_copy.hpp"
#include "coll/tuning_table.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

namespace {

// A rank's header: where its blocks are, its send count per rank, then (blocks in a slot) the
// blocks for the other ranks in rank order, or (blocks in its buffer) the buffer's address and its
// send offsets per rank.
enum class blocks_at : std::uint64_t { header_slot = 1, large_slot = 2, buffer = 3 };
/// Beside the place in a header's first word: the rank can hand the call to the system MPI.
constexpr std::uint64_t system_possible_bit = std::uint64_t{1} << 8;

std::size_t counts_bytes(std::size_t ranks) {
  return (1 + ranks) * 8;
}
std::size_t largest_header_bytes(std::size_t ranks) {
  return (2 + 2 * ranks) * 8;
}

std::uint64_t word(const std::byte* slot, std::size_t index) {
  std::uint64_t value = 0;
  copy_memory(&value, slot + index * 8, 8);
  return value;
}
void put_word(std::byte* slot, std::size_t index, std::uint64_t value) {
  copy_memory(slot + index * 8, &value, 8);
}

}  // namespace

std::size_t coll_engine::alltoallv_inline_bytes() const {
  // The header in the small slot (when it fits there) leaves the whole 4 KiB slot to the blocks.
  const auto size = static_cast<std::size_t>(m_size);
  if (largest_header_bytes(size) <= small_slot_payload) return slot_payload;
  return slot_payload - counts_bytes(size);
}

void coll_engine::alltoallv(const exchange_call& call, alltoallv_algorithm algorithm) {
  const alltoallv_entry& entry = entry_of(algorithm);  // refuses `automatic` first
  if (alltoallv_alone(call)) return;
  begin_call(call_kind::alltoallv, 0, datatype::byte, 0xffU);
  entry.run(*this, call);
}

void coll_engine::alltoallv(const exchange_call& call, in_call_planner& planner) {
  if (alltoallv_alone(call)) return;
  begin_call(call_kind::alltoallv, 0, datatype::byte, 0xffU);
  const alltoallv_counts counts = alltoallv_counts_step(call, planner.system_possible());
  if (counts.largest_outside != 0) {
    const std::int8_t choice = planner.choose(counts.largest_outside, counts.system_possible);
    if (choice == tuning_choices::system_mpi) {
      alltoallv_system_call(call, counts, planner);
    } else if (choice == static_cast<std::int8_t>(alltoallv_algorithm::single_copy) &&
               single_copy_available()) {
      alltoallv_pull_step(call, counts);
    } else {
      alltoallv_region_steps(call, counts);
    }
  }
  alltoallv_report(call, counts);
}

void coll_engine::alltoallv(const exchange_call& call, bool pull) {
  const alltoallv_counts counts = alltoallv_counts_step(call, false);
  if (counts.largest_outside != 0) {
    if (pull) {
      alltoallv_pull_step(call, counts);
    } else {
      alltoallv_region_steps(call, counts);
    }
  }
  alltoallv_report(call, counts);
}

bool coll_engine::alltoallv_alone(const exchange_call& call) {
  if (m_size == 1) {
    const std::size_t n = std::min(call.send_bytes[0], call.receive_bytes[0]);
    const auto* from = static_cast<const std::byte*>(call.input) + call.send_offsets[0];
    auto* to = static_cast<std::byte*>(call.output) + call.receive_offsets[0];
    if (n != 0 && from != to) copy_memory(to, from, n);
    if (call.send_bytes[0] != call.receive_bytes[0]) {
      throw mismatch_error("cachecomm: alltoallv: this rank sends itself " +
                               std::to_string(call.send_bytes[0]) + " bytes but receives " +
                               std::to_string(call.receive_bytes[0]) + " from itself",
                           mismatch_error::field::size);
    }
    return true;
  }
  if (largest_header_bytes(static_cast<std::size_t>(m_size)) > slot_payload) {
    throw unsupported_error("cachecomm: alltoallv: more than " +
                            std::to_string(slot_payload / 16 - 1) +
                            " ranks on one node (a rank's counts must fit in one slot)");
  }
  return false;
}

coll_engine::alltoallv_counts coll_engine::alltoallv_counts_step(const exchange_call& call,
                                                                 bool system_possible) {
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const auto* in = static_cast<const std::byte*>(call.input);
  auto* out = static_cast<std::byte*>(call.output);
  // Every rank's header in the same kind of slot (from the rank count alone).
  const std::size_t header_slot =
      largest_header_bytes(size) <= small_slot_payload ? small_slot_payload : slot_payload;
  const std::size_t counts = counts_bytes(size);
  std::size_t outgoing = 0;  // bytes to the other ranks
  for (std::size_t r = 0; r < size; ++r) {
    if (r != me) outgoing += call.send_bytes[r];
  }
  auto own_place = blocks_at::buffer;
  // Blocks beside the counts in the 256-byte slot only while all fits in its first cache line:
  // measured at 2 ranks (osu_alltoallv preloaded), 128 B there took 0.70 us against 0.50 in the
  // 4 KiB slot; 8-64 B took the same either way.
  const std::size_t header_room =
      header_slot == small_slot_payload ? cache_line_size - slot_header_bytes : header_slot;
  if (counts + outgoing <= header_room) {
    own_place = blocks_at::header_slot;
  } else if (outgoing <= alltoallv_inline_bytes()) {
    own_place = blocks_at::large_slot;
  }

  const std::uint32_t step = begin_step();
  ensure_free(step, slot_depth(own_place == blocks_at::large_slot ? slot_payload : header_slot));
  std::byte* header = slot_data(m_rank, step, header_slot);
  put_word(header, 0,
           static_cast<std::uint64_t>(own_place) | (system_possible ? system_possible_bit : 0));
  copy_memory(header + 8, call.send_bytes, size * 8);
  if (own_place == blocks_at::buffer) {
    put_word(header, 1 + size, reinterpret_cast<std::uintptr_t>(in));
    copy_memory(header + counts + 8, call.send_offsets, size * 8);
  } else {
    std::byte* at = own_place == blocks_at::header_slot ? header + counts
                                                        : slot_data(m_rank, step, slot_payload);
    for (std::size_t r = 0; r < size; ++r) {
      if (r == me || call.send_bytes[r] == 0) continue;
      copy_memory(at, in + call.send_offsets[r], call.send_bytes[r]);
      at += call.send_bytes[r];
    }
  }
  post_slot(step, header_slot);  // publishes the 4 KiB slot's blocks too (written before)

  alltoallv_counts result;
  result.own_inline = own_place != blocks_at::buffer;
  result.system_possible = system_possible;
  auto taken_from = [&](std::size_t rank, std::size_t sent) {
    if (sent != call.receive_bytes[rank] && result.disagreeing < 0) {
      result.disagreeing = static_cast<int>(rank);
      result.disagreeing_sent = sent;
    }
    return std::min(sent, call.receive_bytes[rank]);
  };
  const std::size_t own = taken_from(me, call.send_bytes[me]);
  if (own != 0 && in + call.send_offsets[me] != out + call.receive_offsets[me])
    copy_memory(out + call.receive_offsets[me], in + call.send_offsets[me], own);

  // Every header: the blocks meant for this rank that came in a slot, and the largest block that
  // did not (the same on every rank: all read all counts).
  std::size_t& largest_outside = result.largest_outside;
  for (std::size_t distance = 1; distance < size; ++distance) {
    const std::size_t rank = (me + distance) % size;
    wait_slot(static_cast<int>(rank), step, header_slot, "alltoallv (a rank's slot)");
    const std::byte* slot = slot_data(static_cast<int>(rank), step, header_slot);
    const std::uint64_t first = word(slot, 0);
    const auto place = static_cast<blocks_at>(first & ~system_possible_bit);
    result.system_possible = result.system_possible && (first & system_possible_bit) != 0;
    const std::size_t sent = word(slot, 1 + me);
    const std::size_t taken = taken_from(rank, sent);
    std::uint64_t* peer = m_peer_words.data() + rank * peer_words;
    peer[0] = sent;
    peer[1] = place == blocks_at::buffer ? 0 : 1;
    if (place == blocks_at::buffer) {
      peer[2] = word(slot, 1 + size) + word(slot, 2 + size + me);
      for (std::size_t r = 0; r < size; ++r)
        if (r != rank) largest_outside = std::max<std::size_t>(largest_outside, word(slot, 1 + r));
    } else if (taken != 0) {
      const std::byte* blocks = place == blocks_at::header_slot
                                    ? slot + counts
                                    : slot_data(static_cast<int>(rank), step, slot_payload);
      std::size_t at = 0;
      for (std::size_t r = 0; r < me; ++r)
        if (r != rank) at += word(slot, 1 + r);
      copy_memory(out + call.receive_offsets[rank], blocks + at, taken);
    }
  }
  if (!result.own_inline) {
    for (std::size_t r = 0; r < size; ++r)
      if (r != me) largest_outside = std::max(largest_outside, call.send_bytes[r]);
  }
  finish_step(step);
  return result;
}

void coll_engine::alltoallv_system_call(const exchange_call& call, const alltoallv_counts& counts,
                                        in_call_planner& planner) {
  if (counts.disagreeing < 0) {
    planner.system_call(nullptr);
    return;
  }
  // MPI's call must receive what the others send (a shorter receive count is a truncation error
  // there): the counts every header gave this rank.
  const auto size = static_cast<std::size_t>(m_size);
  std::vector<std::size_t> incoming(size);
  for (std::size_t r = 0; r < size; ++r) {
    incoming[r] =
        r == static_cast<std::size_t>(m_rank) ? call.send_bytes[r] : m_peer_words[r * peer_words];
  }
  planner.system_call(incoming.data());
}

void coll_engine::alltoallv_pull_step(const exchange_call& call, const alltoallv_counts& counts) {
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  // One more step: a rank whose blocks left its slot returns only once every rank has finished
  // it, so its buffer is read while the caller still owns the call. The addresses came in the
  // counts step, whose slots no rank rewrites before this step is finished.
  const std::uint32_t step = begin_step();
  int error_number = 0;
  int failed_rank = -1;
  // Start at the next rank: each buffer is read by one rank at a time, not by all at once.
  for (std::size_t distance = 1; distance < size && error_number == 0; ++distance) {
    const std::size_t rank = (me + distance) % size;
    const std::uint64_t* peer = m_peer_words.data() + rank * peer_words;
    const std::size_t taken = std::min<std::size_t>(peer[0], call.receive_bytes[rank]);
    if (peer[1] != 0 || taken == 0) continue;
    error_number = m_cross->copy_from(
        static_cast<int>(rank), static_cast<std::byte*>(call.output) + call.receive_offsets[rank],
        peer[2], taken);
    if (error_number != 0) failed_rank = static_cast<int>(rank);
  }
  finish_step(step);
  if (!counts.own_inline) wait_readers(step, "alltoallv (a rank pulling its blocks)");
  if (error_number != 0) {
    throw cross_memory_failure("single-copy alltoallv", false, failed_rank, error_number);
  }
}

void coll_engine::alltoallv_region_steps(const exchange_call& call,
                                         const alltoallv_counts& counts) {
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const auto* in = static_cast<const std::byte*>(call.input);
  auto* out = static_cast<std::byte*>(call.output);
  // Every rank takes these steps; a rank whose blocks were not inline owns an area of each region
  // half with a chunk per destination (destination_chunks), rotating through the half
  // (region_ring). largest_outside is the same on every rank, and so is the layout.
  const std::size_t chunk = fitted_chunk(
      std::max<std::size_t>(1, m_tuning.region_bytes / (size * size)), counts.largest_outside);
  const destination_chunks chunks{chunk, counts.largest_outside <= chunk};
  const region_ring ring = region_ring_of(chunks.per_area(size));
  ring_stores stores(*this, counts.largest_outside);
  for (std::size_t offset = 0; offset < counts.largest_outside; offset += chunk) {
    const std::uint32_t data_step = begin_step();
    if (!counts.own_inline) {
      ensure_free(data_step, 2);
      std::byte* mine = ring_area(ring, me, data_step);
      for (std::size_t r = 0; r < size; ++r) {
        if (r == me || call.send_bytes[r] <= offset) continue;
        stores.copy(mine + chunks.offset(r, me), in + call.send_offsets[r] + offset,
                    std::min(chunk, call.send_bytes[r] - offset));
      }
      post_region(data_step);
    }
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      const std::uint64_t* peer = m_peer_words.data() + rank * peer_words;
      if (peer[1] != 0 || peer[0] <= offset) continue;
      wait_region(static_cast<int>(rank), data_step, "alltoallv (a rank's blocks)");
      const std::size_t taken = std::min<std::size_t>(peer[0], call.receive_bytes[rank]);
      if (taken > offset) {
        copy_memory(out + call.receive_offsets[rank] + offset,
                    ring_area(ring, rank, data_step) + chunks.offset(me, rank),
                    std::min(chunk, taken - offset));
      }
    }
    finish_step(data_step);
  }
  stores.finish();
}

void coll_engine::alltoallv_report(const exchange_call& call,
                                   const alltoallv_counts& counts) const {
  if (counts.disagreeing < 0) return;
  const auto me = static_cast<std::size_t>(m_rank);
  const std::string who = static_cast<std::size_t>(counts.disagreeing) == me
                              ? "this rank (node rank " + std::to_string(me) + ") sends itself "
                              : "node rank " + std::to_string(counts.disagreeing) +
                                    " sends this rank (node rank " + std::to_string(me) + ") ";
  throw mismatch_error(
      "cachecomm: alltoallv: " + who + std::to_string(counts.disagreeing_sent) +
          " bytes, but this rank's receive count for it is " +
          std::to_string(call.receive_bytes[static_cast<std::size_t>(counts.disagreeing)]) +
          " bytes",
      mismatch_error::field::size);
}

}  // namespace cachecomm::detail
