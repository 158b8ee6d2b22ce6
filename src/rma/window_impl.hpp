// State behind cachecomm::window: the node segment (regions, match vectors, completion counters)
// and, when the communicator spans nodes, the MPI window and notification channel for remote ranks.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "cachecomm/window.hpp"
#include "core/comm_impl.hpp"
#include "rma/accumulate.hpp"
#include "shm/segment.hpp"

namespace cachecomm::detail {

/// Owns an MPI window opened for passive access to every rank (lock_all) for the remote path.
class mpi_window_owner {
 public:
  mpi_window_owner() = default;
  mpi_window_owner(void* base, std::size_t bytes, std::size_t disp_unit, MPI_Comm comm);
  ~mpi_window_owner();
  mpi_window_owner(const mpi_window_owner&) = delete;
  mpi_window_owner& operator=(const mpi_window_owner&) = delete;
  mpi_window_owner(mpi_window_owner&& other) noexcept : m_window(other.m_window) {
    other.m_window = MPI_WIN_NULL;
  }
  mpi_window_owner& operator=(mpi_window_owner&& other) noexcept;
  [[nodiscard]] MPI_Win get() const { return m_window; }

 private:
  void release() noexcept;
  MPI_Win m_window = MPI_WIN_NULL;
};

class window_impl {
 public:
  /// `node_regions`: null, or the region of each node rank, mapped in this process, in memory the
  /// caller owns (then the segment holds only the synchronization words).
  window_impl(comm& communicator, std::size_t bytes, std::size_t disp_unit,
              const std::vector<std::byte*>* node_regions = nullptr);
  ~window_impl();
  window_impl(const window_impl&) = delete;
  window_impl& operator=(const window_impl&) = delete;

  [[nodiscard]] std::byte* local_base() const {
    return m_region[static_cast<std::size_t>(m_node_rank)];
  }
  [[nodiscard]] std::size_t size_of(int target) const;
  [[nodiscard]] std::size_t disp_unit_of(int target) const;
  [[nodiscard]] int rank() const { return m_rank; }
  [[nodiscard]] int size() const { return m_size; }
  [[nodiscard]] bool is_node_local(int target) const;
  [[nodiscard]] bool atomic_aligned(int target, std::size_t displacement,
                                    std::size_t alignment) const;

  void put(const void* origin, std::size_t bytes, int target, std::size_t displacement);
  void get(void* result, std::size_t bytes, int target, std::size_t displacement);
  void accumulate(const void* origin, std::size_t count, datatype type, reduce_op op, int target,
                  std::size_t displacement);
  void fetch_and_accumulate(const void* origin, void* result, std::size_t count, datatype type,
                            reduce_op op, int target, std::size_t displacement);
  void compare_and_swap(const void* origin, const void* compare, void* result,
                        std::size_t element_bytes, int target, std::size_t displacement);
  /// Leaves the fence epoch without synchronizing (a fence followed by no access is no epoch in
  /// MPI, so PSCW may follow it without MPI_MODE_NOSUCCEED).
  void leave_fence_epoch() { m_fence_open = false; }

  void fence(fence_flag flag);
  void post(const rank_group& origins);
  void start(const rank_group& targets);
  void complete();
  void wait();
  bool test();

