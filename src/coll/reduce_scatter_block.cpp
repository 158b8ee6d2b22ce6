// reduce_scatter_block and reduce_scatter (per-rank counts) on one node: the dispatch, central
// (every rank copies its input into its slot or its part of the data region, rank r combines block
// r of all of them) and single copy (rank r pulls block r of every input from its owner's buffer).
// Both combine the inputs in rank order with reduce_ordered, so every result has the bits of the
// rank-ordered fold. reduce_scatter_block is the case whose blocks all have one count.
#include <algorithm>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/reduce_kernels.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

void coll_engine::reduce_scatter_block(const void* input, void* output, std::size_t count,
                                       datatype type, reduce_op op,
                                       reduce_scatter_algorithm algorithm) {
  const reduce_scatter_entry& entry = entry_of(algorithm);  // refuses `automatic` first
  if (count == 0) return;
  const std::size_t block = count * size_of(type);
  const auto me = static_cast<std::size_t>(m_rank);
  if (m_size == 1) {
    if (input != output) copy_memory(output, input, block);
    return;
  }
  begin_call(call_kind::reduce_scatter, block, type, static_cast<std::uint32_t>(op));
  reduce_scatter_call call;
  call.input = input;
  call.own = static_cast<const std::byte*>(input) + me * block;
  call.output = output;
  call.count = count;
  call.total = count * static_cast<std::size_t>(m_size);
  call.largest = count;
  call.type = type;
  call.op = op;
  entry.run(*this, call);
}

void coll_engine::reduce_scatter_counts(const reduce_scatter_call& call, std::uint64_t description,
                                        reduce_scatter_algorithm algorithm) {
  const reduce_scatter_entry& entry = entry_of(algorithm);
  const auto me = static_cast<std::size_t>(m_rank);
  if (m_size == 1) {
    const std::size_t bytes = call.count_of(me) * size_of(call.type);
    if (bytes != 0 && call.own != call.output) std::memmove(call.output, call.own, bytes);
    return;
  }
  // Every call takes its steps, also one without elements: a rank whose counts differ from the
  // others' (a zero total among them) finds their descriptions in the call and fails instead of
  // waiting for steps they never take.
  begin_call(call_kind::reduce_scatter_counts, description, call.type,
             static_cast<std::uint32_t>(call.op));
  entry.run(*this, call);
}

