// cachecomm::comm_cache: a software-managed cache that gathers small remote writes into large
// messages. Lines are placed by address into sets; a write to a cached line merges into it; when a
// set is full the way holding the most lines is sent as one message per target, then the new line
// takes its place. Within a node the lines are copied straight into the target's window; between
// nodes one MPI message carries the lines with their offsets and is applied at the target.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "cachecomm/comm.hpp"

namespace cachecomm {

/// Where a new line goes in a set with free ways.
enum class placement_policy {
  first_free,   ///< the lowest-numbered free way (fills way 0 first, so it is the fullest)
  round_robin,  ///< the next free way after the one used last in this set
};

[[nodiscard]] std::string_view to_string(placement_policy policy);
/// "first-free" or "round-robin"; throws invalid_argument otherwise.
[[nodiscard]] placement_policy parse_placement_policy(std::string_view text);

struct cache_geometry {
  std::size_t line_bytes = 64;  ///< power of two, at most the window size
  std::size_t sets = 256;       ///< a message holds at most one line per set
  std::size_t ways = 8;         ///< lines per set
  placement_policy placement = placement_policy::first_free;
};

/// How lines reach their target.
enum class cache_path {
  automatic,  ///< shared memory for ranks on this node, MPI messages for the others
  mpi,        ///< MPI messages for every target (also on this node)
};

/// Counters since construction or reset_statistics(). A message is one transfer to one target.
struct cache_statistics {
  static constexpr std::size_t histogram_buckets = 40;
  std::uint64_t writes = 0;           ///< write() calls
  std::uint64_t bytes_written = 0;    ///< bytes passed to write()
  std::uint64_t line_inserts = 0;     ///< line pieces that found no cached line
  std::uint64_t merges = 0;           ///< line pieces that merged into a cached line
  std::uint64_t conflict_misses = 0;  ///< inserts that found their set full and evicted a way
  std::uint64_t flushes = 0;          ///< flush() / flush_async() / fence() calls
  std::uint64_t messages = 0;         ///< messages sent (evictions and flushes, one per target)
  std::uint64_t payload_bytes = 0;    ///< bytes of line data the messages carried
  /// Messages by payload size: bucket i counts sizes in [2^i, 2^(i+1)).
  std::array<std::uint64_t, histogram_buckets> message_size_histogram{};

  [[nodiscard]] double average_message_bytes() const {
    return messages == 0 ? 0.0 : static_cast<double>(payload_bytes) / static_cast<double>(messages);
  }
};

namespace detail {
class comm_cache_impl;
}

class comm_cache;

/// Completion of a flush_async(): the messages are on their way; wait() until they are complete.
class flush_request {
 public:
  flush_request() = default;
  /// True once every message of the flush has completed on this rank's side (shared memory: it
  /// is in the target's window; MPI: handed to MPI, buffers free). Applies arrivals meanwhile.
  [[nodiscard]] bool test();
  void wait();

 private:
  friend class comm_cache;
  explicit flush_request(detail::comm_cache_impl* owner) : m_owner(owner) {}
  detail::comm_cache_impl* m_owner = nullptr;
};

class comm_cache {
 public:
  /// Collective over `communicator`: every rank exposes a window of `window_bytes` (zeroed) that
  /// the others write into through their caches. Throws invalid_argument for a bad geometry.
  comm_cache(const comm& communicator, std::size_t window_bytes, cache_geometry geometry = {},
             cache_path path = cache_path::automatic);
  /// Collective: fences (peers may still owe this rank lines), like MPI_Win_free. `communicator`
  /// must outlive the cache.
  ~comm_cache();
  comm_cache(const comm_cache&) = delete;
  comm_cache& operator=(const comm_cache&) = delete;
  comm_cache(comm_cache&&) noexcept;
  comm_cache& operator=(comm_cache&&) noexcept;

  /// Writes `bytes` from `data` at `offset` of `target_rank`'s window (through the cache: visible
  /// at the target after flush + the target's next fence()). Later writes to the same bytes win.
  void write(int target_rank, std::size_t offset, const void* data, std::size_t bytes);

  /// Sends every cached line and waits until the messages have completed on this rank's side.
  void flush();
  /// Sends every cached line; the request completes the way flush() does.
  [[nodiscard]] flush_request flush_async();
  /// Collective epoch close: flushes, then returns once every line any rank wrote to this rank's
  /// window before its fence is in this window (and every rank has reached the fence).
  void fence();
  /// Applies messages that arrived for this rank (MPI path); fence() does it too.
  void progress();
  /// Point-to-point completion without a fence: returns once `source_rank` has completed its
  /// `count`-th flush (flush(), flush_async() or fence(), counted from 1) and everything it wrote
  /// to this rank before that flush is in this window. Within a node it waits on the source's
  /// flush sequence number in shared memory; across nodes it applies arrivals until the source's
  /// flush marker arrives (messages apply in order).
  void wait_for_flush(int source_rank, std::uint32_t count);

  /// This rank's window, as the other ranks' writes leave it after a fence.
  [[nodiscard]] std::span<std::byte> local_window() const;
  [[nodiscard]] std::size_t window_bytes() const;
  [[nodiscard]] const cache_geometry& geometry() const;
  /// True when lines for `target_rank` are copied through shared memory, false when sent over MPI.
  [[nodiscard]] bool shared_memory_path(int target_rank) const;

  [[nodiscard]] const cache_statistics& statistics() const;
  void reset_statistics();

 private:
  std::unique_ptr<detail::comm_cache_impl> m_impl;
};

}  // namespace cachecomm
