// Allgatherv on one node: the dispatch, central (each rank copies its block into its slot or its
// part of the data region, every rank copies all blocks out, as many steps as the largest block
// needs) and single copy (every rank pulls the others' blocks from their buffers). The call's
// description carries a fingerprint of the per-rank counts, so ranks that disagree on them fail
// in the first wait that compares descriptions instead of reading blocks of the wrong size.
#include <algorithm>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

namespace {

std::size_t largest_of(const vector_call& call, std::size_t ranks) {
  return *std::max_element(call.bytes, call.bytes + ranks);
}

/// The part of a block of `bytes` that lies in [offset, offset + chunk).
std::size_t part_of(std::size_t bytes, std::size_t offset, std::size_t chunk) {
  return bytes > offset ? std::min(chunk, bytes - offset) : 0;
}

void copy_own(const vector_call& call, std::size_t me) {
  auto* own = static_cast<std::byte*>(call.output) + call.offsets[me];
  if (call.bytes[me] != 0 && call.input != own) copy_memory(own, call.input, call.bytes[me]);
}

}  // namespace

void coll_engine::allgatherv(const vector_call& call, std::uint64_t fingerprint,
                             allgatherv_algorithm algorithm) {
  const allgatherv_entry& entry = entry_of(algorithm);  // refuses `automatic` first
  const auto size = static_cast<std::size_t>(m_size);
  if (largest_of(call, size) == 0) return;  // every rank knows every count
  if (m_size == 1) {
    copy_own(call, 0);
    return;
  }
  begin_call(call_kind::allgatherv, fingerprint, datatype::byte, 0xffU);
  entry.run(*this, call);
}

void coll_engine::allgatherv_central(const vector_call& call) {
  auto* out = static_cast<std::byte*>(call.output);
  const auto* in = static_cast<const std::byte*>(call.input);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const std::size_t own = call.bytes[me];
  const std::size_t largest = largest_of(call, size);
  const bool use_slots = largest <= slot_payload;
  const std::size_t chunk =
      use_slots ? slot_payload : fitted_chunk(m_tuning.region_bytes / size, largest);
  // Blocks smaller than a rank's share of a half rotate through it (region_ring).
  const region_ring ring = region_ring_of(chunk);
  ring_stores stores(*this, use_slots ? 0 : own);
  for (std::size_t offset = 0; offset < largest; offset += chunk) {
    // The slot size every rank uses in this step: from the largest block, which all agree on.
    const std::size_t agreed = std::min(chunk, largest - offset);
    const std::size_t mine = part_of(own, offset, chunk);
    const std::uint32_t step = begin_step();
    ensure_free(step, use_slots ? slot_depth(agreed) : 2);
    if (use_slots) {
      if (mine != 0) copy_memory(slot_data(m_rank, step, agreed), in + offset, mine);
      post_slot(step, agreed);
    } else {
      if (mine != 0) stores.copy(ring_area(ring, me, step), in + offset, mine);
      post_region(step);
    }
    if (offset == 0) copy_own(call, me);  // after the post: the others wait for it, not this copy
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      const std::byte* source = nullptr;
      if (use_slots) {
        wait_slot(static_cast<int>(rank), step, agreed, "allgatherv (a rank's slot)");
        source = slot_data(static_cast<int>(rank), step, agreed);
      } else {
        wait_region(static_cast<int>(rank), step, "allgatherv (a rank's block)");
        source = ring_area(ring, rank, step);
      }
      const std::size_t n = part_of(call.bytes[rank], offset, chunk);
      if (n != 0) copy_memory(out + call.offsets[rank] + offset, source, n);
    }
    finish_step(step);
  }
  stores.finish();
}

void coll_engine::allgatherv_single_copy(const vector_call& call) {
  auto* out = static_cast<std::byte*>(call.output);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const std::uint32_t step = begin_step();
  publish_address(step, call.input);
  int error_number = 0;
  int failed_rank = -1;
  // Start at the next rank: each rank's block is read by one rank at a time, not by all at once.
  for (std::size_t distance = 1; distance < size && error_number == 0; ++distance) {
    const std::size_t rank = (me + distance) % size;
    const std::uint64_t address =
        published_address(static_cast<int>(rank), step, "allgatherv (a rank's block address)");
    if (call.bytes[rank] == 0) continue;
    error_number = m_cross->copy_from(static_cast<int>(rank), out + call.offsets[rank], address,
                                      call.bytes[rank]);
    if (error_number != 0) failed_rank = static_cast<int>(rank);
  }
  copy_own(call, me);
  finish_step(step);
  wait_readers(step, "allgatherv (a single-copy reader)");
  if (error_number != 0) {
    throw cross_memory_failure("single-copy allgatherv", false, failed_rank, error_number);
  }
}

}  // namespace cachecomm::detail
