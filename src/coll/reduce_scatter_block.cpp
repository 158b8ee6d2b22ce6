// reduce_scatter_block on one node: the dispatch, central (every rank copies its input into its
// slot or its part of the data region, rank r combines block r of all of them) and single copy
// (rank r pulls block r of every input from its owner's buffer). Both combine the inputs in rank
// order with reduce_ordered, so every result has the bits of the rank-ordered fold.
#include <algorithm>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/reduce_kernels.hpp"
#include "coll/shared_copy.hpp"

namespace cachecomm::detail {

namespace {

/// Bytes per step of one block: whole elements, whole cache lines where a line fits.
std::size_t chunk_of(std::size_t room, std::size_t element) {
  std::size_t chunk = std::max<std::size_t>(element, room / element * element);
  if (chunk >= cache_line_size) chunk = chunk / cache_line_size * cache_line_size;
  return chunk;
}

/// Bytes each rank pulls from one other rank per single-copy step (the pulled blocks stay in the
/// puller's cache for the reduction).
constexpr std::size_t pull_chunk_bytes = 64U << 10;

}  // namespace

void coll_engine::reduce_scatter_block(const void* input, void* output, std::size_t count,
                                       datatype type, reduce_op op,
                                       reduce_scatter_algorithm algorithm) {
  const reduce_scatter_entry& entry = entry_of(algorithm);  // refuses `automatic` first
  if (count == 0) return;
  const std::size_t block = count * size_of(type);
  if (m_size == 1) {
    if (input != output) std::memcpy(output, input, block);
    return;
  }
  begin_call(call_kind::reduce_scatter, block, type, static_cast<std::uint32_t>(op));
  entry.run(*this, input, output, count, type, op);
}

void coll_engine::reduce_scatter_central(const void* input, void* output, std::size_t count,
                                         datatype type, reduce_op op) {
  const std::size_t element = size_of(type);
  const std::size_t block = count * element;
  const auto* in = static_cast<const std::byte*>(input);
  auto* out = static_cast<std::byte*>(output);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const std::size_t total = block * size;
  if (total <= slot_payload) {
    // Every input whole in its owner's slot; each rank reads its block from all of them.
    const std::uint32_t step = begin_step();
    ensure_free(step, slot_depth(total));
    std::memcpy(slot_data(m_rank, step, total), in, total);
    post_slot(step, total);
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      wait_slot(static_cast<int>(rank), step, total, "reduce_scatter_block (a rank's slot)");
      m_inputs[rank] = slot_data(static_cast<int>(rank), step, total) + me * block;
    }
    m_inputs[me] = in + me * block;
    reduce_ordered(m_inputs.data(), m_size, out, nullptr, count, type, op);
    finish_step(step);
    return;
  }
  // Each rank owns size * chunk bytes of the region half: one chunk per destination block. In
  // place, the result overwrites block 0 only up to the chunk this step has already staged.
  const std::size_t chunk = chunk_of(m_tuning.region_bytes / (size * size), element);
  const std::size_t per_step = chunk / element;
  for (std::size_t first = 0; first < count; first += per_step) {
    const std::size_t n = std::min(per_step, count - first);
    const std::size_t offset = first * element;
    const std::uint32_t step = begin_step();
    ensure_free(step, 2);
    std::byte* mine = region(step) + me * size * chunk;
    for (std::size_t rank = 0; rank < size; ++rank) {
      if (rank != me) {
        copy_to_shared(mine + rank * chunk, in + rank * block + offset, n * element,
                       m_tuning.streaming_stores);
      }
    }
    post_region(step);
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      wait_region(static_cast<int>(rank), step, "reduce_scatter_block (a rank's blocks)");
      m_inputs[rank] = region(step) + (rank * size + me) * chunk;
    }
    m_inputs[me] = in + me * block + offset;
    reduce_ordered(m_inputs.data(), m_size, out + offset, nullptr, n, type, op);
    finish_step(step);
  }
}

void coll_engine::reduce_scatter_single_copy(const void* input, void* output, std::size_t count,
                                             datatype type, reduce_op op) {
  const std::size_t element = size_of(type);
  const std::size_t block = count * element;
  const auto* in = static_cast<const std::byte*>(input);
  auto* out = static_cast<std::byte*>(output);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  // One step: the others read this rank's input until they finish it (the wait at the end), so
  // the caller must not pass an input that the result overwrites (the entry point stages it).
  const std::uint32_t step = begin_step();
  publish_address(step, input);
  for (std::size_t rank = 0; rank < size; ++rank) {
    if (rank != me) {
      m_addresses[rank] = published_address(static_cast<int>(rank), step,
                                            "reduce_scatter_block (a rank's input address)");
    }
  }
  const std::size_t chunk = chunk_of(std::min(pull_chunk_bytes, block), element);
  const std::size_t per_step = chunk / element;
  m_pulled.resize(size * chunk);
  int error_number = 0;
  int failed_rank = -1;
  for (std::size_t first = 0; first < count && error_number == 0; first += per_step) {
    const std::size_t n = std::min(per_step, count - first);
    const std::size_t offset = me * block + first * element;
    // Start at the next rank: each input is read by one rank at a time, not by all at once.
    for (std::size_t distance = 1; distance < size && error_number == 0; ++distance) {
      const std::size_t rank = (me + distance) % size;
      std::byte* into = m_pulled.data() + rank * chunk;
      error_number =
          m_cross->copy_from(static_cast<int>(rank), into, m_addresses[rank] + offset, n * element);
      if (error_number != 0) failed_rank = static_cast<int>(rank);
      m_inputs[rank] = into;
    }
    if (error_number != 0) break;
    m_inputs[me] = in + offset;
    reduce_ordered(m_inputs.data(), m_size, out + first * element, nullptr, n, type, op);
  }
  finish_step(step);
  wait_readers(step, "reduce_scatter_block (a single-copy reader)");
  if (error_number != 0) {
    throw cross_memory_failure("single-copy reduce_scatter_block", false, failed_rank,
                               error_number);
  }
}

}  // namespace cachecomm::detail
