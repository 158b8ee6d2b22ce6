// Scatter on one node: the dispatch, central (the root copies the blocks into its slot or the data
// region, each rank copies its own out) and single copy (each rank pulls its block from the root's
// buffer).
#include <algorithm>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

void coll_engine::scatter(const void* input, void* output, std::size_t block_bytes, int root,
                          scatter_algorithm algorithm) {
  const scatter_entry& entry = entry_of(algorithm);  // refuses `automatic` before any early exit
  if (block_bytes == 0) return;
  if (m_size == 1) {
    if (output != nullptr && input != output) copy_memory(output, input, block_bytes);
    return;
  }
  begin_call(call_kind::scatter, block_bytes, datatype::byte, 0xffU, root);
  entry.run(*this, input, output, block_bytes, root);
}

void coll_engine::scatter_central(const void* input, void* output, std::size_t block_bytes,
                                  int root) {
  const auto* in = static_cast<const std::byte*>(input);
  auto* out = static_cast<std::byte*>(output);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const bool is_root = m_rank == root;
  if (is_root) {
    const std::byte* own = in + me * block_bytes;
    if (out != nullptr && out != own) copy_memory(out, own, block_bytes);
  }
  const std::size_t total = block_bytes * size;
  if (total <= slot_payload) {
    // Every block in the root's one slot: one line transfer per reader for small blocks.
    const std::uint32_t step = begin_step();
    if (is_root) {
      ensure_free(step, slot_depth(total));
      copy_memory(slot_data(m_rank, step, total), in, total);
      post_slot(step, total);
    } else {
      wait_slot(root, step, total, "scatter (the root's slot)");
      copy_memory(out, slot_data(root, step, total) + me * block_bytes, block_bytes);
    }
    finish_step(step);
    return;
  }
  // The root writes each rank's chunk into that rank's area; blocks smaller than a rank's share
  // of a half rotate through it (region_ring).
  const std::size_t chunk = fitted_chunk(m_tuning.region_bytes / size, block_bytes);
  const region_ring ring = region_ring_of(chunk);
  for (std::size_t offset = 0; offset < block_bytes; offset += chunk) {
    const std::size_t n = std::min(chunk, block_bytes - offset);
    const std::uint32_t step = begin_step();
    if (is_root) {
      ensure_free(step, 2);
      for (std::size_t rank = 0; rank < size; ++rank) {
        if (rank != me) {
          copy_to_shared(ring_area(ring, rank, step), in + rank * block_bytes + offset, n,
                         m_tuning.streaming_stores);
        }
      }
      post_region(step);
    } else {
      wait_region(root, step, "scatter (the root's blocks)");
      copy_memory(out + offset, ring_area(ring, me, step), n);
    }
    finish_step(step);
  }
}

void coll_engine::scatter_single_copy(const void* input, void* output, std::size_t block_bytes,
                                      int root) {
  const std::uint32_t step = begin_step();
  const auto me = static_cast<std::size_t>(m_rank);
  if (m_rank == root) {
    publish_address(step, input);
    const auto* own = static_cast<const std::byte*>(input) + me * block_bytes;
    if (output != nullptr && output != own) copy_memory(output, own, block_bytes);
    finish_step(step);
    wait_readers(step, "scatter (a rank reading its block from the root)");
    return;
  }
  const std::uint64_t address = published_address(root, step, "scatter (the root's address)");
  const int error_number =
      m_cross->copy_from(root, output, address + me * block_bytes, block_bytes);
  finish_step(step);  // also when the copy failed: the root must not wait forever
  if (error_number != 0) {
    throw cross_memory_failure("single-copy scatter", false, root, error_number);
  }
}

}  // namespace cachecomm::detail
