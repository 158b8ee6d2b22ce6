// The handshake of the single-copy block collectives (gather, scatter, alltoall): a rank publishes
// the address of its buffer for one step, its readers pull from it with cross-memory attach, and
// the owner waits until they all have finished the step before its caller may reuse the buffer.
#include <atomic>

#include "coll/coll_engine.hpp"

namespace cachecomm::detail {

namespace {

std::atomic_ref<std::uint64_t> address_word(padded_flag& line) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(&line));
}

}  // namespace

void coll_engine::publish_address(std::uint32_t step, const void* address) {
  // The line is rewritten only in a later call, which this rank starts only after its readers
  // finished this step (wait_readers).
  address_word(m_address[static_cast<std::size_t>(m_rank)])
      .store(reinterpret_cast<std::uintptr_t>(address), std::memory_order_relaxed);
  post_region(step);  // release: the address is visible before `posted` says so
}

std::uint64_t coll_engine::published_address(int rank, std::uint32_t step, const char* what) {
  wait_region(rank, step, what);
  return address_word(m_address[static_cast<std::size_t>(rank)]).load(std::memory_order_relaxed);
}

void coll_engine::wait_readers(std::uint32_t step, const char* what) {
  for (int rank = 0; rank < m_size; ++rank) {
    if (rank != m_rank)
      m_wait->wait_reach(m_done[static_cast<std::size_t>(rank)].value, step, rank, what);
  }
}

}  // namespace cachecomm::detail
