// Scatterv on one node. Only the root knows the counts, so it decides the call's path and posts it
// in its 4 KiB slot with the counts (and, unless the blocks are inline, the displacements) and its
// buffer's address: every block in that slot when they all fit (one step, the root posts and
// leaves), or one chunk per rank and step through the data region (central), or, when the largest
// block has 64 KiB or more, each rank pulls its block from the root's buffer in that first step
// (single copy; the root waits for its readers). A rank whose receive count differs from the root's
// count for it takes the smaller of the two and fails after the call, naming both (MPI reports a
// truncation on the receiver too); the other ranks are not affected.
#include <algorithm>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/mismatch_error.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

namespace {

// The root's slot: largest count, path, buffer address, the counts, then on the inline path every
// block one after the other, otherwise the displacements (only a pulling rank reads them). The
// blocks follow the counts directly so that at 2 ranks a block of up to 8 bytes shares the slot's
// first cache line with the sequence number and the counts: one line transfer per call.
enum class scatterv_path : std::uint64_t { in_slot = 1, region = 2, pull = 3 };
constexpr std::size_t fixed_words = 3;

/// Where the blocks start on the inline path.
std::size_t inline_header_bytes(std::size_t ranks) {
  return (fixed_words + ranks) * 8;
}
/// The header of the other paths (with the displacements): what must fit in a slot.
std::size_t header_bytes(std::size_t ranks) {
  return (fixed_words + 2 * ranks) * 8;
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

void coll_engine::scatterv(const vector_call& call, scatterv_algorithm algorithm) {
  const scatterv_entry& entry = entry_of(algorithm);  // refuses `automatic` first
  if (m_size == 1) {
    const std::size_t n = std::min(call.own_bytes, call.bytes[0]);
    const auto* own = static_cast<const std::byte*>(call.input) + call.offsets[0];
    if (n != 0 && call.output != nullptr && call.output != own) copy_memory(call.output, own, n);
    if (call.output != nullptr && call.own_bytes != call.bytes[0]) {
      throw mismatch_error("cachecomm: scatterv: the root receives " +
                               std::to_string(call.own_bytes) + " bytes but its counts give it " +
                               std::to_string(call.bytes[0]),
                           mismatch_error::field::size);
    }
    return;
  }
  if (header_bytes(static_cast<std::size_t>(m_size)) > slot_payload) {
    throw unsupported_error("cachecomm: scatterv: more than " +
                            std::to_string((slot_payload / 8 - fixed_words) / 2) +
                            " ranks on one node (the root's counts must fit in one slot)");
  }
  begin_call(call_kind::scatterv, 0, datatype::byte, 0xffU);
  entry.run(*this, call);
}

void coll_engine::scatterv(const vector_call& call, bool pull_large) {
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const bool is_root = m_rank == call.root;
  const std::uint32_t step = begin_step();
  std::size_t largest = 0;
  auto path = scatterv_path::in_slot;
  if (is_root) {
    ensure_free(step, slot_depth(slot_payload));
    const auto* in = static_cast<const std::byte*>(call.input);
    std::size_t total = 0;
    for (std::size_t r = 0; r < size; ++r) {
      largest = std::max(largest, call.bytes[r]);
      if (r != me) total += call.bytes[r];
    }
    // Pulling costs a system call per rank, more than the copy it saves for small blocks (2
    // ranks, 4 KiB: 2.6 us against 0.6 through the region).
    constexpr std::size_t pull_min_bytes = 64U << 10;
    if (total > slot_payload - inline_header_bytes(size)) {
      path = pull_large && largest >= pull_min_bytes ? scatterv_path::pull : scatterv_path::region;
    }
    std::byte* slot = slot_data(m_rank, step, slot_payload);
    put_word(slot, 0, largest);
    put_word(slot, 1, static_cast<std::uint64_t>(path));
    put_word(slot, 2, reinterpret_cast<std::uintptr_t>(in));
    copy_memory(slot + fixed_words * 8, call.bytes, size * 8);
    if (path == scatterv_path::in_slot) {
      std::byte* at = slot + inline_header_bytes(size);
      for (std::size_t r = 0; r < size; ++r) {
        if (r == me || call.bytes[r] == 0) continue;
        copy_memory(at, in + call.offsets[r], call.bytes[r]);
        at += call.bytes[r];
      }
    } else {
      copy_memory(slot + (fixed_words + size) * 8, call.offsets, size * 8);
    }
    post_slot(step, slot_payload);
    const std::size_t own = std::min(call.own_bytes, call.bytes[me]);
    const std::byte* own_block = in + call.offsets[me];
    if (call.output != nullptr && own != 0 && call.output != own_block)
      copy_memory(call.output, own_block, own);
    finish_step(step);
    if (path == scatterv_path::pull) wait_readers(step, "scatterv (a rank pulling its block)");
  }
  // Non-root: what the root posted, and this rank's part of it.
  std::size_t expected = call.bytes != nullptr ? call.bytes[me] : 0;
  std::size_t taken = 0;
  int error_number = 0;
  if (!is_root) {
    wait_slot(call.root, step, slot_payload, "scatterv (the root's slot)");
    const std::byte* slot = slot_data(call.root, step, slot_payload);
    largest = word(slot, 0);
    path = static_cast<scatterv_path>(word(slot, 1));
    expected = word(slot, fixed_words + me);
    taken = std::min(expected, call.own_bytes);
    auto* out = static_cast<std::byte*>(call.output);
    if (path == scatterv_path::in_slot) {
      std::size_t at = inline_header_bytes(size);
      for (std::size_t r = 0; r < me; ++r)
        if (r != static_cast<std::size_t>(call.root)) at += word(slot, fixed_words + r);
      if (taken != 0) copy_memory(out, slot + at, taken);
    } else if (path == scatterv_path::pull && taken != 0) {
      const std::uint64_t address = word(slot, 2) + word(slot, fixed_words + size + me);
      error_number = m_cross->copy_from(call.root, out, address, taken);
    }
    finish_step(step);
  }
  if (path == scatterv_path::region) {
    // Every rank takes these steps; the root copies one chunk per rank into the region per step.
    const std::size_t chunk = m_tuning.region_bytes / size / cache_line_size * cache_line_size;
    for (std::size_t offset = 0; offset < largest; offset += chunk) {
      const std::uint32_t data_step = begin_step();
      if (is_root) {
        ensure_free(data_step, 2);
        const auto* in = static_cast<const std::byte*>(call.input);
        for (std::size_t r = 0; r < size; ++r) {
          if (r == me || call.bytes[r] <= offset) continue;
          copy_to_shared(region(data_step) + r * chunk, in + call.offsets[r] + offset,
                         std::min(chunk, call.bytes[r] - offset), m_tuning.streaming_stores);
        }
        post_region(data_step);
      } else if (expected > offset) {
        wait_region(call.root, data_step, "scatterv (the root's blocks)");
        if (taken > offset) {
          copy_memory(static_cast<std::byte*>(call.output) + offset, region(data_step) + me * chunk,
                      std::min(chunk, taken - offset));
        }
      }
      finish_step(data_step);
    }
  }
  if (error_number != 0) {
    throw cross_memory_failure("single-copy scatterv", false, call.root, error_number);
  }
  if (!is_root ? expected != call.own_bytes
               : call.output != nullptr && call.own_bytes != call.bytes[me]) {
    throw mismatch_error(
        "cachecomm: scatterv: this rank (node rank " + std::to_string(me) + ") receives " +
            std::to_string(call.own_bytes) + " bytes, but the root's count for it (node rank " +
            std::to_string(call.root) + "'s counts) is " + std::to_string(expected) + " bytes",
        mismatch_error::field::size);
  }
}

}  // namespace cachecomm::detail
