// cachecomm::window: one-sided access (put, get, accumulate) to memory every rank exposes, with
// fence and general active target (post/start/complete/wait) synchronization.
//
// Each rank exposes a region of the size it chooses (sizes may differ). Regions of ranks on the
// same node live in one shared-memory segment, so put/get to them are plain copies and the
// synchronization is a handful of shared-memory words (see docs/architecture.md, "RMA windows").
// Ranks on other nodes are reached with MPI one-sided operations on the same memory; the API
// is the same.
//
// Epoch rules (checked; a violation throws usage_error, never corrupts memory):
//  - put/get/accumulate only inside an access epoch: between fence() calls, or between
//    start(group) and complete(), and then only to ranks of that group;
//  - a fence sequence ends with fence(fence_flag::last) before PSCW may be used, and PSCW epochs
//    must be closed before fence();
//  - post(group) opens one exposure epoch, closed by wait() or a test() that returns true.
//  - displacement * disp_unit(target) + bytes must lie inside the target's region.
//
// PSCW is "trigger-only" (see the seed): start() only records its group; the first access to a
// target waits until that target's post() is visible, later accesses go straight through;
// complete() waits for the targets not yet seen, then tells each target it is done; wait()
// returns once every origin of the post group has completed. A target that never posts, an
// origin that never completes, or a peer that dies ends the wait with peer_failure naming the rank.
//
// Data written with put/accumulate in an access epoch is visible to the target after its wait()
// (PSCW) or after the closing fence(). get() returns with the data already copied.
// Threads: synchronization calls (fence, post, start, complete, wait, test) come from one thread
// of a rank at a time; inside an epoch several threads of a rank may put, get and accumulate at
// once (node-local targets; across nodes one thread at a time).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "cachecomm/comm.hpp"
#include "cachecomm/datatype.hpp"

namespace cachecomm {

namespace detail {
class window_impl;
}

/// Ranks of the window's communicator taking part in a PSCW epoch.
using rank_group = std::vector<int>;

/// What a fence() call does besides completing the previous fence epoch.
enum class fence_flag {
  next_epoch,  ///< open a new fence epoch (MPI's default fence)
  last,        ///< end the fence sequence (MPI_MODE_NOSUCCEED): PSCW may follow
};

class window {
 public:
  /// Collective over `communicator`: this rank exposes `bytes` bytes (0 is allowed), addressed in
  /// units of `disp_unit` bytes by the other ranks. The window keeps a reference to the comm,
  /// which must outlive it. The region starts zero-filled and page-aligned.
  window(comm& communicator, std::size_t bytes, std::size_t disp_unit = 1);
  /// Collective, over memory the node's ranks already share (e.g. an MPI window from
  /// MPI_Win_allocate_shared): `node_regions[i]` is node rank i's region as mapped in this process,
  /// `bytes` this rank's share. The memory is the caller's and must outlive the window; cachecomm
  /// keeps only its synchronization words in a segment of its own. Single-node communicators only
  /// make sense here (ranks on other nodes are reached through an MPI window over this rank's
  /// region).
  window(comm& communicator, std::size_t bytes, std::size_t disp_unit,
         std::span<std::byte* const> node_regions);
  /// Collective too when the window spans nodes (it frees an MPI window).
  ~window();
  window(const window&) = delete;
  window& operator=(const window&) = delete;
  window(window&&) noexcept;
  window& operator=(window&&) noexcept;

