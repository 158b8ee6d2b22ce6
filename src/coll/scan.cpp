// Scan and exscan on one node: every rank but the last posts its input (in its slot, or its part of
// the data region, pipelined); rank r combines the inputs of ranks 0..r (0..r-1 for exscan) left to
// right, so every result has the bits of the rank-ordered fold.
#include <algorithm>
#include <cstring>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/reduce_kernels.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

void coll_engine::scan(const void* input, void* output, std::size_t count, datatype type,
                       reduce_op op, bool exclusive) {
  if (count == 0) return;
  const std::size_t element = size_of(type);
  const std::size_t bytes = count * element;
  const auto* in = static_cast<const std::byte*>(input);
  auto* out = static_cast<std::byte*>(output);
  if (m_size == 1) {
    if (!exclusive && input != output) copy_memory(output, input, bytes);
    return;
  }
  begin_call(call_kind::scan, bytes, type, static_cast<std::uint32_t>(op));
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

}  // namespace cachecomm::detail
