// Windows: regions in the node segment, PSCW from match vectors and completion counters
// (trigger-only, after the seed), fence from the communicator's barrier, MPI for remote nodes.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/barrier.hpp"
#include "core/mpi_check.hpp"
#include "core/mpi_types.hpp"
#include "rma/window_impl.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm {

namespace detail {

namespace {

// Tags on the window's own duplicate communicator; payload: the pair's epoch serial.
constexpr int post_tag = 1;
constexpr int complete_tag = 2;
// Regions start on a page so that large puts and user data structures align well.
constexpr std::size_t region_alignment = 4096;

std::string group_text(const std::vector<int>& group) {
  std::string text = "{";
  for (std::size_t i = 0; i < group.size(); ++i) text += (i ? ", " : "") + std::to_string(group[i]);
  return text + "}";
}

int checked_int(std::size_t value, const char* what) {
  return mpi_int_count<invalid_argument>(value, [&] {
    return std::string("cachecomm: window ") + what + " of " + std::to_string(value) +
           " elements to a rank on another node exceeds MPI's int count";
  });
}

}  // namespace

// ---- MPI window owner ----

mpi_window_owner::mpi_window_owner(void* base, std::size_t bytes, std::size_t disp_unit,
                                   MPI_Comm comm) {
  CACHECOMM_MPI(MPI_Win_create(base, static_cast<MPI_Aint>(bytes), static_cast<int>(disp_unit),
                               MPI_INFO_NULL, comm, &m_window));
  // One passive epoch for the window's life: accesses are ordered by flushes and by cachecomm's
  // own notifications, not by MPI's synchronization calls.
  CACHECOMM_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, m_window));
}

mpi_window_owner& mpi_window_owner::operator=(mpi_window_owner&& other) noexcept {
  if (this != &other) {
    release();
    m_window = other.m_window;
    other.m_window = MPI_WIN_NULL;
  }
  return *this;
}

mpi_window_owner::~mpi_window_owner() {
  release();
}

void mpi_window_owner::release() noexcept {
  if (m_window == MPI_WIN_NULL || mpi_finalized()) return;
  MPI_Win_unlock_all(m_window);
  MPI_Win_free(&m_window);
  m_window = MPI_WIN_NULL;
}

// ---- construction and geometry ----

