// Stage-or-pull allgather: each rank decides, call by call and on its own, how its block reaches
// the others. Staged: copied into its part of the data region with ordinary stores; the readers
// copy it out of this core's cache (two user-space copies at local-copy speed when the other core
// does not hold the lines). Pulled: the rank publishes its buffer's address and the readers pull
// the block with process_vm_readv (one copy, but the kernel pins every page: about 4x a memcpy per
// byte on a 2-core EPYC VM, from the rank's own pid as from the other's). Which one is cheaper
// changes with the VM's placement from minute to minute, so the owner measures its staged copies
// against its local copy (staging_choice.hpp). Each step's posted word says which way a chunk came,
// so readers need no agreement on the choice, and the bits are the same either way.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

namespace {

/// Words 2 and 3 of the address line, by step parity (words 0 and 1 belong to the single-copy
/// paths): 0 = the chunk is in the region, else the address of the owner's block. A writer
/// rewrites a parity's word only after ensure_free(step, 2), i.e. once every reader has finished
/// the step that used it.
std::atomic_ref<std::uint64_t> block_word(padded_flag& line, std::uint32_t step) {
  return std::atomic_ref<std::uint64_t>(reinterpret_cast<std::uint64_t*>(&line)[2 + (step & 1U)]);
}

double nanoseconds(std::chrono::steady_clock::duration elapsed) {
  return std::chrono::duration<double, std::nano>(elapsed).count();
}

}  // namespace

void coll_engine::allgather_stage_or_pull(const void* input, void* output,
                                          std::size_t block_bytes) {
  using clock = std::chrono::steady_clock;
  auto* out = static_cast<std::byte*>(output);
  const auto* in = static_cast<const std::byte*>(input);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const bool in_place = input == out + me * block_bytes;
  bool stage = false;
  switch (m_tuning.allgather_staging) {
    case staging_mode::stage: stage = true; break;
    case staging_mode::pull: break;
    case staging_mode::alternate:
      stage = ((m_call.number + static_cast<std::uint32_t>(m_rank)) & 1U) == 0;
      break;
    case staging_mode::automatic:
      // Blocks above one region half take several steps, and each step rewrites lines the
      // readers read one step before: staging lost to the pull there (4 MiB blocks, 2 ranks). In
      // place there is no local copy of the block to hold the staged one to.
      stage = !in_place && block_bytes <= m_tuning.region_bytes && m_staging.stage_next();
      break;
  }
  const std::size_t chunk = m_tuning.region_bytes / size / cache_line_size * cache_line_size;
  clock::duration staging_time{};
  clock::duration local_time{};
  bool own_copied = in_place;
  int error_number = 0;
  int failed_rank = -1;
  std::uint32_t step = 0;
  for (std::size_t offset = 0; offset < block_bytes; offset += chunk) {
    const std::size_t n = std::min(chunk, block_bytes - offset);
    step = begin_step();
    ensure_free(step, 2);
    std::uint64_t word = 0;
    if (stage) {
      const auto start = clock::now();
      copy_to_shared(region(step) + me * chunk, in + offset, n, false);
      staging_time += clock::now() - start;
    } else {
      word = reinterpret_cast<std::uintptr_t>(input);
    }
    block_word(m_address[me], step).store(word, std::memory_order_relaxed);
    post_region(step);  // release: the chunk (or the address) is visible before `posted` says so
    if (!own_copied) {  // while the others read this rank's first chunk
      const auto start = clock::now();
      copy_memory(out + me * block_bytes, input, block_bytes);
      local_time = clock::now() - start;
      own_copied = true;
    }
    // Start at the next rank: each rank's block is read by one rank at a time.
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      wait_region(static_cast<int>(rank), step, "allgather (a rank's block or its address)");
      const std::uint64_t source =
          block_word(m_address[rank], step).load(std::memory_order_relaxed);
      std::byte* into = out + rank * block_bytes + offset;
      if (source == 0) {
        copy_memory(into, region(step) + rank * chunk, n);
      } else if (error_number == 0) {  // after a failed pull, this rank only takes its steps
        error_number = m_cross->copy_from(static_cast<int>(rank), into, source + offset, n);
        if (error_number != 0) failed_rank = static_cast<int>(rank);
      }
    }
    finish_step(step);
  }
  // Readers that pull read this rank's buffer: the caller may reuse it only once they all have.
  if (!stage) wait_readers(step, "allgather (a rank pulling this rank's block)");
  if (stage && m_tuning.allgather_staging == staging_mode::automatic) {
    m_staging.record_staged(nanoseconds(staging_time) / static_cast<double>(block_bytes),
                            nanoseconds(local_time) / static_cast<double>(block_bytes));
  }
  if (error_number != 0) {
    throw cross_memory_failure("stage-or-pull allgather", false, failed_rank, error_number);
  }
}

}  // namespace cachecomm::detail
