// Reduce and allreduce: the dispatch, the slot reduction (small messages) and reduce-scatter
// (large messages); gather-reduce is in reduce_large.cpp.
#include <algorithm>
#include <cstring>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/reduce_kernels.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

void coll_engine::reduce(const void* input, void* output, std::size_t count, datatype type,
                         reduce_op op, int root, reduce_algorithm algorithm) {
  if (count == 0) return;
  const bool receiver = root < 0 || root == m_rank;
  if (m_size == 1) {
    if (receiver && input != output) copy_memory(output, input, count * size_of(type));
    return;
  }
  begin_call(call_kind::reduce, count * size_of(type), type, static_cast<std::uint32_t>(op),
             root < 0 ? -1 : root);
  entry_of(algorithm).run(*this, input, output, count, type, op, root);
}

void coll_engine::reduce_slots(const void* input, void* output, std::size_t count, datatype type,
                               reduce_op op, int root) {
  const std::size_t element = size_of(type);
  const std::size_t per_slot = count * element <= slot_payload ? count : slot_payload / element;
  const bool receiver = root < 0 || root == m_rank;
  const auto* in = static_cast<const std::byte*>(input);
  auto* out = static_cast<std::byte*>(output);
  for (std::size_t first = 0; first < count; first += per_slot) {
    const std::size_t n = std::min(per_slot, count - first);
    const std::uint32_t step = begin_step();
    ensure_free(step, slot_depth(n * element));
    copy_memory(slot_data(m_rank, step, n * element), in + first * element, n * element);
    store_slot(step, n * element);
    if (!receiver) wake_slot(step, n * element);
    if (receiver) {
      for (int rank = 0; rank < m_size; ++rank) {
        if (rank != m_rank) {
          // A reduce's root (never an allreduce's ranks: they run in step) reads ahead as a
          // broadcast's readers do.
          if (root >= 0 && slot_posted(rank, step, n * element))
            prefetch_next_slot(rank, step, n * element);
          wait_slot(rank, step, n * element, "reduce (a rank's slot)");
        }
        // This rank's own part comes from its private input (the same bits as its slot): by now
        // the others are reading the slot's line, and reading it back here would wait for them.
        m_inputs[static_cast<std::size_t>(rank)] =
            rank == m_rank ? in + first * element : slot_data(rank, step, n * element);
      }
      reduce_ordered(m_inputs.data(), m_size, out + first * element, nullptr, n, type, op);
      // finish_step and wake_slot under one fence: `done` as a release store first.
      auto& done = m_done[static_cast<std::size_t>(m_rank)].value;
      done.store(step, std::memory_order_release);
      wake_slot(step, n * element);
      m_wait->wake(reinterpret_cast<const std::uint32_t*>(&done));
      continue;
    }
    finish_step(step);
  }
}

void coll_engine::reduce_scatter(const void* input, void* output, std::size_t count, datatype type,
                                 reduce_op op, int root) {
  const std::size_t element = size_of(type);
  const std::size_t per_line = cache_line_size / element;
  const auto size = static_cast<std::size_t>(m_size);
  const auto me = static_cast<std::size_t>(m_rank);
  const bool receiver = root < 0 || root == m_rank;
  const bool others_receive = root < 0 || root != m_rank;
  // Per step every rank stages one chunk of its input; the staging half holds P of them.
  std::size_t step_bytes = m_tuning.region_bytes / size / cache_line_size * cache_line_size;
  if (!m_oversubscribed) step_bytes = std::min(step_bytes, m_tuning.chunk_bytes);
  const std::size_t step_elements = step_bytes / element;
  const auto* in = static_cast<const std::byte*>(input);
  auto* out = static_cast<std::byte*>(output);

  for (std::size_t first = 0; first < count; first += step_elements) {
    const std::size_t n = std::min(step_elements, count - first);
    const std::size_t lines = (n + per_line - 1) / per_line;
    auto slice_begin = [&](std::size_t slice) {
      return std::min(n, lines * slice / size * per_line);
    };
    const std::byte* in_chunk = in + first * element;
    std::byte* out_chunk = out + first * element;

    // 1. Stage the slices the other ranks reduce.
    const std::uint32_t staged = begin_step();
    ensure_free(staged, 2);
    std::byte* staging = region(staged);
    for (std::size_t slice = 0; slice < size; ++slice) {
      if (slice == me) continue;
      const std::size_t begin = slice_begin(slice);
      const std::size_t end = slice_begin(slice + 1);
      copy_to_shared(staging + me * step_bytes + begin * element, in_chunk + begin * element,
                     (end - begin) * element, m_tuning.streaming_stores);
    }
    post_region(staged);
    for (int rank = 0; rank < m_size; ++rank) {
      if (rank != m_rank) wait_region(rank, staged, "reduce (a rank's staged input)");
    }

    // 2. Reduce this rank's slice of every input, in rank order.
    const std::uint32_t reduced = begin_step();
    ensure_free(reduced, 2);
    std::byte* result = region(reduced);
    const std::size_t begin = slice_begin(me);
    const std::size_t end = slice_begin(me + 1);
    if (end > begin) {
      for (std::size_t rank = 0; rank < size; ++rank) {
        m_inputs[rank] =
            rank == me ? in_chunk + begin * element : staging + rank * step_bytes + begin * element;
      }
      if (!m_tuning.streaming_stores) {
        void* shared_out = others_receive ? result + begin * element : nullptr;
        void* own_out = receiver ? out_chunk + begin * element : nullptr;
        if (shared_out == nullptr) std::swap(shared_out, own_out);
        reduce_ordered(m_inputs.data(), m_size, shared_out, own_out, end - begin, type, op);
      } else {
        // A private buffer first, then the shared half with streaming stores: the others hold
        // that half's lines from reading it two steps ago (see shared_copy.hpp).
        const std::size_t slice_bytes = (end - begin) * element;
        std::byte* reduced_slice = out_chunk + begin * element;
        if (!receiver) {
          if (m_scratch.size() < slice_bytes) m_scratch.resize(slice_bytes);
          reduced_slice = m_scratch.data();
        }
        reduce_ordered(m_inputs.data(), m_size, reduced_slice, nullptr, end - begin, type, op);
        if (others_receive)
          copy_to_shared(result + begin * element, reduced_slice, slice_bytes, true);
      }
    }
    finish_step(staged);
    post_region(reduced);

    // 3. Gather the other slices.
    if (receiver) {
      for (std::size_t offset = 1; offset < size; ++offset) {
        const std::size_t rank = (me + offset) % size;
        wait_region(static_cast<int>(rank), reduced, "reduce (a rank's reduced slice)");
        const std::size_t slice_start = slice_begin(rank);
        const std::size_t slice_end = slice_begin(rank + 1);
        copy_memory(out_chunk + slice_start * element, result + slice_start * element,
                    (slice_end - slice_start) * element);
      }
    }
    finish_step(reduced);
  }
}

}  // namespace cachecomm::detail