window_impl::window_impl(comm& communicator, std::size_t bytes, std::size_t disp_unit,
                         const std::vector<std::byte*>* node_regions)
    : m_comm(&communicator.impl()) {
  auto bad_unit = [&] {
    return "cachecomm: window displacement unit must be between 1 and INT_MAX, got " +
           std::to_string(disp_unit);
  };
  if (disp_unit == 0) throw invalid_argument(bad_unit());
  (void)mpi_int_count<invalid_argument>(disp_unit, bad_unit);
  const auto& topology = m_comm->topology();
  m_rank = m_comm->rank();
  m_size = m_comm->size();
  m_node_rank = topology.node_rank;
  m_node_size = topology.node_size;

  std::uint64_t mine[2] = {bytes, disp_unit};
  std::vector<std::uint64_t> everyone(2 * static_cast<std::size_t>(m_size));
  CACHECOMM_MPI(
      MPI_Allgather(mine, 2, MPI_UINT64_T, everyone.data(), 2, MPI_UINT64_T, m_comm->world()));
  for (int r = 0; r < m_size; ++r) {
    m_sizes.push_back(everyone[2 * static_cast<std::size_t>(r)]);
    m_units.push_back(everyone[2 * static_cast<std::size_t>(r) + 1]);
  }

  // Layout: [complex128 lock stripes][match vector of each origin, followed by the completion
  // counter of the next node rank][completion records of each target][regions]. Every rank
  // computes the same offsets from the same gathered sizes. Origin r polls its match vector and
  // bumps the counter of its target; when that target is r + 1 (at 2 ranks: always) both live in
  // one line, and an epoch's post and complete move one line back and forth between the two
  // caches instead of two (measured: a hand-off on one line takes half the time of one on two).
  const auto n = static_cast<std::size_t>(m_node_size);
  segment_layout layout;
  const std::size_t stripes_offset =
      layout.reserve_slots(accumulate_stripes::count, sizeof(std::uint32_t));
  m_match_stride = padded_to_line((n + 1) * sizeof(std::uint32_t));
  m_match_offset = layout.reserve(n * m_match_stride);
  m_target_stride = padded_to_line(n * sizeof(std::uint32_t));
  m_target_offset = layout.reserve(n * m_target_stride);
  if (node_regions != nullptr && node_regions->size() != n) {
    throw invalid_argument("cachecomm: window over given memory needs one region per node rank (" +
                           std::to_string(n) + "), got " + std::to_string(node_regions->size()));
  }
  std::vector<std::size_t> region_offsets;
  for (int node_rank = 0; node_rank < m_node_size && node_regions == nullptr; ++node_rank) {
    const auto region_bytes =
        static_cast<std::size_t>(m_sizes[static_cast<std::size_t>(topology.node_ranks[node_rank])]);
    region_offsets.push_back(layout.reserve(region_bytes, region_alignment));
  }
  m_segment = shm_segment(m_comm->node(), layout.size() + region_alignment);
  // The mapping is page-aligned, so region offsets aligned to a page give page-aligned regions.
  for (std::size_t offset : region_offsets)
    m_region.push_back(static_cast<std::byte*>(m_segment.data()) + offset);
  if (node_regions != nullptr) m_region = *node_regions;
  m_stripes.locks = m_segment.at<padded_flag>(stripes_offset, accumulate_stripes::count);

  m_access_slot.assign(static_cast<std::size_t>(m_size), -1);
  m_match_copy.assign(static_cast<std::size_t>(m_size), 0);
  m_consumed.assign(static_cast<std::size_t>(m_size), 0);
  m_posted_to.assign(static_cast<std::size_t>(m_size), 0);

  m_multi_node = !m_comm->single_node();
  if (m_multi_node) {
    MPI_Comm notify = MPI_COMM_NULL;
    CACHECOMM_MPI(MPI_Comm_dup(m_comm->world(), &notify));
    m_notify_comm = mpi_comm_owner(notify);
    m_notices_sent.assign(static_cast<std::size_t>(m_size), {});
    m_notices_received.assign(static_cast<std::size_t>(m_size), {});
    m_mpi_window = mpi_window_owner(local_base(), bytes, disp_unit, m_comm->world());
  }
}

window_impl::~window_impl() {
  if (mpi_finalized() || !m_multi_node) return;
  drain_notices();
}

void window_impl::drain_notices() noexcept {
  for (std::size_t i = 0; i < m_remote_completions.size(); ++i) {
    MPI_Request& request = m_remote_completions[i];
    if (request == MPI_REQUEST_NULL) continue;
    if (!cancel_request(request))
      ++m_notices_received[static_cast<std::size_t>(m_remote_completion_ranks[i])].completes;
  }
  // Every rank learns how many notices each peer sent it (two counts per pair).
  std::vector<notice_counts> owed(static_cast<std::size_t>(m_size));
  static_assert(sizeof(notice_counts) == 2 * sizeof(std::uint32_t));
  if (MPI_Alltoall(m_notices_sent.data(), 2, MPI_UINT32_T, owed.data(), 2, MPI_UINT32_T,
                   m_notify_comm.get()) != MPI_SUCCESS)
    return;
  const auto receive = [this](int peer, int tag, std::uint32_t sent, std::uint32_t received) {
    // Serial arithmetic: a count that is somehow ahead must not turn into 2^32 receives.
    const std::uint32_t missing = sent - received;
    if (missing >= (1U << 31)) return;
    std::uint32_t payload = 0;
    for (std::uint32_t n = 0; n < missing; ++n)
      MPI_Recv(&payload, 1, MPI_UINT32_T, peer, tag, m_notify_comm.get(), MPI_STATUS_IGNORE);
  };
  for (int peer = 0; peer < m_size; ++peer) {
    const auto index = static_cast<std::size_t>(peer);
    receive(peer, post_tag, owed[index].posts, m_notices_received[index].posts);
    receive(peer, complete_tag, owed[index].completes, m_notices_received[index].completes);
  }
}

std::atomic<std::uint32_t>& window_impl::match_entry(int origin_node, int target_node) const {
  return *m_segment.at<std::atomic<std::uint32_t>>(
      m_match_offset + static_cast<std::size_t>(origin_node) * m_match_stride +
      static_cast<std::size_t>(target_node) * sizeof(std::uint32_t));
}

