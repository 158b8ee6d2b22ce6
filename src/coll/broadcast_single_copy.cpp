// Single-copy broadcast: readers pull from the root's buffer with cross-memory attach while the
// root pushes the tail of the message into theirs.
#include <atomic>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"

namespace cachecomm::detail {

namespace {

std::uint64_t& address_word(padded_flag& line) {
  return *reinterpret_cast<std::uint64_t*>(&line);
}

}  // namespace

void coll_engine::broadcast_single_copy(void* buffer, std::size_t bytes, int root) {
  // Root and readers copy at once: each reader pulls the front of the message from the root's
  // buffer while the root pushes the tail (1/P of it) into every reader's buffer. One core alone
  // cannot keep enough line transfers in flight to use the bandwidth between caches.
  const auto size = static_cast<std::size_t>(m_size);
  const std::size_t pushed = m_cma_push && bytes >= (64U << 10) ? bytes / size / 4096 * 4096 : 0;
  const std::size_t pulled = bytes - pushed;
  auto* data = static_cast<std::byte*>(buffer);
  const std::uint32_t step = begin_step();
  auto& own_line = m_address[static_cast<std::size_t>(m_rank)];
  std::atomic_ref<std::uint64_t>(address_word(own_line))
      .store(reinterpret_cast<std::uintptr_t>(buffer), std::memory_order_relaxed);
  if (m_rank == root) {
    // Word 1 of the root's line: the step whose push failed (readers then pull everything).
    int push_error = 0;
    post_region(step);
    if (pushed > 0) {
      for (int rank = 0; rank < m_size; ++rank) {
        if (rank == m_rank) continue;
        wait_region(rank, step, "broadcast (single-copy reader's address)");
        const std::uint64_t address =
            std::atomic_ref<std::uint64_t>(address_word(m_address[static_cast<std::size_t>(rank)]))
                .load(std::memory_order_relaxed);
        if (push_error == 0) {
          push_error = m_cross->copy_to(rank, data + pulled, address + pulled, pushed);
        }
      }
      std::atomic_ref<std::uint64_t>((&address_word(own_line))[1])
          .store(push_error == 0 ? 0 : step, std::memory_order_relaxed);
    }
    finish_step(step);  // readers wait for it when part of the message is pushed
    // The readers copy from the caller's buffer: it must outlive every read.
    for (int rank = 0; rank < m_size; ++rank) {
      if (rank != m_rank) {
        wait_for(m_done[static_cast<std::size_t>(rank)].value, step, rank,
                 "broadcast (single-copy reader)");
      }
    }
    return;
  }
  post_region(step);  // this rank's address, for the root's push
  wait_region(root, step, "broadcast (root's address)");
  // Every rank posts its address, so a rank that names another root (an erroneous program) would
  // find a reader's post here and copy from it: its call line, written before, names the root.
  if (call_description seen; read_call_line(root, seen) && seen.number == m_call.number &&
                             seen.root != m_call.root) [[unlikely]] {
    call_mismatch(root, step, seen.info, seen.bytes, seen.root);
  }
  auto& root_line = m_address[static_cast<std::size_t>(root)];
  const std::uint64_t address =
      std::atomic_ref<std::uint64_t>(address_word(root_line)).load(std::memory_order_relaxed);
  int error_number = m_cross->copy_from(root, data, address, pulled);
  if (pushed > 0) {
    wait_for(m_done[static_cast<std::size_t>(root)].value, step, root,
             "broadcast (root's single-copy push)");
    const std::uint64_t failed = std::atomic_ref<std::uint64_t>((&address_word(root_line))[1])
                                     .load(std::memory_order_relaxed);
    if (error_number == 0 && failed == step) {
      error_number = m_cross->copy_from(root, data + pulled, address + pulled, pushed);
    }
  }
  finish_step(step);  // let the root go; this rank reports a failure
  if (error_number != 0) {
    throw cross_memory_failure("single-copy broadcast", false, root, error_number);
  }
}

}  // namespace cachecomm::detail