void coll_engine::reduce_scatter_central(const reduce_scatter_call& call) {
  const std::size_t element = size_of(call.type);
  const auto* in = static_cast<const std::byte*>(call.input);
  auto* out = static_cast<std::byte*>(call.output);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const std::size_t total = call.total * element;
  const std::size_t mine = call.count_of(me);
  const std::size_t my_offset = call.offset_of(me) * element;
  if (total <= slot_payload) {
    // Every input whole in its owner's slot; each rank reads its block from all of them.
    const std::uint32_t step = begin_step();
    ensure_free(step, slot_depth(total));
    if (total != 0) copy_memory(slot_data(m_rank, step, total), in, total);
    // As allreduce's slots: the slot by a release store, the others' slots read, then one fence
    // for the slot's wake and `done` (reduce_slots).
    store_slot(step, total);
    if (mine == 0) {
      // Nothing to receive: post and leave, as a reduce's contributors do (OSU's
      // osu_reduce_scatter at 4 and 8 B on 4 ranks over 2 cores, where three and two ranks
      // receive nothing: 2.6-3.3 us per call before, 1.6-1.9 after, Open MPI 2.0-2.7). The ranks
      // that read this slot compare its description with theirs.
      wake_slot(step, total);
      finish_step(step);
      return;
    }
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      wait_slot(static_cast<int>(rank), step, total, "reduce-scatter (a rank's slot)");
      m_inputs[rank] = slot_data(static_cast<int>(rank), step, total) + my_offset;
    }
    m_inputs[me] = call.own;
    reduce_ordered(m_inputs.data(), m_size, out, nullptr, mine, call.type, call.op);
    auto& done = m_done[me].value;
    done.store(step, std::memory_order_release);
    wake_slot(step, total);
    m_wait->wake(reinterpret_cast<const std::uint32_t*>(&done));
    return;
  }
  // Each rank owns an area of the region half with a chunk per destination block
  // (destination_chunks), the blocks' elements [first, first + per_step) in one step. In place, the
  // result overwrites the start of the input only up to what this step has already staged (every
  // block starts at or after its result's place).
  const std::size_t chunk = whole_chunk(
      fitted_chunk(m_tuning.region_bytes / (size * size), call.largest * element), element);
  const std::size_t per_step = chunk / element;
  // Messages smaller than a rank's share of a half rotate through it (region_ring).
  const destination_chunks chunks{chunk, call.largest * element <= chunk};
  const region_ring ring = region_ring_of(chunks.per_area(size));
  ring_stores stores(*this, call.largest * element);
  auto part = [&](std::size_t rank, std::size_t first) {
    const std::size_t count = call.count_of(rank);
    return first < count ? std::min(per_step, count - first) : std::size_t{0};
  };
  for (std::size_t first = 0; first < call.largest; first += per_step) {
    const std::uint32_t step = begin_step();
    ensure_free(step, 2);
    std::byte* staged = ring_area(ring, me, step);
    for (std::size_t rank = 0; rank < size; ++rank) {
      const std::size_t n = part(rank, first);
      if (rank != me && n != 0) {
        stores.copy(staged + chunks.offset(rank, me), in + (call.offset_of(rank) + first) * element,
                    n * element);
      }
    }
    post_region(step);
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      wait_region(static_cast<int>(rank), step, "reduce-scatter (a rank's blocks)");
      m_inputs[rank] = ring_area(ring, rank, step) + chunks.offset(me, rank);
    }
    m_inputs[me] = static_cast<const std::byte*>(call.own) + first * element;
    reduce_ordered(m_inputs.data(), m_size, out + first * element, nullptr, part(me, first),
                   call.type, call.op);
    finish_step(step);
  }
  stores.finish();
}

void coll_engine::reduce_scatter_single_copy(const reduce_scatter_call& call) {
  const std::size_t element = size_of(call.type);
  auto* out = static_cast<std::byte*>(call.output);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const std::size_t count = call.count_of(me);
  const std::size_t block = count * element;
  const std::size_t my_offset = call.offset_of(me) * element;
  // One step: the others read this rank's input until they finish it (the wait at the end), so
  // the caller must not pass an input that the result overwrites (the entry point stages it).
  const std::uint32_t step = begin_step();
  publish_address(step, call.input);
  for (std::size_t rank = 0; rank < size; ++rank) {
    if (rank != me) {
      m_addresses[rank] = published_address(static_cast<int>(rank), step,
                                            "reduce-scatter (a rank's input address)");
    }
  }
  const std::size_t chunk =
      whole_chunk(std::min(pull_chunk_bytes, std::max(block, element)), element);
  const std::size_t per_step = chunk / element;
  m_pulled.resize(size * chunk);
  int error_number = 0;
  int failed_rank = -1;
  for (std::size_t first = 0; first < count && error_number == 0; first += per_step) {
    const std::size_t n = std::min(per_step, count - first);
    const std::size_t offset = my_offset + first * element;
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
    m_inputs[me] = static_cast<const std::byte*>(call.own) + first * element;
    reduce_ordered(m_inputs.data(), m_size, out + first * element, nullptr, n, call.type, call.op);
  }
  finish_step(step);
  wait_readers(step, "reduce-scatter (a single-copy reader)");
  if (error_number != 0) {
    throw cross_memory_failure("single-copy reduce-scatter", false, failed_rank, error_number);
  }
}

}  // namespace cachecomm::detail