std::atomic<std::uint32_t>& window_impl::completion_counter(int target_node) const {
  // After the match vector of the previous node rank (see the layout in the constructor).
  const auto n = static_cast<std::size_t>(m_node_size);
  const std::size_t previous = (static_cast<std::size_t>(target_node) + n - 1) % n;
  return *m_segment.at<std::atomic<std::uint32_t>>(m_match_offset + previous * m_match_stride +
                                                   n * sizeof(std::uint32_t));
}

std::atomic<std::uint32_t>& window_impl::completion_record(int target_node, int origin_node) const {
  return *m_segment.at<std::atomic<std::uint32_t>>(
      m_target_offset + static_cast<std::size_t>(target_node) * m_target_stride +
      static_cast<std::size_t>(origin_node) * sizeof(std::uint32_t));
}

void window_impl::check_rank(int target, const char* what) const {
  if (target < 0 || target >= m_size) {
    throw invalid_argument(std::string("cachecomm: window ") + what + ": rank " +
                           std::to_string(target) + " is not in the window's communicator of " +
                           std::to_string(m_size) + " ranks");
  }
}

std::size_t window_impl::size_of(int target) const {
  check_rank(target, "size_of");
  return static_cast<std::size_t>(m_sizes[static_cast<std::size_t>(target)]);
}

std::size_t window_impl::disp_unit_of(int target) const {
  check_rank(target, "disp_unit_of");
  return static_cast<std::size_t>(m_units[static_cast<std::size_t>(target)]);
}

bool window_impl::is_node_local(int target) const {
  check_rank(target, "is_node_local");
  return local_rank_of(target) >= 0;
}

std::vector<int> window_impl::checked_group(const rank_group& group, const char* what) const {
  std::vector<int> sorted = group;
  for (int member : sorted) check_rank(member, what);
  std::sort(sorted.begin(), sorted.end());
  auto duplicate = std::adjacent_find(sorted.begin(), sorted.end());
  if (duplicate != sorted.end()) {
    throw invalid_argument(std::string("cachecomm: window ") + what + ": rank " +
                           std::to_string(*duplicate) + " appears twice in the group " +
                           group_text(group));
  }
  return sorted;
}

// ---- one-sided operations ----

std::size_t window_impl::prepare_access(int target, std::size_t displacement, std::size_t bytes,
                                        const char* what) {
  check_rank(target, what);
  if (!m_access_open && !m_fence_open) {
    throw usage_error(std::string("cachecomm: window ") + what + " to rank " +
                      std::to_string(target) + " by rank " + std::to_string(m_rank) +
                      " outside an access epoch (call fence() or start() first)");
  }
  const std::size_t unit = m_units[static_cast<std::size_t>(target)];
  const std::size_t region = m_sizes[static_cast<std::size_t>(target)];
  if (displacement > region / unit || displacement * unit > region ||
      bytes > region - displacement * unit) {
    throw invalid_argument(std::string("cachecomm: window ") + what + " of " +
                           std::to_string(bytes) + " bytes at displacement " +
                           std::to_string(displacement) + " (x " + std::to_string(unit) +
                           " bytes) runs past the end of rank " + std::to_string(target) +
                           "'s region of " + std::to_string(region) + " bytes");
  }
  if (m_access_open) {
    const int slot = m_access_slot[static_cast<std::size_t>(target)];
    if (slot < 0) {
      throw usage_error(std::string("cachecomm: window ") + what + " by rank " +
                        std::to_string(m_rank) + " to rank " + std::to_string(target) +
                        ", which is not in the start group " + group_text(m_start_group));
    }
    // Trigger-only: the first access to a target synchronizes with it, later ones go through.
    // Threads of one process may access inside one epoch at once: one of them waits for the post
    // (the others wait for it), and the release store hands the synchronization on to them.
    std::atomic_ref<std::uint8_t> seen(m_target_seen[static_cast<std::size_t>(slot)]);
    if (seen.load(std::memory_order_acquire) == 0) {
      const std::lock_guard<std::mutex> lock(m_first_access_mutex);
      if (seen.load(std::memory_order_acquire) == 0) {
        await_post(target, what);
        seen.store(1, std::memory_order_release);
      }
    }
  }
  return displacement * unit;
}