  // ---- the local region and the peers' geometry ----
  /// This rank's exposed memory (read and write it directly outside exposure epochs).
  [[nodiscard]] std::span<std::byte> local() const;
  /// The local region viewed as elements of T (the size is truncated to whole elements).
  template <typename T>
  [[nodiscard]] std::span<T> local_as() const {
    auto bytes = local();
    return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
  /// Bytes rank `target` exposes.
  [[nodiscard]] std::size_t size_of(int target) const;
  /// Displacement unit rank `target` chose.
  [[nodiscard]] std::size_t disp_unit_of(int target) const;
  [[nodiscard]] int rank() const;
  [[nodiscard]] int size() const;
  /// True when `target` shares this rank's node (accesses are shared-memory copies).
  [[nodiscard]] bool is_node_local(int target) const;
  /// True when an atomic access (accumulate, fetch_and_accumulate: `element_alignment` =
  /// alignment of the type, 8 for complex128; compare_and_swap: the element size) to `target` at
  /// `displacement` would be aligned, so that it does not throw for alignment. Always true for a
  /// target on another node (MPI handles any alignment) and for a rank outside the window (the
  /// access reports that).
  [[nodiscard]] bool atomic_aligned(int target, std::size_t displacement,
                                    std::size_t element_alignment) const;
  /// Alignment accumulate and fetch_and_accumulate need for elements of `type`.
  [[nodiscard]] static std::size_t atomic_alignment(datatype type);

  // ---- one-sided operations (inside an access epoch) ----
  /// Copies `bytes` bytes from `origin` to the target's region at displacement `displacement`.
  void put(const void* origin, std::size_t bytes, int target, std::size_t displacement);
  /// Copies `bytes` bytes from the target's region into `result`; the data is there on return.
  void get(void* result, std::size_t bytes, int target, std::size_t displacement);
  /// Combines `count` elements of `type` from `origin` into the target's region with `op`
  /// (reduce_op::replace overwrites). Each element is updated atomically with respect to other
  /// accumulates (elements must be aligned to their size, 8 for complex128).
  void accumulate(const void* origin, std::size_t count, datatype type, reduce_op op, int target,
                  std::size_t displacement);

  /// Like accumulate, and stores each element's previous value in `result` (MPI_Get_accumulate,
  /// MPI_Fetch_and_op); a null `origin` only reads the elements atomically (MPI_NO_OP).
  void fetch_and_accumulate(const void* origin, void* result, std::size_t count, datatype type,
                            reduce_op op, int target, std::size_t displacement);
  /// Atomically: `result` = the target element; if it equals `compare` bit for bit it becomes
  /// `origin`. One element of 1, 2, 4 or 8 bytes, aligned to its size (MPI_Compare_and_swap).
  void compare_and_swap(const void* origin, const void* compare, void* result,
                        std::size_t element_bytes, int target, std::size_t displacement);

  template <typename T>
  void put(std::span<const T> values, int target, std::size_t displacement) {
    static_assert(std::is_trivially_copyable_v<T>);
    put(values.data(), values.size_bytes(), target, displacement);
  }
  template <typename T>
  void get(std::span<T> values, int target, std::size_t displacement) {
    static_assert(std::is_trivially_copyable_v<T>);
    get(values.data(), values.size_bytes(), target, displacement);
  }
  template <typename T>
  void accumulate(std::span<const T> values, reduce_op op, int target, std::size_t displacement) {
    accumulate(values.data(), values.size(), datatype_of<std::remove_const_t<T>>(), op, target,
               displacement);
  }

  // ---- synchronization ----
  /// Collective: completes every operation of the previous fence epoch everywhere (all data is
  /// visible on return) and, unless `flag` is last, opens the next one.
  void fence(fence_flag flag = fence_flag::next_epoch);
  /// Opens an exposure epoch for the ranks in `origins`: each is notified at once; no waiting.
  void post(const rank_group& origins);
  /// Opens an access epoch to the ranks in `targets`. Records the group only (trigger-only).
  void start(const rank_group& targets);
  /// Ends the access epoch: waits for any target not yet seen posting, makes this rank's writes
  /// visible, and notifies every target.
  void complete();
  /// Ends the exposure epoch once every origin of the post group has completed.
  void wait();
  /// Non-blocking wait: true (and the exposure epoch is closed) when every origin has completed.
  [[nodiscard]] bool test();

  /// Internal layers reach the state through this.
  [[nodiscard]] detail::window_impl& impl() const { return *m_impl; }

 private:
  std::unique_ptr<detail::window_impl> m_impl;
};

}  // namespace cachecomm
