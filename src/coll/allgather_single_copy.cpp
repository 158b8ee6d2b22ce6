// Single-copy allgather: every rank publishes the address of its block and pulls the others' blocks
// straight from their buffers with cross-memory attach (process_vm_readv), instead of each block
// being copied into shared memory and out again.
#include <atomic>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

namespace {

std::atomic_ref<std::uint64_t> address_of(padded_flag& line) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(&line));
}

}  // namespace

void coll_engine::allgather_single_copy(const void* input, void* output, std::size_t block_bytes) {
  auto* out = static_cast<std::byte*>(output);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  // One step, no shared buffer: the address line is rewritten only in a later call, and this rank
  // gets there only after every reader has finished this step (the wait at the end).
  const std::uint32_t step = begin_step();
  address_of(m_address[me])
      .store(reinterpret_cast<std::uintptr_t>(input), std::memory_order_relaxed);
  post_region(step);
  int error_number = 0;
  int failed_rank = -1;
  // Start at the next rank: each rank's block is read by one rank at a time, not by all at once.
  for (std::size_t distance = 1; distance < size && error_number == 0; ++distance) {
    const std::size_t rank = (me + distance) % size;
    wait_region(static_cast<int>(rank), step, "allgather (a rank's block address)");
    const std::uint64_t address = address_of(m_address[rank]).load(std::memory_order_relaxed);
    error_number =
        m_cross->copy_from(static_cast<int>(rank), out + rank * block_bytes, address, block_bytes);
    if (error_number != 0) failed_rank = static_cast<int>(rank);
  }
  // Own block last: the others are pulling it meanwhile, and reading it here disturbs nothing.
  if (input != out + me * block_bytes) copy_memory(out + me * block_bytes, input, block_bytes);
  finish_step(step);
  // The others read this rank's buffer: the caller may reuse it only once they all have.
  for (std::size_t rank = 0; rank < size; ++rank) {
    if (rank != me) {
      wait_for(m_done[rank].value, step, static_cast<int>(rank),
               "allgather (a single-copy reader)");
    }
  }
  if (error_number != 0) {
    throw cross_memory_failure("single-copy allgather", false, failed_rank, error_number);
  }
}

}  // namespace cachecomm::detail