void window_impl::await_post(int target, const char* what) {
  const auto index = static_cast<std::size_t>(target);
  const std::uint32_t expected = m_consumed[index] + 1;
  if (sequence_reached(m_match_copy[index], expected)) return;  // the cached copy already shows it
  const int target_node = local_rank_of(target);
  std::uint32_t seen = 0;
  if (target_node >= 0) {
    auto& entry = match_entry(m_node_rank, target_node);
    seen = entry.load(std::memory_order_acquire);
    if (!sequence_reached(seen, expected)) {
      wait_progressing(
          reinterpret_cast<const std::uint32_t*>(&entry),
          [&] { return sequence_reached(entry.load(std::memory_order_acquire), expected); },
          target_node, "a PSCW access epoch (waiting for the target's post)");
      seen = entry.load(std::memory_order_acquire);
    }
  } else {
    MPI_Request request = MPI_REQUEST_NULL;
    CACHECOMM_MPI(
        MPI_Irecv(&seen, 1, MPI_UINT32_T, target, post_tag, m_notify_comm.get(), &request));
    wait_mpi_request(request, target, "a PSCW access epoch (waiting for the target's post)");
    ++m_notices_received[static_cast<std::size_t>(target)].posts;
  }
  if (seen != expected) {
    throw usage_error("cachecomm: window " + std::string(what) + ": rank " +
                      std::to_string(target) + " posted epoch " + std::to_string(seen) +
                      " to rank " + std::to_string(m_rank) + ", which expected epoch " +
                      std::to_string(expected) + " (mismatched post/start sequences)");
  }
  m_match_copy[index] = seen;
}

void window_impl::put(const void* origin, std::size_t bytes, int target, std::size_t displacement) {
  if (bytes != 0 && origin == nullptr)
    throw invalid_argument("cachecomm: window put from a null buffer");
  const std::size_t offset = prepare_access(target, displacement, bytes, "put");
  const int target_node = local_rank_of(target);
  if (bytes == 0) return;
  if (target_node >= 0) {
    copy_memory(m_region[static_cast<std::size_t>(target_node)] + offset, origin, bytes);
    return;
  }
  const int count = checked_int(bytes, "put");
  CACHECOMM_MPI(MPI_Put(origin, count, MPI_BYTE, target, static_cast<MPI_Aint>(displacement), count,
                        MPI_BYTE, m_mpi_window.get()));
  m_mpi_dirty = true;
}

void window_impl::get(void* result, std::size_t bytes, int target, std::size_t displacement) {
  if (bytes != 0 && result == nullptr)
    throw invalid_argument("cachecomm: window get into a null buffer");
  const std::size_t offset = prepare_access(target, displacement, bytes, "get");
  const int target_node = local_rank_of(target);
  if (bytes == 0) return;
  if (target_node >= 0) {
    copy_memory(result, m_region[static_cast<std::size_t>(target_node)] + offset, bytes);
    return;
  }
  const int count = checked_int(bytes, "get");
  CACHECOMM_MPI(MPI_Get(result, count, MPI_BYTE, target, static_cast<MPI_Aint>(displacement), count,
                        MPI_BYTE, m_mpi_window.get()));
  CACHECOMM_MPI(MPI_Win_flush(target, m_mpi_window.get()));
}

void window_impl::accumulate(const void* origin, std::size_t count, datatype type, reduce_op op,
                             int target, std::size_t displacement) {
  check_supported(type, op);
  if (count != 0 && origin == nullptr)
    throw invalid_argument("cachecomm: window accumulate from a null buffer");
  const std::size_t element = cachecomm::size_of(type);
  if (count > SIZE_MAX / element) {
    // count * element would wrap to a small size that passes the range check.
    throw invalid_argument("cachecomm: window accumulate count of " + std::to_string(count) + " " +
                           std::string(to_string(type)) + " elements overflows the byte size");
  }
  const std::size_t bytes = count * element;
  const std::size_t offset = prepare_access(target, displacement, bytes, "accumulate");
  if (count == 0) return;
  if (m_multi_node) {
    // Across nodes every accumulate goes through MPI, node-local ones too: MPI makes accumulates
    // atomic only among themselves, so mixing CAS and MPI_Accumulate on one element would not be.
    const MPI_Datatype mpi_type = mpi_datatype_of(type);
    const int elements = checked_int(count, "accumulate");
    CACHECOMM_MPI(MPI_Accumulate(origin, elements, mpi_type, target,
                                 static_cast<MPI_Aint>(displacement), elements, mpi_type,
                                 mpi_op_of(op), m_mpi_window.get()));
    m_mpi_dirty = true;
    return;
  }
  const auto target_node = static_cast<std::size_t>(local_rank_of(target));
  std::byte* destination =
      atomic_destination(target, offset, accumulate_alignment(type), "accumulate");
  accumulate_elements(destination, static_cast<const std::byte*>(origin), count, type, op,
                      m_stripes, {target_node, offset}, m_comm->wait());
}

