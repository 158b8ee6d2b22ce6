// Gather on one node: the dispatch, central (blocks through the slots or the data region, the root
// copies them out) and single copy (the root pulls every block from its owner's buffer).
#include <algorithm>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

void coll_engine::gather(const void* input, void* output, std::size_t block_bytes, int root,
                         gather_algorithm algorithm) {
  const gather_entry& entry = entry_of(algorithm);  // refuses `automatic` before any early exit
  if (block_bytes == 0) return;
  if (m_size == 1) {
    if (input != output) copy_memory(output, input, block_bytes);
    return;
  }
  begin_call(call_kind::gather, block_bytes, datatype::byte, 0xffU, root);
  entry.run(*this, input, output, block_bytes, root);
}

void coll_engine::gather_central(const void* input, void* output, std::size_t block_bytes,
                                 int root) {
  auto* out = static_cast<std::byte*>(output);
  const auto* in = static_cast<const std::byte*>(input);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const bool is_root = m_rank == root;
  if (is_root && input != out + me * block_bytes) {
    copy_memory(out + me * block_bytes, input, block_bytes);
  }
  const bool use_slots = block_bytes <= slot_payload;
  const std::size_t chunk =
      use_slots ? slot_payload : fitted_chunk(m_tuning.region_bytes / size, block_bytes);
  // Blocks smaller than a rank's share of a half rotate through it (region_ring).
  const region_ring ring = region_ring_of(chunk);
  for (std::size_t offset = 0; offset < block_bytes; offset += chunk) {
    const std::size_t n = std::min(chunk, block_bytes - offset);
    const std::uint32_t step = begin_step();
    if (!is_root) {
      // A sender reads nothing: it posts its part and goes on (up to a ring of steps ahead).
      ensure_free(step, use_slots ? slot_depth(n) : 2);
      if (use_slots) {
        copy_memory(slot_data(m_rank, step, n), in + offset, n);
        post_slot(step, n);
      } else {
        copy_to_shared(ring_area(ring, me, step), in + offset, n, m_tuning.streaming_stores);
        post_region(step);
      }
      finish_step(step);
      continue;
    }
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      const std::byte* source = nullptr;
      if (use_slots) {
        wait_slot(static_cast<int>(rank), step, n, "gather (a rank's slot)");
        source = slot_data(static_cast<int>(rank), step, n);
      } else {
        wait_region(static_cast<int>(rank), step, "gather (a rank's block)");
        source = ring_area(ring, rank, step);
      }
      copy_memory(out + rank * block_bytes + offset, source, n);
    }
    finish_step(step);
  }
}

void coll_engine::gather_single_copy(const void* input, void* output, std::size_t block_bytes,
                                     int root) {
  const std::uint32_t step = begin_step();
  if (m_rank != root) {
    publish_address(step, input);
    finish_step(step);
    // The root reads this rank's buffer: the caller may reuse it only once the root has.
    m_wait->wait_reach(m_done[static_cast<std::size_t>(root)].value, step, root,
                       "gather (the root reading this rank's block)");
    return;
  }
  auto* out = static_cast<std::byte*>(output);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  int error_number = 0;
  int failed_rank = -1;
  for (std::size_t distance = 1; distance < size && error_number == 0; ++distance) {
    const std::size_t rank = (me + distance) % size;
    const std::uint64_t address =
        published_address(static_cast<int>(rank), step, "gather (a rank's block address)");
    error_number =
        m_cross->copy_from(static_cast<int>(rank), out + rank * block_bytes, address, block_bytes);
    if (error_number != 0) failed_rank = static_cast<int>(rank);
  }
  if (input != out + me * block_bytes) copy_memory(out + me * block_bytes, input, block_bytes);
  finish_step(step);
  if (error_number != 0) {
    throw cross_memory_failure("single-copy gather", false, failed_rank, error_number);
  }
}

}  // namespace cachecomm::detail
