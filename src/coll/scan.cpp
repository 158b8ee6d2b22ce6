// Scan and exscan on one node: the dispatch; the region path (every rank but the last posts its
// input in its slot, or its part of the data region, pipelined) and single copy (rank r pulls the
// lower ranks' inputs from their buffers). Rank r combines the inputs of ranks 0..r (0..r-1 for
// exscan) left to right, so every result has the bits of the rank-ordered fold on either path.
#include <algorithm>
#include <cstring>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/reduce_kernels.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

void coll_engine::scan(const void* input, void* output, std::size_t count, datatype type,
                       reduce_op op, bool exclusive, scan_algorithm algorithm) {
  if (count == 0) return;
  if (m_size == 1) {
    if (!exclusive && input != output) copy_memory(output, input, count * size_of(type));
    return;
  }
  begin_call(call_kind::scan, count * size_of(type), type, static_cast<std::uint32_t>(op));
  entry_of(algorithm).run(*this, input, output, count, type, op, exclusive);
}

void coll_engine::scan_region(const void* input, void* output, std::size_t count, datatype type,
                              reduce_op op, bool exclusive) {
  const std::size_t element = size_of(type);
  const std::size_t bytes = count * element;
  const auto* in = static_cast<const std::byte*>(input);
  auto* out = static_cast<std::byte*>(output);
  const auto size = static_cast<std::size_t>(m_size);
  const bool use_slots = bytes <= slot_payload;
  const std::size_t chunk_bytes =
      use_slots ? bytes : m_tuning.region_bytes / size / cache_line_size * cache_line_size;
  const std::size_t per_step = chunk_bytes / element;
  // Nobody reads the last rank's input.
  const bool posts = m_rank + 1 < m_size;
  const int combined = exclusive ? m_rank : m_rank + 1;
  for (std::size_t first = 0; first < count; first += per_step) {
    const std::size_t n = std::min(per_step, count - first);
    const std::size_t n_bytes = n * element;
    const std::uint32_t step = begin_step();
    const std::byte* own = in + first * element;
    if (posts) {
      ensure_free(step, use_slots ? slot_depth(n_bytes) : 2);
      if (use_slots) {
        copy_memory(slot_data(m_rank, step, n_bytes), own, n_bytes);
        post_slot(step, n_bytes);
      } else {
        copy_to_shared(region(step) + static_cast<std::size_t>(m_rank) * chunk_bytes, own, n_bytes,
                       m_tuning.streaming_stores);
        post_region(step);
      }
    }
    for (int rank = 0; rank < m_rank; ++rank) {
      const std::byte* source = nullptr;
      if (use_slots) {
        wait_slot(rank, step, n_bytes, "scan (a lower rank's slot)");
        source = slot_data(rank, step, n_bytes);
      } else {
        wait_region(rank, step, "scan (a lower rank's input)");
        source = region(step) + static_cast<std::size_t>(rank) * chunk_bytes;
      }
      m_inputs[static_cast<std::size_t>(rank)] = source;
    }
    m_inputs[static_cast<std::size_t>(m_rank)] = own;
    if (combined > 0) {
      reduce_ordered(m_inputs.data(), combined, out + first * element, nullptr, n, type, op);
    }
    finish_step(step);
  }
}

void coll_engine::scan_single_copy(const void* input, void* output, std::size_t count,
                                   datatype type, reduce_op op, bool exclusive) {
  const std::size_t element = size_of(type);
  const std::size_t bytes = count * element;
  auto* out = static_cast<std::byte*>(output);
  const auto me = static_cast<std::size_t>(m_rank);
  // The higher ranks read this rank's input until the end of the call: one that its result
  // overwrites (in place) is read from a copy.
  const bool writes_result = !exclusive || m_rank > 0;
  if (input == output && writes_result && m_rank + 1 < m_size) {
    m_scratch.assign(static_cast<const std::byte*>(input),
                     static_cast<const std::byte*>(input) + bytes);
    input = m_scratch.data();
  }
  const auto* in = static_cast<const std::byte*>(input);
  const std::uint32_t step = begin_step();
  publish_address(step, input);
  // Rank 0's scan is its own input (the staged copy, when in place, is the same bytes).
  if (!exclusive && me == 0 && output != input) copy_memory(output, input, bytes);
  for (std::size_t rank = 0; rank < me; ++rank) {
    m_addresses[rank] =
        published_address(static_cast<int>(rank), step, "scan (a lower rank's input address)");
  }
  const std::size_t combined = exclusive ? me : me + 1;
  const std::size_t chunk = whole_chunk(std::min(pull_chunk_bytes, bytes), element);
  const std::size_t per_step = chunk / element;
  // Exscan's rank 1 gets rank 0's input unchanged: straight into its output.
  const bool direct = exclusive && me == 1;
  m_pulled.resize(direct ? 0 : me * chunk);
  int error_number = 0;
  int failed_rank = -1;
  if (direct) {
    // One system call for the whole vector: nothing to fold, nothing to keep in the cache.
    error_number = m_cross->copy_from(0, out, m_addresses[0], bytes);
    if (error_number != 0) failed_rank = 0;
  }
  for (std::size_t first = 0; first < count && error_number == 0 && me > 0 && !direct;
       first += per_step) {
    const std::size_t n = std::min(per_step, count - first);
    const std::size_t offset = first * element;
    for (std::size_t rank = 0; rank < me && error_number == 0; ++rank) {
      std::byte* into = m_pulled.data() + rank * chunk;
      error_number =
          m_cross->copy_from(static_cast<int>(rank), into, m_addresses[rank] + offset, n * element);
      if (error_number != 0) failed_rank = static_cast<int>(rank);
      m_inputs[rank] = into;
    }
    if (error_number != 0) continue;
    m_inputs[me] = in + offset;
    reduce_ordered(m_inputs.data(), static_cast<int>(combined), out + offset, nullptr, n, type, op);
  }
  finish_step(step);
  wait_readers(step, "scan (a single-copy reader)");
  if (error_number != 0) {
    throw cross_memory_failure("single-copy scan", false, failed_rank, error_number);
  }
}

}  // namespace cachecomm::detail