bool window_impl::atomic_aligned(int target, std::size_t displacement,
                                 std::size_t alignment) const {
  if (target < 0 || target >= m_size) return true;  // the access itself reports the bad rank
  const int target_node = local_rank_of(target);
  if (m_multi_node || target_node < 0 || alignment <= 1) return true;
  // Address arithmetic only: the displacement may lie past the region (the access then throws
  // for the range instead).
  const auto address =
      reinterpret_cast<std::uintptr_t>(m_region[static_cast<std::size_t>(target_node)]) +
      displacement * m_units[static_cast<std::size_t>(target)];
  return address % alignment == 0;
}

std::byte* window_impl::atomic_destination(int target, std::size_t offset, std::size_t alignment,
                                           const char* what) const {
  std::byte* destination = m_region[static_cast<std::size_t>(local_rank_of(target))] + offset;
  if (reinterpret_cast<std::uintptr_t>(destination) % alignment != 0) {
    throw invalid_argument("cachecomm: window " + std::string(what) + " to rank " +
                           std::to_string(target) + " at byte offset " + std::to_string(offset) +
                           " is not aligned to " + std::to_string(alignment) +
                           " bytes (needed for atomic updates)");
  }
  return destination;
}

void window_impl::fetch_and_accumulate(const void* origin, void* result, std::size_t count,
                                       datatype type, reduce_op op, int target,
                                       std::size_t displacement) {
  if (origin != nullptr) check_supported(type, op);
  if (count != 0 && result == nullptr)
    throw invalid_argument("cachecomm: window fetch-and-accumulate into a null buffer");
  const std::size_t element = cachecomm::size_of(type);
  if (count > SIZE_MAX / element) {
    throw invalid_argument("cachecomm: window fetch-and-accumulate count of " +
                           std::to_string(count) + " elements overflows the byte size");
  }
  const std::size_t offset =
      prepare_access(target, displacement, count * element, "fetch-and-accumulate");
  if (count == 0) return;
  if (m_multi_node) {
    // As accumulate: across nodes every atomic is MPI's, so that they are atomic among themselves.
    const MPI_Datatype mpi_type = mpi_datatype_of(type);
    const int elements = checked_int(count, "fetch-and-accumulate");
    CACHECOMM_MPI(MPI_Get_accumulate(origin, elements, mpi_type, result, elements, mpi_type, target,
                                     static_cast<MPI_Aint>(displacement), elements, mpi_type,
                                     origin == nullptr ? MPI_NO_OP : mpi_op_of(op),
                                     m_mpi_window.get()));
    CACHECOMM_MPI(MPI_Win_flush(target, m_mpi_window.get()));
    return;
  }
  const auto target_node = static_cast<std::size_t>(local_rank_of(target));
  fetch_and_accumulate_elements(
      atomic_destination(target, offset, accumulate_alignment(type), "fetch-and-accumulate"),
      static_cast<const std::byte*>(origin), static_cast<std::byte*>(result), count, type, op,
      m_stripes, {target_node, offset}, m_comm->wait());
}

void window_impl::compare_and_swap(const void* origin, const void* compare, void* result,
                                   std::size_t element_bytes, int target,
                                   std::size_t displacement) {
  if (origin == nullptr || compare == nullptr || result == nullptr)
    throw invalid_argument("cachecomm: window compare-and-swap with a null buffer");
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4 && element_bytes != 8) {
    throw invalid_argument("cachecomm: window compare-and-swap of " +
                           std::to_string(element_bytes) + "-byte elements (only 1, 2, 4 and 8)");
  }
  const std::size_t offset =
      prepare_access(target, displacement, element_bytes, "compare-and-swap");
  if (m_multi_node) {
    const MPI_Datatype word = element_bytes == 1   ? MPI_UINT8_T
                              : element_bytes == 2 ? MPI_UINT16_T
                              : element_bytes == 4 ? MPI_UINT32_T
                                                   : MPI_UINT64_T;
    CACHECOMM_MPI(MPI_Compare_and_swap(origin, compare, result, word, target,
                                       static_cast<MPI_Aint>(displacement), m_mpi_window.get()));
    CACHECOMM_MPI(MPI_Win_flush(target, m_mpi_window.get()));
    return;
  }
  compare_and_swap_element(atomic_destination(target, offset, element_bytes, "compare-and-swap"),
                           static_cast<const std::byte*>(origin),
                           static_cast<const std::byte*>(compare), static_cast<std::byte*>(result),
                           element_bytes);
}

