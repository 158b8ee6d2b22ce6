#include "cachecomm/comm_cache.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>

#include "cachecomm/error.hpp"
#include "coalesce/line_store.hpp"
#include "coalesce/mpi_line_sink.hpp"
#include "coalesce/shm_line_sink.hpp"
#include "coll/barrier.hpp"
#include "core/comm_impl.hpp"
#include "core/mpi_check.hpp"
#include "shm/cache_line.hpp"
#include "shm/segment.hpp"
#include "sync/waiter.hpp"

namespace cachecomm {

std::string_view to_string(placement_policy policy) {
  return policy == placement_policy::round_robin ? "round-robin" : "first-free";
}

placement_policy parse_placement_policy(std::string_view text) {
  if (text == "first-free") return placement_policy::first_free;
  if (text == "round-robin") return placement_policy::round_robin;
  throw invalid_argument("cachecomm: unknown placement policy '" + std::string(text) +
                         "' (use first-free or round-robin)");
}

namespace detail {

class comm_cache_impl {
 public:
  comm_cache_impl(const comm& communicator, std::size_t window_bytes,
                  const cache_geometry& geometry, cache_path path)
      : m_impl(&communicator.impl()), m_geometry(geometry), m_window_bytes(window_bytes) {
    // Checks that depend only on arguments come before any collective, so a bad geometry throws
    // on every rank instead of leaving the others waiting.
    validate_geometry(geometry);
    if (geometry.line_bytes > window_bytes) {
      throw invalid_argument("cachecomm::comm_cache: line size " +
                             std::to_string(geometry.line_bytes) + " bytes is larger than the " +
                             std::to_string(window_bytes) + "-byte window");
    }
    const int size = m_impl->size();
    m_window_sizes.resize(static_cast<std::size_t>(size));
    std::uint64_t mine = window_bytes;
    CACHECOMM_MPI(MPI_Allgather(&mine, 1, MPI_UINT64_T, m_window_sizes.data(), 1, MPI_UINT64_T,
                                m_impl->world()));
    map_windows();
    std::vector<line_sink*> sink_of_target(static_cast<std::size_t>(size), nullptr);
    std::vector<std::byte*> node_windows(static_cast<std::size_t>(size), nullptr);
    const auto& topology = m_impl->topology();
    bool any_remote = false;
    for (int rank = 0; rank < size; ++rank) {
      const int node_rank = topology.local_rank(rank);
      if (node_rank >= 0 && path == cache_path::automatic) {
        node_windows[static_cast<std::size_t>(rank)] =
            m_window_of_node_rank[static_cast<std::size_t>(node_rank)];
      } else {
        any_remote = true;
      }
    }
    // Whether an MPI sink exists must agree on every rank (its set-up and epochs are collective).
    int local_remote = any_remote ? 1 : 0;
    int global_remote = 0;
    CACHECOMM_MPI(
        MPI_Allreduce(&local_remote, &global_remote, 1, MPI_INT, MPI_MAX, m_impl->world()));
    m_shm_sink.emplace(node_windows);
    if (global_remote != 0) m_mpi_sink.emplace(m_impl->world(), local_window());
    for (int rank = 0; rank < size; ++rank) {
      auto index = static_cast<std::size_t>(rank);
      sink_of_target[index] = node_windows[index] != nullptr
                                  ? static_cast<line_sink*>(&*m_shm_sink)
                                  : static_cast<line_sink*>(&*m_mpi_sink);
    }
    m_sink_of_target = sink_of_target;
    m_store.emplace(geometry, std::move(sink_of_target), m_statistics);
  }

  ~comm_cache_impl() {
    // Collective like MPI_Win_free: peers may still owe this rank messages, and its own sends
    // must reach targets that are still listening.
    try {
      fence();
    } catch (...) {  // NOLINT(bugprone-empty-catch): destructors never throw
    }
  }

  void write(int target, std::size_t offset, const void* data, std::size_t bytes) {
    if (target < 0 || target >= m_impl->size()) {
      throw invalid_argument("cachecomm::comm_cache::write: target rank " + std::to_string(target) +
                             " is outside the communicator of " + std::to_string(m_impl->size()) +
                             " ranks");
    }
    const std::uint64_t window = m_window_sizes[static_cast<std::size_t>(target)];
    if (offset > window || bytes > window - offset) {
      throw invalid_argument("cachecomm::comm_cache::write: " + std::to_string(bytes) +
                             " bytes at offset " + std::to_string(offset) + " fall outside rank " +
                             std::to_string(target) + "'s " + std::to_string(window) +
                             "-byte window");
    }
    if (bytes == 0) return;
    if (data == nullptr)
      throw invalid_argument("cachecomm::comm_cache::write: null data for " +
                             std::to_string(bytes) + " bytes");
    m_store->write(target, offset, static_cast<const std::byte*>(data), bytes);
  }

  void start_flush() {
    ++m_statistics.flushes;
    m_store->flush_all();
    ++m_flushes_done;
    // Node targets: the copies are done, so the sequence number says so (release by seq_cst).
    m_impl->wait().publish(
        m_flush_flags[static_cast<std::size_t>(m_impl->topology().node_rank)].value,
        m_flushes_done);
    // Remote targets: a marker after the data; applied in order, so its arrival means the data
    // arrived.
    if (m_mpi_sink) {
      for (int rank = 0; rank < m_impl->size(); ++rank) {
        if (!shared_memory_path(rank)) m_mpi_sink->send_flush_marker(rank);
      }
    }
  }

