// Broadcast: the dispatch and the algorithms through shared memory (slots, binomial tree over
// slots, the data region at depth 1 or 2, and a ring of chunks through the whole region).
#include <algorithm>
#include <bit>
#include <cstring>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

void coll_engine::broadcast(void* buffer, std::size_t bytes, int root,
                            broadcast_algorithm algorithm) {
  if (m_size == 1 || bytes == 0) return;
  begin_call(call_kind::broadcast, bytes, datatype::byte, 0xffU, root);
  entry_of(algorithm).run(*this, buffer, bytes, root);
}

void coll_engine::broadcast_slots(void* buffer, std::size_t bytes, int root) {
  auto* data = static_cast<std::byte*>(buffer);
  for (std::size_t offset = 0; offset < bytes; offset += slot_payload) {
    const std::size_t n = std::min(slot_payload, bytes - offset);
    const std::uint32_t step = begin_step();
    if (m_rank == root) {
      ensure_free(step, slot_depth(n));
      copy_memory(slot_data(m_rank, step, n), data + offset, n);
      post_slot(step, n);
    } else {
      const bool root_ahead = slot_posted(root, step, n);
      wait_slot(root, step, n, "broadcast (root's slot)");
      copy_memory(data + offset, slot_data(root, step, n), n);
      if (root_ahead) prefetch_next_slot(root, step, n);
    }
    finish_step(step);
  }
}

void coll_engine::broadcast_tree(void* buffer, std::size_t bytes, int root) {
  // Binomial tree on ranks relative to the root: parent clears the highest bit, so each slot has
  // at most log2(P) readers instead of P-1.
  const auto relative = static_cast<unsigned>((m_rank - root + m_size) % m_size);
  const int parent =
      relative == 0 ? -1 : (static_cast<int>(relative - std::bit_floor(relative)) + root) % m_size;
  const unsigned first_child = relative == 0 ? 1U : std::bit_floor(relative) << 1;
  const bool has_children = relative + first_child < static_cast<unsigned>(m_size);
  auto* data = static_cast<std::byte*>(buffer);
  for (std::size_t offset = 0; offset < bytes; offset += slot_payload) {
    const std::size_t n = std::min(slot_payload, bytes - offset);
    const std::uint32_t step = begin_step();
    if (parent < 0) {
      ensure_free(step, slot_depth(n));
      copy_memory(slot_data(m_rank, step, n), data + offset, n);
      post_slot(step, n);
    } else {
      wait_slot(parent, step, n, "broadcast (parent's slot in the tree)");
      if (has_children) {
        ensure_free(step, slot_depth(n));
        copy_memory(slot_data(m_rank, step, n), slot_data(parent, step, n), n);
        post_slot(step, n);
      }
      copy_memory(data + offset, slot_data(parent, step, n), n);
    }
    finish_step(step);
  }
}

void coll_engine::broadcast_region(void* buffer, std::size_t bytes, int root, std::uint32_t depth) {
  // depth 1 is the seed's centralized algorithm: each chunk fills the region and the root waits for
  // every reader before the next; depth 2 double-buffers in pipeline chunks.
  const std::size_t chunk =
      depth == 1 || m_oversubscribed ? m_tuning.region_bytes : m_tuning.chunk_bytes;
  broadcast_chunks(buffer, bytes, root, chunk, depth);
}

void coll_engine::broadcast_ring(void* buffer, std::size_t bytes, int root) {
  // The root copies the message in, chunk after chunk, through a ring that spans the whole data
  // region, and leaves as soon as its last chunk is in: it waits for the readers only when it
  // laps them. The readers copy each chunk out behind it. With depth 1 or 2 the root waits for
  // every reader at every chunk, so its call lasts as long as theirs; here it lasts one copy (OSU
  // averages the ranks' times, and a program's root goes on computing). Chunks of an eighth of
  // the message (16 KiB to CACHECOMM_COLL_CHUNK): a reader starts after the first.
  const std::size_t chunk = std::clamp<std::size_t>(
      (bytes / 8 + 4095) / 4096 * 4096, std::min<std::size_t>(16U << 10, m_tuning.chunk_bytes),
      m_tuning.chunk_bytes);
  const std::size_t per_half = std::max<std::size_t>(m_half_bytes / chunk, 1);
  broadcast_chunks(buffer, bytes, root, chunk, static_cast<std::uint32_t>(2 * per_half));
}

void coll_engine::broadcast_chunks(void* buffer, std::size_t bytes, int root, std::size_t chunk,
                                   std::uint32_t depth) {
  // Chunk positions: the step's half (its parity), then chunk (step / 2) % per_half within it, so
  // a position comes back every `depth` steps (the layout reduce_large uses). Depth 1 and 2 use
  // the start of each half.
  const std::size_t per_half = std::max<std::uint32_t>(depth / 2, 1);
  auto* data = static_cast<std::byte*>(buffer);
  std::size_t index = 0;
  for (std::size_t offset = 0; offset < bytes; offset += chunk, ++index) {
    const std::size_t n = std::min(chunk, bytes - offset);
    const std::uint32_t step = begin_step();
    std::byte* position = region(step) + ((step >> 1U) % per_half) * chunk;
    if (m_rank == root) {
      // A ring's first two steps may reuse a half that an earlier call used in another layout (or
      // with another chunk): once both are free, every earlier step is finished.
      ensure_free(step, index < 2 ? std::min(depth, 2U) : depth);
      copy_to_shared(position, data + offset, n, m_tuning.streaming_stores);
      post_region(step);
    } else {
      wait_region(root, step, "broadcast (root's chunk in the data region)");
      copy_memory(data + offset, position, n);
    }
    finish_step(step);
  }
}

}  // namespace cachecomm::detail