void window_impl::flush_remote() {
  if (m_mpi_dirty) {
    CACHECOMM_MPI(MPI_Win_flush_all(m_mpi_window.get()));
    m_mpi_dirty = false;
  }
}

void window_impl::wait_mpi_request(MPI_Request& request, int peer, const char* what) {
  m_comm->wait_mpi(request, peer, what);
}

void window_impl::drive_mpi_progress() const {
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m_notify_comm.get(), &flag, MPI_STATUS_IGNORE);
}

// ---- fence ----

void window_impl::fence(fence_flag flag) {
  if (m_access_open || m_exposure_open) {
    throw usage_error("cachecomm: window fence() by rank " + std::to_string(m_rank) +
                      " while a PSCW " + (m_access_open ? "access" : "exposure") +
                      " epoch is open (complete()/wait() first)");
  }
  if (m_multi_node) flush_remote();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (m_multi_node) {
    // MPI's barrier also progresses MPI accumulates aimed at this rank (see wait_progressing).
    CACHECOMM_MPI(MPI_Barrier(m_comm->world()));
  } else {
    node_aware_barrier(*m_comm);
  }
  if (m_multi_node) CACHECOMM_MPI(MPI_Win_sync(m_mpi_window.get()));
  std::atomic_thread_fence(std::memory_order_seq_cst);
  m_fence_open = flag == fence_flag::next_epoch;
}

// ---- PSCW: origin side ----

void window_impl::start(const rank_group& targets) {
  if (m_access_open) {
    throw usage_error("cachecomm: window start() by rank " + std::to_string(m_rank) +
                      " while its access epoch to " + group_text(m_start_group) +
                      " is open (complete() first)");
  }
  if (m_fence_open) {
    throw usage_error("cachecomm: window start() by rank " + std::to_string(m_rank) +
                      " inside a fence epoch (end it with fence(fence_flag::last) first)");
  }
  // Trigger-only: record the group, nothing else.
  m_start_group = checked_group(targets, "start");
  m_target_seen.assign(m_start_group.size(), 0);
  for (std::size_t slot = 0; slot < m_start_group.size(); ++slot) {
    m_access_slot[static_cast<std::size_t>(m_start_group[slot])] = static_cast<int>(slot);
  }
  m_access_open = true;
}

void window_impl::complete() {
  if (!m_access_open) {
    throw usage_error("cachecomm: window complete() by rank " + std::to_string(m_rank) +
                      " without start()");
  }
  // Only a target whose post was seen has a completion counter valid for this epoch.
  for (std::size_t slot = 0; slot < m_start_group.size(); ++slot) {
    if (m_target_seen[slot] == 0) {
      await_post(m_start_group[slot], "complete");
      m_target_seen[slot] = 1;
    }
  }
  if (m_multi_node) flush_remote();
  for (int target : m_start_group) {
    const auto index = static_cast<std::size_t>(target);
    m_consumed[index] = m_match_copy[index];  // "clears the bit": the next epoch needs a newer post
    m_access_slot[index] = -1;
    const int target_node = local_rank_of(target);
    if (target_node >= 0) {
      completion_record(target_node, m_node_rank)
          .store(m_consumed[index], std::memory_order_relaxed);
      auto& counter = completion_counter(target_node);
      counter.fetch_add(1,
                        std::memory_order_seq_cst);  // releases this epoch's stores to the target
      m_comm->wait().wake(reinterpret_cast<const std::uint32_t*>(&counter));
    } else {
      CACHECOMM_MPI(
          MPI_Send(&m_consumed[index], 1, MPI_UINT32_T, target, complete_tag, m_notify_comm.get()));
      ++m_notices_sent[index].completes;
    }
  }
  m_start_group.clear();
  m_access_open = false;
}

// ---- PSCW: target side ----

