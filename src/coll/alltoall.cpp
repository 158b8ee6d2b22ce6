// Alltoall on one node: the dispatch, central (every rank copies its blocks into its slot or its
// part of the data region, each rank copies the blocks meant for it out) and single copy (each rank
// pulls its block from every other rank's send buffer).
#include <algorithm>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

void coll_engine::alltoall(const void* input, void* output, std::size_t block_bytes,
                           alltoall_algorithm algorithm) {
  const alltoall_entry& entry = entry_of(algorithm);  // refuses `automatic` before any early exit
  if (block_bytes == 0) return;
  if (m_size == 1) {
    if (input != output) copy_memory(output, input, block_bytes);
    return;
  }
  begin_call(call_kind::alltoall, block_bytes, datatype::byte, 0xffU);
  entry.run(*this, input, output, block_bytes, -1);
}

void coll_engine::alltoall_central(const void* input, void* output, std::size_t block_bytes) {
  const auto* in = static_cast<const std::byte*>(input);
  auto* out = static_cast<std::byte*>(output);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  // The own block is copied after the first post: the others wait for the post, not for this copy.
  const auto copy_own = [&] {
    copy_memory(out + me * block_bytes, in + me * block_bytes, block_bytes);
  };
  const std::size_t total = block_bytes * size;
  if (total <= slot_payload) {
    // All of a rank's blocks in its one slot; each reader takes its block from every slot.
    const std::uint32_t step = begin_step();
    ensure_free(step, slot_depth(total));
    copy_memory(slot_data(m_rank, step, total), in, total);
    post_slot(step, total);
    copy_own();
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      wait_slot(static_cast<int>(rank), step, total, "alltoall (a rank's slot)");
      copy_memory(out + rank * block_bytes,
                  slot_data(static_cast<int>(rank), step, total) + me * block_bytes, block_bytes);
    }
    finish_step(step);
    return;
  }
  // Each rank owns an area of the region half with a chunk per destination (destination_chunks);
  // areas rotate through the half (region_ring).
  const std::size_t chunk =
      fitted_chunk(std::max<std::size_t>(1, m_tuning.region_bytes / (size * size)), block_bytes);
  const destination_chunks chunks{chunk, block_bytes <= chunk};
  const region_ring ring = region_ring_of(chunks.per_area(size));
  ring_stores stores(*this, block_bytes);
  for (std::size_t offset = 0; offset < block_bytes; offset += chunk) {
    const std::size_t n = std::min(chunk, block_bytes - offset);
    const std::uint32_t step = begin_step();
    ensure_free(step, 2);
    std::byte* mine = ring_area(ring, me, step);
    for (std::size_t rank = 0; rank < size; ++rank) {
      if (rank != me) {
        stores.copy(mine + chunks.offset(rank, me), in + rank * block_bytes + offset, n);
      }
    }
    post_region(step);
    if (offset == 0) copy_own();
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      wait_region(static_cast<int>(rank), step, "alltoall (a rank's blocks)");
      copy_memory(out + rank * block_bytes + offset,
                  ring_area(ring, rank, step) + chunks.offset(me, rank), n);
    }
    finish_step(step);
  }
  stores.finish();
}

void coll_engine::alltoall_single_copy(const void* input, void* output, std::size_t block_bytes) {
  auto* out = static_cast<std::byte*>(output);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const std::uint32_t step = begin_step();
  publish_address(step, input);
  int error_number = 0;
  int failed_rank = -1;
  // Start at the next rank: each rank's buffer is read by one rank at a time, not by all at once.
  for (std::size_t distance = 1; distance < size && error_number == 0; ++distance) {
    const std::size_t rank = (me + distance) % size;
    const std::uint64_t address =
        published_address(static_cast<int>(rank), step, "alltoall (a rank's buffer address)");
    error_number = m_cross->copy_from(static_cast<int>(rank), out + rank * block_bytes,
                                      address + me * block_bytes, block_bytes);
    if (error_number != 0) failed_rank = static_cast<int>(rank);
  }
  copy_memory(out + me * block_bytes, static_cast<const std::byte*>(input) + me * block_bytes,
              block_bytes);
  finish_step(step);
  wait_readers(step, "alltoall (a single-copy reader)");
  if (error_number != 0) {
    throw cross_memory_failure("single-copy alltoall", false, failed_rank, error_number);
  }
}

}  // namespace cachecomm::detail
