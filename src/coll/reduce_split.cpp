// split-pipeline: reduce-scatter and allgather of every chunk in one pipeline. Each rank owns
// slice `rank` of every chunk; while it reduces its slice of chunk c, the others are already
// reading the slices of chunk c + 1 it staged, and it then copies out the slices of chunk c - 1
// the others reduced. No phase waits for all ranks, and the steps walk through every position of
// the data region instead of reusing two, so a rewritten line was read long ago (see "Where the
// time went" in docs/architecture.md).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "coll/coll_engine.hpp"
#include "coll/reduce_kernels.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

void coll_engine::reduce_split(const void* input, void* output, std::size_t count, datatype type,
                               reduce_op op, int root) {
  const std::size_t element = size_of(type);
  const std::size_t per_line = cache_line_size / element;
  const auto size = static_cast<std::size_t>(m_size);
  const auto me = static_cast<std::size_t>(m_rank);
  const bool receiver = root < 0 || root == m_rank;
  const bool others_receive = root < 0 || root != m_rank;
  // A step's slot holds one area per rank: the P - 1 slices it stages for the others (a stage
  // step) or its reduced slice (a result step). Each half of the region holds at least two slots
  // (a ring of at least 4 steps: a rank is at most 3 steps ahead of what it still reads).
  const std::size_t area_slices = std::max<std::size_t>(size - 1, 1);
  const std::size_t slice_bytes =
      std::min(split_slice_bytes, m_tuning.region_bytes / (2 * size * area_slices)) /
      cache_line_size * cache_line_size;
  if (slice_bytes == 0) {
    // Too many ranks for the region (not at its 64 KiB minimum below 16 ranks).
    reduce_scatter(input, output, count, type, op, root);
    return;
  }
  const std::size_t area_bytes = area_slices * slice_bytes;
  const std::size_t slot_bytes = size * area_bytes;
  const std::size_t slots_per_half = m_half_bytes / slot_bytes;
  const auto depth = static_cast<std::uint32_t>(2 * slots_per_half);
  const std::size_t chunk_elements = size * slice_bytes / element;
  const std::size_t chunks = (count + chunk_elements - 1) / chunk_elements;
  const auto* in = static_cast<const std::byte*>(input);
  auto* out = static_cast<std::byte*>(output);

  auto area = [&](std::size_t rank, std::uint32_t step) {
    return region(step) + ((step >> 1U) % slots_per_half) * slot_bytes + rank * area_bytes;
  };
  // Where `owner` stages slice `slice` (never its own) in its area.
  auto staged_slice = [&](std::size_t owner, std::uint32_t step, std::size_t slice) {
    return area(owner, step) + (slice < owner ? slice : slice - 1) * slice_bytes;
  };
  auto chunk_length = [&](std::size_t chunk) {
    return std::min(chunk_elements, count - chunk * chunk_elements);
  };
  // Slices end on cache lines, so no line is written by two ranks.
  auto slice_begin = [&](std::size_t chunk, std::size_t slice) {
    const std::size_t n = chunk_length(chunk);
    const std::size_t lines = (n + per_line - 1) / per_line;
    return std::min(n, lines * slice / size * per_line);
  };

  // Streamed in pieces that stay in L1 between the reduction and the copy.
  constexpr std::size_t stream_block_bytes = 4096;
  m_block_inputs.resize(size);
  std::size_t steps_begun = 0;
  auto stage = [&](std::size_t chunk) {
    const std::uint32_t step = begin_step();
    // The first two steps may reuse a half that an earlier call's last steps used in another
    // layout (as in reduce_gather).
    ensure_free(step, steps_begun++ < 2 ? 2 : depth);
    const std::byte* in_chunk = in + chunk * chunk_elements * element;
    for (std::size_t slice = 0; slice < size; ++slice) {
      if (slice == me) continue;
      const std::size_t begin = slice_begin(chunk, slice);
      const std::size_t end = slice_begin(chunk, slice + 1);
      copy_to_shared(staged_slice(me, step, slice), in_chunk + begin * element,
                     (end - begin) * element, m_tuning.streaming_stores);
    }
    post_region(step);
    return step;
  };
  auto reduce_own_slice = [&](std::size_t chunk, std::uint32_t staged) {
    const std::size_t begin = slice_begin(chunk, me);
    const std::size_t end = slice_begin(chunk, me + 1);
    const std::size_t offset = (chunk * chunk_elements + begin) * element;
    for (std::size_t rank = 0; rank < size; ++rank) {
      if (rank == me) {
        m_inputs[rank] = in + offset;  // the same bits as its staged copy would be
      } else {
        wait_region(static_cast<int>(rank), staged, "reduce (a rank's staged slices)");
        m_inputs[rank] = staged_slice(rank, staged, me);
      }
    }
    const std::uint32_t step = begin_step();
    ensure_free(step, steps_begun++ < 2 ? 2 : depth);
    const std::size_t slice_bytes_now = (end - begin) * element;
    if (end > begin) {
      std::byte* shared_out = others_receive ? area(me, step) : nullptr;
      std::byte* own_out = receiver ? out + offset : nullptr;
      if (m_tuning.streaming_stores && shared_out != nullptr) {
        // Into a private buffer first, then streamed into the shared area (shared_copy.hpp).
        if (own_out == nullptr) {
          if (m_scratch.size() < slice_bytes_now) m_scratch.resize(slice_bytes_now);
          own_out = m_scratch.data();
        }
        // Block by block, so each block is streamed from L1 right after it is computed (a second
        // pass over the slice cost 12% at 2 ranks on the EPYC VM).
        for (std::size_t done = 0; done < slice_bytes_now; done += stream_block_bytes) {
          const std::size_t part = std::min(stream_block_bytes, slice_bytes_now - done);
          for (std::size_t rank = 0; rank < size; ++rank)
            m_block_inputs[rank] = static_cast<const std::byte*>(m_inputs[rank]) + done;
          reduce_ordered(m_block_inputs.data(), m_size, own_out + done, nullptr, part / element,
                         type, op);
          stream_to_shared(shared_out + done, own_out + done, part);
        }
        _mm_sfence();  // the streamed result is visible before post_region publishes it
      } else if (own_out != nullptr) {
        reduce_ordered(m_inputs.data(), m_size, own_out, shared_out, end - begin, type, op);
      } else {
        reduce_ordered(m_inputs.data(), m_size, shared_out, nullptr, end - begin, type, op);
      }
    }
    // Every rank reads its input's slices before the results are written, so an in-place output
    // overwrites nothing still to be read.
    finish_step(staged);
    post_region(step);
    return step;
  };
  auto copy_out = [&](std::size_t chunk, std::uint32_t reduced) {
    if (receiver) {
      for (std::size_t offset = 1; offset < size; ++offset) {
        const std::size_t rank = (me + offset) % size;
        wait_region(static_cast<int>(rank), reduced, "reduce (a rank's reduced slice)");
        const std::size_t begin = slice_begin(chunk, rank);
        const std::size_t end = slice_begin(chunk, rank + 1);
        if (end > begin) {
          copy_memory(out + (chunk * chunk_elements + begin) * element, area(rank, reduced),
                      (end - begin) * element);
        }
      }
    }
    finish_step(reduced);
  };

  // Step order (the same on every rank): S0 S1 R0 S2 R1 S3 R2 ...; a rank finishes them in that
  // order too (S_c after reducing chunk c, R_c after copying it out one chunk later).
  std::uint32_t next_staged = stage(0);
  std::uint32_t previous_reduced = 0;
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
    const std::uint32_t staged = next_staged;
    if (chunk + 1 < chunks) next_staged = stage(chunk + 1);
    const std::uint32_t reduced = reduce_own_slice(chunk, staged);
    if (chunk > 0) copy_out(chunk - 1, previous_reduced);
    previous_reduced = reduced;
  }
  if (chunks > 0) copy_out(chunks - 1, previous_reduced);
}

}  // namespace cachecomm::detail