void window_impl::post(const rank_group& origins) {
  if (m_exposure_open) {
    throw usage_error("cachecomm: window post() by rank " + std::to_string(m_rank) +
                      " while its exposure epoch to " + group_text(m_post_group) +
                      " is open (wait() first)");
  }
  if (m_fence_open) {
    throw usage_error("cachecomm: window post() by rank " + std::to_string(m_rank) +
                      " inside a fence epoch (end it with fence(fence_flag::last) first)");
  }
  m_post_group = checked_group(origins, "post");
  // Local stores made before the post must be what remote origins read through MPI.
  if (m_multi_node) CACHECOMM_MPI(MPI_Win_sync(m_mpi_window.get()));
  std::size_t remote = 0;
  for (int origin : m_post_group) remote += local_rank_of(origin) < 0 ? 1 : 0;
  m_remote_completions.assign(remote, MPI_REQUEST_NULL);
  m_remote_completion_ranks.clear();
  m_remote_completion_serials.assign(remote, 0);
  std::size_t remote_index = 0;
  for (int origin : m_post_group) {
    const auto index = static_cast<std::size_t>(origin);
    const std::uint32_t serial = ++m_posted_to[index];
    const int origin_node = local_rank_of(origin);
    if (origin_node >= 0) {
      ++m_completions_expected;
      m_comm->wait().publish_lazy(match_entry(origin_node, m_node_rank),
                                  serial);  // sets this target's entry
    } else {
      CACHECOMM_MPI(MPI_Irecv(&m_remote_completion_serials[remote_index], 1, MPI_UINT32_T, origin,
                              complete_tag, m_notify_comm.get(),
                              &m_remote_completions[remote_index]));
      m_remote_completion_ranks.push_back(origin);
      ++remote_index;
      CACHECOMM_MPI(MPI_Send(&serial, 1, MPI_UINT32_T, origin, post_tag, m_notify_comm.get()));
      ++m_notices_sent[index].posts;
    }
  }
  m_exposure_open = true;
}

bool window_impl::local_completions_done() const {
  return sequence_reached(completion_counter(m_node_rank).load(std::memory_order_acquire),
                          m_completions_expected);
}

void window_impl::name_late_origins(const peer_failure& timeout) {
  for (int origin : m_post_group) {
    const int origin_node = local_rank_of(origin);
    if (origin_node < 0) continue;
    if (completion_record(m_node_rank, origin_node).load(std::memory_order_acquire) !=
        m_posted_to[static_cast<std::size_t>(origin)]) {
      throw peer_failure("cachecomm: rank " + std::to_string(m_rank) +
                             " waited in wait() for rank " + std::to_string(origin) +
                             " to complete its access epoch (post group " +
                             group_text(m_post_group) + "): " + timeout.what(),
                         origin);
    }
  }
  throw timeout;
}

void window_impl::wait() {
  if (!m_exposure_open) {
    throw usage_error("cachecomm: window wait() by rank " + std::to_string(m_rank) +
                      " with no matching post()");
  }
  if (!local_completions_done()) {
    auto& counter = completion_counter(m_node_rank);
    try {
      wait_progressing(
          reinterpret_cast<const std::uint32_t*>(&counter),
          [this] { return local_completions_done(); }, -1,
          "a PSCW exposure epoch (waiting for the origins' complete)");
    } catch (const peer_failure& failure) {
      if (failure.peer_rank() >= 0) throw;  // a dead peer, already named
      name_late_origins(failure);
    }
  }
  for (std::size_t i = 0; i < m_remote_completions.size(); ++i) {
    if (m_remote_completions[i] == MPI_REQUEST_NULL)
      continue;  // arrived in an earlier test() or wait()
    wait_mpi_request(m_remote_completions[i], m_remote_completion_ranks[i],
                     "a PSCW exposure epoch (waiting for the origin's complete)");
    ++m_notices_received[static_cast<std::size_t>(m_remote_completion_ranks[i])].completes;
  }
  close_exposure();
}

