// Allgather: the dispatch and the central algorithm through slots or the data region; single copy
// is in allgather_single_copy.cpp.
#include <algorithm>
#include <cstring>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

void coll_engine::allgather(const void* input, void* output, std::size_t block_bytes,
                            allgather_algorithm algorithm) {
  const allgather_entry& entry = entry_of(algorithm);  // refuses `automatic` before any early exit
  if (block_bytes == 0) return;
  begin_call(call_kind::allgather, block_bytes, datatype::byte, 0xffU);
  entry.run(*this, input, output, block_bytes);
}

void coll_engine::allgather_central(const void* input, void* output, std::size_t block_bytes) {
  auto* out = static_cast<std::byte*>(output);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  // The own block goes to the output after the first chunk is posted: the other ranks wait for the
  // post, not for this copy (2 ranks, 32-128 KiB: a block's copy is a fifth of the call).
  const bool own_copy = input != out + me * block_bytes;
  if (m_size == 1) {
    if (own_copy) copy_memory(out + me * block_bytes, input, block_bytes);
    return;
  }
  const bool use_slots = block_bytes <= slot_payload;
  const std::size_t chunk =
      use_slots ? slot_payload : fitted_chunk(m_tuning.region_bytes / size, block_bytes);
  // Blocks smaller than a rank's share of a half rotate through it (region_ring).
  const region_ring ring = region_ring_of(chunk);
  const auto* in = static_cast<const std::byte*>(input);
  ring_stores stores(*this, use_slots ? 0 : block_bytes);
  for (std::size_t offset = 0; offset < block_bytes; offset += chunk) {
    const std::size_t n = std::min(chunk, block_bytes - offset);
    const std::uint32_t step = begin_step();
    ensure_free(step, use_slots ? slot_depth(n) : 2);
    if (use_slots) {
      copy_memory(slot_data(m_rank, step, n), in + offset, n);
      post_slot(step, n);
    } else {
      stores.copy(ring_area(ring, me, step), in + offset, n);
      post_region(step);
    }
    if (offset == 0 && own_copy) copy_memory(out + me * block_bytes, input, block_bytes);
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      const std::byte* source = nullptr;
      if (use_slots) {
        wait_slot(static_cast<int>(rank), step, n, "allgather (a rank's slot)");
        source = slot_data(static_cast<int>(rank), step, n);
      } else {
        wait_region(static_cast<int>(rank), step, "allgather (a rank's block)");
        source = ring_area(ring, rank, step);
      }
      copy_memory(out + rank * block_bytes + offset, source, n);
    }
    finish_step(step);
  }
  stores.finish();
}

}  // namespace cachecomm::detail
