// Gatherv on one node. Only the root knows every rank's count, so the call opens with one step in
// the 4 KiB slots that every rank takes: the root posts the largest count and every count, each
// other rank posts its own count, the address of its block and, up to 4064 bytes, the block
// itself. Each side compares its count with the other's, so a disagreement is known to both
// before any larger block moves, and every rank then takes the same further steps (the comm stays
// usable; the mismatch is thrown at the end, on the rank and on the root). Blocks larger than a
// slot follow through the data region (central), or, from 64 KiB, the root pulls them from their
// owners' buffers in that first step (single copy).
#include <algorithm>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/mismatch_error.hpp"
#include "coll/shared_copy.hpp"

namespace cachecomm::detail {

namespace {

/// A non-root's first slot: its count, its block's address, then the block if it fits.
constexpr std::size_t header_words = 2;
constexpr std::size_t inline_bytes = coll_engine::slot_payload - header_words * 8;

std::uint64_t word(const std::byte* slot, std::size_t index) {
  std::uint64_t value = 0;
  std::memcpy(&value, slot + index * 8, 8);
  return value;
}
void put_word(std::byte* slot, std::size_t index, std::uint64_t value) {
  std::memcpy(slot + index * 8, &value, 8);
}

/// Single copy pulls blocks from this size (the root's slot says which ones: every rank knows every
/// count from it); smaller ones that miss the slot go through the region, where a pull's system
/// call costs more than the copy it saves (2 ranks, 4 KiB blocks: 2.6 us against 1.8 through the
/// region, hot; at 64 KiB they tie).
constexpr std::size_t pull_min_bytes = 64U << 10;

/// The bytes a rank's block moves outside the first slot (0: it went in the slot, or the two sides
/// disagree about whether it does).
std::size_t large_part(std::size_t sent, std::size_t expected) {
  return sent > inline_bytes && expected > inline_bytes ? std::min(sent, expected) : 0;
}

}  // namespace

void coll_engine::gatherv(const vector_call& call, gatherv_algorithm algorithm) {
  const gatherv_entry& entry = entry_of(algorithm);  // refuses `automatic` first
  if (m_size == 1) {
    const std::size_t n = std::min(call.own_bytes, call.bytes[0]);
    auto* own = static_cast<std::byte*>(call.output) + call.offsets[0];
    if (n != 0 && call.input != own) std::memcpy(own, call.input, n);
    if (call.own_bytes != call.bytes[0]) {
      throw mismatch_error("cachecomm: gatherv: the root sends " + std::to_string(call.own_bytes) +
                               " bytes but its counts give it " + std::to_string(call.bytes[0]),
                           mismatch_error::field::size);
    }
    return;
  }
  // The root's first slot holds the largest count and every count.
  if ((static_cast<std::size_t>(m_size) + 1) * 8 > slot_payload) {
    throw unsupported_error("cachecomm: gatherv: more than " +
                            std::to_string(slot_payload / 8 - 1) +
                            " ranks on one node (the root's counts must fit in one slot)");
  }
  begin_call(call_kind::gatherv, 0, datatype::byte, 0xffU);
  entry.run(*this, call);
}

void coll_engine::gatherv(const vector_call& call, bool pull_large) {
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const auto root = static_cast<std::size_t>(call.root);
  const bool is_root = me == root;
  const auto* in = static_cast<const std::byte*>(call.input);
  auto* out = static_cast<std::byte*>(call.output);
  // The first disagreement this rank saw: the rank, what it sends, what the root expects.
  int disagreeing = -1;
  std::size_t disagreeing_sent = 0;
  std::size_t disagreeing_expected = 0;
  auto disagree = [&](std::size_t rank, std::size_t sent, std::size_t expected) {
    if (disagreeing < 0) {
      disagreeing = static_cast<int>(rank);
      disagreeing_sent = sent;
      disagreeing_expected = expected;
    }
  };

  const std::uint32_t step = begin_step();
  ensure_free(step, slot_depth(slot_payload));
  std::byte* own_slot = slot_data(m_rank, step, slot_payload);
  std::size_t largest = 0;
  std::size_t expected = 0;  // non-root: the root's count for this rank
  int error_number = 0;
  int failed_rank = -1;
  if (is_root) {
    // The largest block that goes through the region (the data steps every rank takes).
    for (std::size_t r = 0; r < size; ++r) {
      if (r != me && !(pull_large && call.bytes[r] >= pull_min_bytes))
        largest = std::max(largest, call.bytes[r]);
    }
    put_word(own_slot, 0, largest);
    std::memcpy(own_slot + 8, call.bytes, size * 8);
    post_slot(step, slot_payload);
    const std::size_t own = std::min(call.own_bytes, call.bytes[me]);
    if (own != 0 && in != out + call.offsets[me]) std::memcpy(out + call.offsets[me], in, own);
    if (call.own_bytes != call.bytes[me]) disagree(me, call.own_bytes, call.bytes[me]);
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      wait_slot(static_cast<int>(rank), step, slot_payload, "gatherv (a rank's slot)");
      const std::byte* slot = slot_data(static_cast<int>(rank), step, slot_payload);
      const std::size_t sent = word(slot, 0);
      const std::size_t wanted = call.bytes[rank];
      m_addresses[rank] = sent;  // what the data steps below move from this rank
      std::byte* into = out + call.offsets[rank];
      if (sent != wanted) disagree(rank, sent, wanted);
      if (wanted <= inline_bytes) {
        const std::size_t n = sent <= inline_bytes ? std::min(sent, wanted) : 0;
        if (n != 0) std::memcpy(into, slot + header_words * 8, n);
      } else if (pull_large && wanted >= pull_min_bytes && error_number == 0 &&
                 large_part(sent, wanted) != 0) {
        error_number = m_cross->copy_from(static_cast<int>(rank), into, word(slot, 1),
                                          large_part(sent, wanted));
        if (error_number != 0) failed_rank = static_cast<int>(rank);
      }
    }
  } else {
    put_word(own_slot, 0, call.own_bytes);
    put_word(own_slot, 1, reinterpret_cast<std::uintptr_t>(call.input));
    if (call.own_bytes <= inline_bytes && call.own_bytes != 0)
      std::memcpy(own_slot + header_words * 8, in, call.own_bytes);
    post_slot(step, slot_payload);
    wait_slot(call.root, step, slot_payload, "gatherv (the root's counts)");
    const std::byte* counts = slot_data(call.root, step, slot_payload);
    largest = word(counts, 0);
    expected = word(counts, 1 + me);
    if (call.own_bytes != expected) disagree(me, call.own_bytes, expected);
  }
  finish_step(step);