bool window_impl::test() {
  if (!m_exposure_open) {
    throw usage_error("cachecomm: window test() by rank " + std::to_string(m_rank) +
                      " with no matching post()");
  }
  if (m_multi_node)
    drive_mpi_progress();  // a caller looping on test() must not starve MPI accumulates
  if (!local_completions_done()) return false;
  // Each complete counted as it arrives (a completed request turns MPI_REQUEST_NULL).
  bool all_arrived = true;
  for (std::size_t i = 0; i < m_remote_completions.size(); ++i) {
    if (m_remote_completions[i] == MPI_REQUEST_NULL) continue;
    int arrived = 0;
    CACHECOMM_MPI(MPI_Test(&m_remote_completions[i], &arrived, MPI_STATUS_IGNORE));
    if (arrived == 0) {
      all_arrived = false;
      continue;
    }
    ++m_notices_received[static_cast<std::size_t>(m_remote_completion_ranks[i])].completes;
  }
  if (!all_arrived) return false;
  close_exposure();
  return true;
}

void window_impl::close_exposure() {
  for (std::size_t i = 0; i < m_remote_completion_serials.size(); ++i) {
    const int origin = m_remote_completion_ranks[i];
    if (m_remote_completion_serials[i] != m_posted_to[static_cast<std::size_t>(origin)]) {
      throw usage_error("cachecomm: window wait(): rank " + std::to_string(origin) +
                        " completed epoch " + std::to_string(m_remote_completion_serials[i]) +
                        " but rank " + std::to_string(m_rank) + " posted epoch " +
                        std::to_string(m_posted_to[static_cast<std::size_t>(origin)]));
    }
  }
  // Remote origins wrote through MPI: make their data visible to this process's loads.
  if (m_multi_node) CACHECOMM_MPI(MPI_Win_sync(m_mpi_window.get()));
  m_remote_completions.clear();
  m_remote_completion_ranks.clear();
  m_remote_completion_serials.clear();
  m_post_group.clear();
  m_exposure_open = false;
}

}  // namespace detail

// ---- public API ----

window::window(comm& communicator, std::size_t bytes, std::size_t disp_unit)
    : m_impl(std::make_unique<detail::window_impl>(communicator, bytes, disp_unit)) {}
window::window(comm& communicator, std::size_t bytes, std::size_t disp_unit,
               std::span<std::byte* const> node_regions) {
  const std::vector<std::byte*> regions(node_regions.begin(), node_regions.end());
  m_impl = std::make_unique<detail::window_impl>(communicator, bytes, disp_unit, &regions);
}
window::~window() = default;
window::window(window&&) noexcept = default;
window& window::operator=(window&&) noexcept = default;

std::span<std::byte> window::local() const {
  return {m_impl->local_base(), m_impl->size_of(m_impl->rank())};
}
std::size_t window::size_of(int target) const {
  return m_impl->size_of(target);
}
std::size_t window::disp_unit_of(int target) const {
  return m_impl->disp_unit_of(target);
}
int window::rank() const {
  return m_impl->rank();
}
int window::size() const {
  return m_impl->size();
}
bool window::is_node_local(int target) const {
  return m_impl->is_node_local(target);
}
bool window::atomic_aligned(int target, std::size_t displacement,
                            std::size_t element_alignment) const {
  return m_impl->atomic_aligned(target, displacement, element_alignment);
}
std::size_t window::atomic_alignment(datatype type) {
  return detail::accumulate_alignment(type);
}

void window::put(const void* origin, std::size_t bytes, int target, std::size_t displacement) {
  m_impl->put(origin, bytes, target, displacement);
}
void window::get(void* result, std::size_t bytes, int target, std::size_t displacement) {
  m_impl->get(result, bytes, target, displacement);
}
void window::accumulate(const void* origin, std::size_t count, datatype type, reduce_op op,
                        int target, std::size_t displacement) {
  m_impl->accumulate(origin, count, type, op, target, displacement);
}
void window::fetch_and_accumulate(const void* origin, void* result, std::size_t count,
                                  datatype type, reduce_op op, int target,
                                  std::size_t displacement) {
  m_impl->fetch_and_accumulate(origin, result, count, type, op, target, displacement);
}
void window::compare_and_swap(const void* origin, const void* compare, void* result,
                              std::size_t element_bytes, int target, std::size_t displacement) {
  m_impl->compare_and_swap(origin, compare, result, element_bytes, target, displacement);
}
void window::fence(fence_flag flag) {
  m_impl->fence(flag);
}
void window::post(const rank_group& origins) {
  m_impl->post(origins);
}
void window::start(const rank_group& targets) {
  m_impl->start(targets);
}
void window::complete() {
  m_impl->complete();
}
void window::wait() {
  m_impl->wait();
}
bool window::test() {
  return m_impl->test();
}

}  // namespace cachecomm