 private:
  // Checks the access epoch, the target and the range; waits for the target's post if this is
  // the first access to it in a PSCW epoch. Returns the byte offset in the target's region.
  std::size_t prepare_access(int target, std::size_t displacement, std::size_t bytes,
                             const char* what);
  void check_rank(int target, const char* what) const;
  [[nodiscard]] std::vector<int> checked_group(const rank_group& group, const char* what) const;
  // Trigger-only synchronization: returns once `target` has posted the exposure epoch this rank's
  // current access epoch matches.
  void await_post(int target, const char* what);
  void close_exposure();
  /// At free (collective): cancel pending receives, then receive every notice sent but not yet
  /// received, so that the notification communicator is freed empty.
  void drain_notices() noexcept;
  // Waits through the node's waiter; on a window spanning nodes each poll also drives MPI's
  // progress, because MPI accumulates from other ranks may need this process to apply them.
  template <typename Ready>
  void wait_progressing(const std::uint32_t* word, Ready&& ready, int waited_node_rank,
                        const char* what) {
    if (!m_multi_node) {
      m_comm->wait().wait(word, ready, waited_node_rank, what);
      return;
    }
    m_comm->wait().wait(
        word, [&] { return ready() || (drive_mpi_progress(), ready()); }, waited_node_rank, what);
  }
  void drive_mpi_progress() const;
  // The node-local destination of an atomic access, checked for the alignment atomics need.
  std::byte* atomic_destination(int target, std::size_t offset, std::size_t alignment,
                                const char* what) const;
  void flush_remote();
  void wait_mpi_request(MPI_Request& request, int peer, const char* what);
  [[nodiscard]] bool local_completions_done() const;
  [[noreturn]] void name_late_origins(const peer_failure& timeout);

  // Shared words (in the node segment).
  [[nodiscard]] std::atomic<std::uint32_t>& match_entry(int origin_node, int target_node) const;
  [[nodiscard]] std::atomic<std::uint32_t>& completion_counter(int target_node) const;
  [[nodiscard]] std::atomic<std::uint32_t>& completion_record(int target_node,
                                                              int origin_node) const;

  /// Node rank of comm rank `rank`, -1 on other nodes (the comm's node map).
  [[nodiscard]] int local_rank_of(int rank) const { return m_comm->topology().local_rank(rank); }

  comm_impl* m_comm = nullptr;
  int m_rank = 0;
  int m_size = 1;
  int m_node_rank = 0;
  int m_node_size = 1;
  std::vector<std::uint64_t> m_sizes;  ///< bytes each comm rank exposes
  std::vector<std::uint64_t> m_units;  ///< displacement unit of each comm rank
  shm_segment m_segment;
  std::vector<std::byte*> m_region;  ///< node rank -> its region in the segment
  std::size_t m_match_offset = 0;
  std::size_t m_match_stride = 0;
  std::size_t m_target_offset = 0;
  std::size_t m_target_stride = 0;
  accumulate_stripes m_stripes;

  // Remote nodes (empty on a single-node window).
  bool m_multi_node = false;
  mpi_comm_owner m_notify_comm;  ///< post/complete notifications to remote ranks
  mpi_window_owner m_mpi_window;
  bool m_mpi_dirty = false;  ///< MPI operations issued since the last flush

  // Epoch state.
  bool m_fence_open = false;
  bool m_access_open = false;
  bool m_exposure_open = false;
  std::vector<int> m_start_group;
  std::vector<int> m_access_slot;           ///< comm rank -> position in the start group, or -1
  std::vector<std::uint8_t> m_target_seen;  ///< per start-group position: post already observed
  /// Serializes the first access to a target in a PSCW epoch (await_post updates the origin-side
  /// copies) when several threads access in one epoch; later accesses never take it.
  std::mutex m_first_access_mutex;
  // Origin side, per comm rank: the cached copy of this rank's match vector (the last post serial
  // read from each target) and the serial consumed by the last completed epoch with it.
  std::vector<std::uint32_t> m_match_copy;
  std::vector<std::uint32_t> m_consumed;
  // Target side.
  std::vector<int> m_post_group;
  std::vector<std::uint32_t> m_posted_to;  ///< per comm rank: serial of this rank's last post to it
  std::uint32_t m_completions_expected = 0;  ///< value the completion counter reaches at WAIT
  std::vector<MPI_Request> m_remote_completions;
  std::vector<int> m_remote_completion_ranks;
  std::vector<std::uint32_t> m_remote_completion_serials;
  // Post and complete messages to and from ranks on other nodes, per comm rank. A window freed
  // with messages nobody received (an epoch that was never started or ended, e.g. after a
  // timeout) receives them at free, or MPI would find them pending on the freed communicator.
  struct notice_counts {
    std::uint32_t posts = 0;
    std::uint32_t completes = 0;
  };
  std::vector<notice_counts> m_notices_sent;
  std::vector<notice_counts> m_notices_received;
};

}  // namespace cachecomm::detail