  const bool pulled = !is_root && pull_large && expected >= pull_min_bytes;
  if (pulled && large_part(call.own_bytes, expected) != 0) {
    // The root reads this rank's buffer in the first step: the caller may reuse it only after.
    m_wait->wait_reach(m_done[root].value, step, call.root,
                       "gatherv (the root reading this rank's block)");
  }
  if (largest > inline_bytes) {
    // Every rank takes these steps; only the ranks with a block larger than a slot and not pulled
    // post in them.
    const std::size_t chunk = m_tuning.region_bytes / size / cache_line_size * cache_line_size;
    const std::size_t sending = is_root || pulled ? 0 : large_part(call.own_bytes, expected);
    for (std::size_t offset = 0; offset < largest; offset += chunk) {
      const std::uint32_t data_step = begin_step();
      if (sending > offset) {
        ensure_free(data_step, 2);
        copy_to_shared(region(data_step) + me * chunk, in + offset,
                       std::min(chunk, sending - offset), m_tuning.streaming_stores);
        post_region(data_step);
      }
      if (is_root) {
        for (std::size_t distance = 1; distance < size; ++distance) {
          const std::size_t rank = (me + distance) % size;
          if (pull_large && call.bytes[rank] >= pull_min_bytes) continue;
          const std::size_t moved = large_part(m_addresses[rank], call.bytes[rank]);
          if (moved <= offset) continue;
          wait_region(static_cast<int>(rank), data_step, "gatherv (a rank's block)");
          std::memcpy(out + call.offsets[rank] + offset, region(data_step) + rank * chunk,
                      std::min(chunk, moved - offset));
        }
      }
      finish_step(data_step);
    }
  }
  if (error_number != 0) {
    throw cross_memory_failure("single-copy gatherv", false, failed_rank, error_number);
  }
  if (disagreeing >= 0) {
    const std::string who = static_cast<std::size_t>(disagreeing) == me
                                ? "this rank (node rank " + std::to_string(me) + ")"
                                : "node rank " + std::to_string(disagreeing);
    throw mismatch_error("cachecomm: gatherv: " + who + " sends " +
                             std::to_string(disagreeing_sent) +
                             " bytes, but the root's count "
                             "for it (node rank " +
                             std::to_string(root) + "'s counts) is " +
                             std::to_string(disagreeing_expected) + " bytes",
                         mismatch_error::field::size);
  }
}

}  // namespace cachecomm::detail
