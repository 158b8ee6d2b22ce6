// Large reductions at 2 ranks: gather-reduce. Every rank stages its input in pipeline chunks and
// every receiver reduces all inputs itself (rank order, so every receiver gets the same bits).
#include <x86intrin.h>

#include <algorithm>
#include <cstring>

#include "coll/coll_engine.hpp"
#include "coll/reduce_kernels.hpp"
#include "coll/shared_copy.hpp"
#include "coll/store_mode.hpp"

namespace cachecomm::detail {

void coll_engine::reduce_gather(const void* input, void* output, std::size_t count, datatype type,
                                reduce_op op, int root) {
  const std::size_t element = size_of(type);
  const auto size = static_cast<std::size_t>(m_size);
  const auto me = static_cast<std::size_t>(m_rank);
  const bool receiver = root < 0 || root == m_rank;
  // A rooted reduce's root stages nothing: no other rank reads its chunks.
  const bool others_read = root < 0 || root != m_rank;
  // Step s uses half s % 2 of the data region, as every depth-2 user of the region does, so the
  // steps before and after this call need no other care. Each half holds `ring_half` chunks per
  // rank: as many as fit, so that consecutive steps (and calls) walk through the whole region and a
  // line is rewritten only after the others have read the rest of it. Ordinary stores need that
  // depth: they are fast only into lines that have left the reader's L2 (see the store mode below).
  const std::size_t fitting = std::min(reduce_gather_chunk, m_tuning.region_bytes / (size * 2)) /
                              cache_line_size * cache_line_size;
  // Allreduces below 64 KiB (adaptive_store_min_bytes) keep two fixed 64 KiB positions per half:
  // through the whole region they were slower in either store mode. So does a rooted reduce: with
  // the shallow ring the non-root's streaming copies were faster (OSU osu_reduce, 32 KiB, EPYC VM:
  // 2.3-2.8 us against 4.3-10.9 through the whole region), and its non-root, which leaves once its
  // chunks are staged, times only its own copies, not what they cost the root, so it has nothing
  // to choose a store mode from.
  const std::size_t message_bytes = count * element;
  const bool deep_ring = root < 0 && message_bytes >= adaptive_store_min_bytes;
  const std::size_t chunk_bytes = !deep_ring
                                      ? fitting
                                      : std::min(fitting, (message_bytes + cache_line_size - 1) /
                                                              cache_line_size * cache_line_size);
  const std::size_t ring_half = deep_ring ? m_half_bytes / (size * chunk_bytes) : 2;
  const auto depth = static_cast<std::uint32_t>(2 * ring_half);
  const std::size_t chunk_elements = chunk_bytes / element;
  const auto* in = static_cast<const std::byte*>(input);
  auto* out = static_cast<std::byte*>(output);
  const std::size_t chunks = (count + chunk_elements - 1) / chunk_elements;
  auto elements_of = [&](std::size_t chunk) {
    return std::min(chunk_elements, count - chunk * chunk_elements);
  };
  auto staging = [&](std::size_t rank, std::uint32_t step) {
    return region(step) + (rank * ring_half + (step >> 1U) % ring_half) * chunk_bytes;
  };

  // The store mode of this call's staging copies: fixed by CACHECOMM_STREAMING_STORES, or chosen
  // by this rank alone from the measured time of its own copies (store_mode.hpp). The bits staged
  // are the same either way, so the ranks need not agree.
  const bool adaptive = m_tuning.adaptive_stores && deep_ring;
  store_mode_chooser* chooser = adaptive ? &m_store_modes.of(message_bytes) : nullptr;
  const bool streaming =
      adaptive ? chooser->mode() == store_mode::streaming : m_tuning.streaming_stores;
  // The whole call is timed, not only the copies: ordinary stores also let the readers take the
  // lines from the shared L3 instead of memory (1 MiB, EPYC VM: the copy alone was only 20 %
  // faster, the call 2x), and at 32 KiB the copy was slower while the call was faster. The other
  // rank's time moves with it, since each waits for the other's chunks.
  const std::uint64_t start = adaptive ? __rdtsc() : 0;

  const std::uint32_t first_step = m_step + 1;
  auto stage = [&](std::size_t chunk) {
    const std::uint32_t step = begin_step();
    // The first two steps may reuse a half that an earlier call's last steps used in another
    // layout.
    ensure_free(step, chunk < 2 ? 2 : depth);
    if (others_read) {
      copy_to_shared(staging(me, step), in + chunk * chunk_elements * element,
                     elements_of(chunk) * element, streaming);
    }
    post_region(step);
  };
  stage(0);
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
    // Stage the next chunk before reducing this one: the others read it while this rank reduces.
    if (chunk + 1 < chunks) stage(chunk + 1);
    const auto step = static_cast<std::uint32_t>(first_step + chunk);
    if (receiver) {
      for (std::size_t rank = 0; rank < size; ++rank) {
        if (rank == me) {
          // This rank's part comes from its private input (the same bits as its staged copy).
          m_inputs[rank] = in + chunk * chunk_elements * element;
        } else {
          wait_region(static_cast<int>(rank), step, "reduce (a rank's staged chunk)");
          m_inputs[rank] = staging(rank, step);
        }
      }
      reduce_ordered(m_inputs.data(), m_size, out + chunk * chunk_elements * element, nullptr,
                     elements_of(chunk), type, op);
    }
    finish_step(step);
  }
  if (adaptive) {
    chooser->record(static_cast<double>(__rdtsc() - start) * 1024.0 /
                    static_cast<double>(message_bytes));
  }
}

}  // namespace cachecomm::detail