  void wait_for_flush(int source, std::uint32_t count) {
    if (source < 0 || source >= m_impl->size()) {
      throw invalid_argument("cachecomm::comm_cache::wait_for_flush: source rank " +
                             std::to_string(source) + " is outside the communicator of " +
                             std::to_string(m_impl->size()) + " ranks");
    }
    if (!m_mpi_sink || source_uses_shared_memory(source)) {
      const auto node_rank = static_cast<std::size_t>(m_impl->topology().local_rank(source));
      m_impl->wait().wait_reach(m_flush_flags[node_rank].value, count, static_cast<int>(node_rank),
                                "comm_cache::wait_for_flush");
      return;
    }
    for (unsigned polls = 0; !sequence_reached(m_mpi_sink->flushes_from(source), count); ++polls) {
      m_mpi_sink->progress();
      if (polls >= 4096) sched_yield();
    }
  }

  [[nodiscard]] bool test_flush() {
    progress();
    return m_mpi_sink ? m_mpi_sink->test_sent() : true;
  }

  void fence() {
    start_flush();
    if (m_mpi_sink) m_mpi_sink->complete_epoch();
    // The node barrier orders the shared-memory copies before the targets' reads (release/acquire).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    detail::node_aware_barrier(*m_impl);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }

  void progress() {
    if (m_mpi_sink) m_mpi_sink->progress();
  }

  [[nodiscard]] std::span<std::byte> local_window() const {
    return {m_window_of_node_rank[static_cast<std::size_t>(m_impl->topology().node_rank)],
            m_window_bytes};
  }
  /// A source reaches this rank the way this rank reaches it (same node, same path choice).
  [[nodiscard]] bool source_uses_shared_memory(int source) const {
    return shared_memory_path(source);
  }
  [[nodiscard]] bool shared_memory_path(int target) const {
    return m_sink_of_target.at(static_cast<std::size_t>(target)) == &*m_shm_sink;
  }

  comm_impl* m_impl;
  cache_geometry m_geometry;
  std::size_t m_window_bytes;
  cache_statistics m_statistics;

 private:
  void map_windows() {
    const auto& topology = m_impl->topology();
    segment_layout layout;
    std::vector<std::size_t> offsets;
    for (int node_rank = 0; node_rank < topology.node_size; ++node_rank) {
      const auto comm_rank =
          static_cast<std::size_t>(topology.node_ranks[static_cast<std::size_t>(node_rank)]);
      // Page-aligned windows: no two ranks' windows share a line or a page.
      offsets.push_back(layout.reserve(m_window_sizes[comm_rank], 4096));
    }
    const std::size_t flags_offset =
        layout.reserve(slot_array<padded_flag>::bytes_for(offsets.size()));
    m_segment = shm_segment(m_impl->node(), layout.size());
    m_flush_flags = slot_array<padded_flag>(
        m_segment.bytes_at(flags_offset, slot_array<padded_flag>::bytes_for(offsets.size())),
        offsets.size());
    for (std::size_t node_rank = 0; node_rank < offsets.size(); ++node_rank) {
      const auto comm_rank = static_cast<std::size_t>(topology.node_ranks[node_rank]);
      m_window_of_node_rank.push_back(
          m_segment.bytes_at(offsets[node_rank], m_window_sizes[comm_rank]));
    }
  }

  std::vector<std::uint64_t> m_window_sizes;
  shm_segment m_segment;
  std::vector<std::byte*> m_window_of_node_rank;
  slot_array<padded_flag>
      m_flush_flags;  ///< flushes each node rank has completed (sequence numbers)
  std::uint32_t m_flushes_done = 0;
  std::optional<shm_line_sink> m_shm_sink;
  std::optional<mpi_line_sink> m_mpi_sink;
  std::vector<line_sink*> m_sink_of_target;
  std::optional<line_store> m_store;
};

}  // namespace detail

bool flush_request::test() {
  return m_owner == nullptr || m_owner->test_flush();
}

void flush_request::wait() {
  for (unsigned polls = 0; !test(); ++polls) {
    if (polls >= 4096) sched_yield();  // the target that must drain our sends may need this core
  }
}

comm_cache::comm_cache(const comm& communicator, std::size_t window_bytes, cache_geometry geometry,
                       cache_path path)
    : m_impl(
          std::make_unique<detail::comm_cache_impl>(communicator, window_bytes, geometry, path)) {}
comm_cache::~comm_cache() = default;
comm_cache::comm_cache(comm_cache&&) noexcept = default;
comm_cache& comm_cache::operator=(comm_cache&&) noexcept = default;

void comm_cache::write(int target_rank, std::size_t offset, const void* data, std::size_t bytes) {
  m_impl->write(target_rank, offset, data, bytes);
}
void comm_cache::flush() {
  flush_async().wait();
}
flush_request comm_cache::flush_async() {
  m_impl->start_flush();
  return flush_request(m_impl.get());
}
void comm_cache::fence() {
  m_impl->fence();
}
void comm_cache::progress() {
  m_impl->progress();
}
void comm_cache::wait_for_flush(int source_rank, std::uint32_t count) {
  m_impl->wait_for_flush(source_rank, count);
}
std::span<std::byte> comm_cache::local_window() const {
  return m_impl->local_window();
}
std::size_t comm_cache::window_bytes() const {
  return m_impl->m_window_bytes;
}
const cache_geometry& comm_cache::geometry() const {
  return m_impl->m_geometry;
}
bool comm_cache::shared_memory_path(int target_rank) const {
  return m_impl->shared_memory_path(target_rank);
}
const cache_statistics& comm_cache::statistics() const {
  return m_impl->m_statistics;
}
void comm_cache::reset_statistics() {
  m_impl->m_statistics = cache_statistics{};
}

}  // namespace cachecomm
