#include "coll/coll_engine.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/mismatch_error.hpp"
#include "coll/reduce_kernels.hpp"
#include "coll/shared_copy.hpp"
#include "core/comm_impl.hpp"
#include "core/mpi_check.hpp"

namespace cachecomm::detail {

namespace {

const setting_declaration region_setting{
    "CACHECOMM_COLL_REGION", "1048576",
    "Bytes of each of the two halves of the collectives' shared data region (per node); larger "
    "messages are pipelined through it."};
const setting_declaration chunk_setting{"CACHECOMM_COLL_CHUNK", "131072",
                                        "Pipeline chunk of large broadcasts and bytes per step of "
                                        "large reductions (when oversubscribed "
                                        "the whole region is used, to save scheduler rounds)."};
const setting_declaration slots_setting{"CACHECOMM_COLL_SLOTS", "0",
                                        "Slots of 4 KiB per rank for small collectives, used round "
                                        "robin; a power of two (0: 8, or 32 when "
                                        "oversubscribed)."};
const setting_declaration single_copy_setting{"CACHECOMM_SINGLE_COPY", "1",
                                              "Allow single-copy broadcast and allgather through "
                                              "cross-memory attach (process_vm_readv) when the "
                                              "kernel permits it."};

const setting_declaration streaming_setting{
    "CACHECOMM_STREAMING_STORES", "auto",
    "Copy into the collectives' shared region with non-temporal stores (1), ordinary ones (0), or "
    "auto: streaming on AMD CPUs when not oversubscribed, where taking lines back from the ranks "
    "that read them last is slow (see docs/architecture.md)."};

std::uint64_t& address_word(padded_flag& line) {
  return *reinterpret_cast<std::uint64_t*>(&line);
}

// A rank's posted line also carries the description of its call (after the flag word): the call's
// first step (0 while being rewritten: a seqlock, since a writer a step ahead may be in its next
// call while a reader still checks this one), the call info and the byte count.
std::uint32_t& posted_first_step(padded_flag& line) {
  return reinterpret_cast<std::uint32_t*>(&line)[1];
}
std::uint32_t& posted_info(padded_flag& line) {
  return reinterpret_cast<std::uint32_t*>(&line)[2];
}
std::uint64_t& posted_bytes(padded_flag& line) {
  return reinterpret_cast<std::uint64_t*>(&line)[2];
}

std::string describe_call(std::uint32_t info, std::uint64_t bytes) {
  const auto kind = info >> 16U;
  std::string text = std::to_string(bytes) + " bytes";
  if (kind == 2) {
    const auto type = static_cast<datatype>((info >> 8U) & 0xffU);
    const auto op = static_cast<reduce_op>(info & 0xffU);
    text += " of " + std::string(to_string(type)) + " (" + std::to_string(bytes / size_of(type)) +
            " elements), " + std::string(to_string(op));
  }
  return text;
}

const char* kind_name(std::uint32_t info) {
  switch (info >> 16U) {
    case 1: return "broadcast";
    case 2: return "reduction";
    case 3: return "allgather";
    default: return "collective";
  }
}

}  // namespace

coll_engine& coll_engine::of(comm_impl& impl) {
  auto& state = impl.collectives_state();
  if (!state) state = std::make_shared<coll_engine>(impl);
  return *state;
}

coll_engine::coll_engine(comm_impl& impl) {
  static_assert(slot_payload + slot_header_bytes == slot_stride);
  const node_topology& topology = impl.topology();
  m_size = topology.node_size;
  m_rank = topology.node_rank;
  m_oversubscribed = topology.oversubscribed;
  m_wait = &impl.wait();

  const config& settings = impl.settings();
  const long long region = settings.get_int("CACHECOMM_COLL_REGION");
  const long long chunk = settings.get_int("CACHECOMM_COLL_CHUNK");
  if (region < 65536 || region > (1LL << 32)) {
    throw invalid_argument(
        "cachecomm: CACHECOMM_COLL_REGION must be between 65536 and 2^32 bytes, got " +
        std::to_string(region));
  }
  if (chunk < 4096) {
    throw invalid_argument("cachecomm: CACHECOMM_COLL_CHUNK must be at least 4096 bytes, got " +
                           std::to_string(chunk));
  }
  const auto size = static_cast<std::size_t>(m_size);
  // Every rank needs room for a few lines of its own in a large reduction's staging area.
  m_tuning.region_bytes = round_up(std::max(static_cast<std::size_t>(region), size * 16384), 4096);
  m_tuning.chunk_bytes =
      std::min(round_up(static_cast<std::size_t>(chunk), cache_line_size), m_tuning.region_bytes);
  m_tuning.single_copy = settings.get_bool("CACHECOMM_SINGLE_COPY");
  m_tuning.check = settings.get_bool("CACHECOMM_CHECK");
  const std::string streaming = settings.get("CACHECOMM_STREAMING_STORES");
  if (streaming != "auto" && streaming != "0" && streaming != "1") {
    throw invalid_argument("cachecomm: CACHECOMM_STREAMING_STORES must be auto, 0 or 1, got '" +
                           streaming + "'");
  }
  // Oversubscribed, a reader often runs on the writer's core and finds the lines in its cache;
  // streaming stores would send it to memory (4 ranks on 2 cores: 32-256 KiB allreduce and
  // allgather 1.7-2x slower with them).
  m_tuning.streaming_stores =
      streaming == "auto" ? !m_oversubscribed && streaming_stores_pay_off() : streaming == "1";
  m_tuning.broadcast = parse_broadcast_algorithm(settings.get("CACHECOMM_BCAST"));
  m_tuning.reduce = parse_reduce_algorithm(settings.get("CACHECOMM_REDUCE"));
  m_tuning.allreduce = parse_reduce_algorithm(settings.get("CACHECOMM_ALLREDUCE"));
  m_tuning.allgather = parse_allgather_algorithm(settings.get("CACHECOMM_ALLGATHER"));

  segment_layout layout;
  const std::size_t posted = layout.reserve(slot_array<padded_flag>::bytes_for(size));
  const std::size_t done = layout.reserve(slot_array<padded_flag>::bytes_for(size));
  const std::size_t address = layout.reserve(slot_array<padded_flag>::bytes_for(size));
  const long long ring = settings.get_int("CACHECOMM_COLL_SLOTS");
  // A power of two, so that slot numbers stay in order when the 32-bit step counter wraps.
  if (ring != 0 && (ring < 2 || ring > 1024 || (ring & (ring - 1)) != 0)) {
    throw invalid_argument(
        "cachecomm: CACHECOMM_COLL_SLOTS must be 0 (auto) or a power of two from 2 to 1024, got " +
        std::to_string(ring));
  }
  m_slot_ring = ring != 0 ? static_cast<std::uint32_t>(ring) : (m_oversubscribed ? 32U : 8U);
  m_small_slot_ring = m_oversubscribed ? 256U : 64U;
  const std::size_t slots = layout.reserve(m_slot_ring * size * slot_stride, 4096);
  const std::size_t small_slots =
      layout.reserve(m_small_slot_ring * size * small_slot_stride, 4096);
  const std::size_t data = layout.reserve(2 * m_tuning.region_bytes, 4096);
  m_segment = shm_segment(impl.node(), layout.size());
  m_posted = slot_array<padded_flag>(m_segment.bytes_at(posted, size * cache_line_size), size);
  m_done = slot_array<padded_flag>(m_segment.bytes_at(done, size * cache_line_size), size);
  m_address = slot_array<padded_flag>(m_segment.bytes_at(address, size * cache_line_size), size);
  m_slots = m_segment.bytes_at(slots, m_slot_ring * size * slot_stride);
  m_small_slots = m_segment.bytes_at(small_slots, m_small_slot_ring * size * small_slot_stride);
  m_region = m_segment.bytes_at(data, 2 * m_tuning.region_bytes);
  m_inputs.resize(size);

  m_pids.resize(size);
  pid_t self = ::getpid();
  CACHECOMM_MPI(MPI_Allgather(&self, 1, MPI_INT, m_pids.data(), 1, MPI_INT, impl.node()));
  probe_single_copy(impl.node());

  if (!impl.single_node()) {
    // Where every rank of the communicator lives, for the node phases of multi-node collectives.
    int mine[2] = {topology.node_index, topology.node_rank};
    std::vector<int> all(2 * static_cast<std::size_t>(impl.size()));
    CACHECOMM_MPI(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, impl.world()));
    m_node_of_rank.resize(static_cast<std::size_t>(impl.size()));
    m_node_rank_of_rank.resize(static_cast<std::size_t>(impl.size()));
    for (std::size_t rank = 0; rank < m_node_of_rank.size(); ++rank) {
      m_node_of_rank[rank] = all[2 * rank];
      m_node_rank_of_rank[rank] = all[2 * rank + 1];
    }
  }
}

void coll_engine::probe_single_copy(MPI_Comm node) {
  // Each rank reads a known word from its neighbour; all must succeed (ptrace policy, seccomp and
  // container settings can each refuse it), otherwise everyone copies through shared memory.
  int works = 0;
  if (m_tuning.single_copy && m_size > 1) {
    volatile std::uint64_t marker = 0x5eed0000ULL + static_cast<std::uint64_t>(m_rank);
    auto mine = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&marker));
    std::vector<std::uint64_t> addresses(static_cast<std::size_t>(m_size));
    CACHECOMM_MPI(MPI_Allgather(&mine, 1, MPI_UINT64_T, addresses.data(), 1, MPI_UINT64_T, node));
    const int peer = (m_rank + 1) % m_size;
    std::uint64_t seen = 0;
    iovec local{&seen, sizeof seen};
    iovec remote{reinterpret_cast<void*>(
                     static_cast<std::uintptr_t>(addresses[static_cast<std::size_t>(peer)])),
                 sizeof seen};
    const ssize_t got =
        ::process_vm_readv(m_pids[static_cast<std::size_t>(peer)], &local, 1, &remote, 1, 0);
    works = got == static_cast<ssize_t>(sizeof seen) &&
                    seen == 0x5eed0000ULL + static_cast<std::uint64_t>(peer)
                ? 1
                : 0;
    // Writing the same value back tests the root's push (process_vm_writev) without changing
    // anything.
    const ssize_t put = works == 1 ? ::process_vm_writev(m_pids[static_cast<std::size_t>(peer)],
                                                         &local, 1, &remote, 1, 0)
                                   : -1;
    const int pushes = put == static_cast<ssize_t>(sizeof seen) ? 1 : 0;
    int all_work[2] = {0, 0};
    int outcomes[2] = {works, pushes};
    CACHECOMM_MPI(
        MPI_Allreduce(outcomes, all_work, 2, MPI_INT, MPI_MIN, node));  // also keeps `marker` alive
    works = all_work[0];
    m_cma_push = works == 1 && all_work[1] == 1;
    (void)marker;
  }
  m_cma = works == 1;
}

void coll_engine::begin_call(call_kind kind, std::size_t bytes, datatype type, std::uint32_t op) {
  m_call.first_step = m_step + 1;
  m_call.info =
      static_cast<std::uint32_t>(kind) << 16U | static_cast<std::uint32_t>(type) << 8U | op;
  m_call.bytes = bytes;
}

void coll_engine::describe_slot(std::uint32_t step, std::size_t bytes) const {
  auto* header = reinterpret_cast<slot_header*>(slot(m_rank, step, bytes));
  header->call_info = m_call.info;
  header->call_bytes = m_call.bytes;
}

void coll_engine::check_call(int rank, std::uint32_t step, std::uint32_t info,
                             std::uint64_t bytes) {
  if (info != m_call.info || bytes != m_call.bytes) [[unlikely]]
    call_mismatch(rank, step, info, bytes);
}

void coll_engine::call_mismatch(int rank, std::uint32_t step, std::uint32_t info,
                                std::uint64_t bytes) {
  finish_step(step);  // this rank reads no more of the step; the others may go on
  auto differs = mismatch_error::field::size;
  if ((info >> 16U) != (m_call.info >> 16U)) {
    differs = mismatch_error::field::collective;
  } else if (((info >> 8U) & 0xffU) != ((m_call.info >> 8U) & 0xffU)) {
    differs = mismatch_error::field::datatype;
  } else if ((info & 0xffU) != (m_call.info & 0xffU)) {
    differs = mismatch_error::field::operation;
  }
  throw mismatch_error(std::string("cachecomm: ") + kind_name(m_call.info) + ": node rank " +
                           std::to_string(rank) + " passed " + describe_call(info, bytes) +
                           " to its " + kind_name(info) + ", this rank (node rank " +
                           std::to_string(m_rank) + ") " + describe_call(m_call.info, m_call.bytes),
                       differs);
}

std::uint32_t coll_engine::begin_step() {
  return ++m_step;
}

void coll_engine::ensure_free(std::uint32_t step, std::uint32_t depth) {
  const std::uint32_t needed = step - depth;
  if (sequence_reached(m_all_done, needed)) return;
  // A writer that has run a whole ring ahead waits until its readers are half a ring behind, not
  // just one slot: otherwise it would re-read their `done` lines (and they re-acquire them) on
  // every step. Safe for deep rings only: every rank has finished all steps but its last one or
  // two.
  const std::uint32_t target = depth >= 8 ? step - depth / 2 : needed;
  std::uint32_t lowest = m_step;
  for (int rank = 0; rank < m_size; ++rank) {
    if (rank == m_rank) continue;
    auto& word = m_done[static_cast<std::size_t>(rank)].value;
    std::uint32_t value = word.load(std::memory_order_acquire);
    if (!sequence_reached(value, needed) || (depth >= 8 && !sequence_reached(value, target))) {
      m_wait->wait_reach(word, target, rank,
                         "collective (a rank still reading the buffer about to be reused)");
      value = word.load(std::memory_order_acquire);
    }
    if (!sequence_reached(value, lowest)) lowest = value;
  }
  m_all_done = lowest;
}

void coll_engine::finish_step(std::uint32_t step) {
  m_wait->publish_lazy(m_done[static_cast<std::size_t>(m_rank)].value, step);
}

void coll_engine::post_slot(std::uint32_t step, std::size_t bytes) {
  describe_slot(step, bytes);
  m_wait->publish_lazy(slot_sequence(m_rank, step, bytes), step);
  // Ask for ownership of the first line of the slot two steps on, so a later post does not stall
  // on it: the publish's fence waits until the payload's line is owned, and one step's lead is
  // shorter than the line transfer when a broadcast root runs ahead (measured at 2 ranks: lead 1,
  // 97 ns per 8-byte broadcast; lead 2 or 4, 35 ns; lead 8, 46 ns; lead 16, 74 ns).
  __builtin_prefetch(slot(m_rank, step + 2, bytes), 1, 3);
}

void coll_engine::store_slot(std::uint32_t step, std::size_t bytes) {
  // A release store, not publish(): its fence would wait until this rank owns the slot's line again
  // (a rank already polling it has taken a copy), and only then start reading the others' slots.
  // Without it the ownership request and those reads overlap. wake_slot does the fence later.
  describe_slot(step, bytes);
  slot_sequence(m_rank, step, bytes).store(step, std::memory_order_release);
  __builtin_prefetch(slot(m_rank, step + 2, bytes), 1, 3);  // as in post_slot
}

void coll_engine::wake_slot(std::uint32_t step, std::size_t bytes) {
  // The Dekker pair with a sleeper (see waiter::publish_lazy): the store above, the fence when the
  // wait mode sleeps early, then the sleeper count. A rank asleep on the slot meanwhile waited at
  // most for this rank's own waits, which need only slots posted before their owners wait.
  m_wait->wake_lazy(reinterpret_cast<const std::uint32_t*>(&slot_sequence(m_rank, step, bytes)));
}

void coll_engine::wait_slot(int rank, std::uint32_t step, std::size_t bytes, const char* what) {
  m_wait->wait_reach(slot_sequence(rank, step, bytes), step, rank, what);
  const auto* header = reinterpret_cast<const slot_header*>(slot(rank, step, bytes));
  check_call(rank, step, header->call_info, header->call_bytes);
}

void coll_engine::post_region(std::uint32_t step) {
  auto& line = m_posted[static_cast<std::size_t>(m_rank)];
  std::atomic_ref<std::uint32_t> first_step(posted_first_step(line));
  if (first_step.load(std::memory_order_relaxed) != m_call.first_step) {
    first_step.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    std::atomic_ref<std::uint32_t>(posted_info(line)).store(m_call.info, std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(posted_bytes(line))
        .store(m_call.bytes, std::memory_order_relaxed);
    first_step.store(m_call.first_step, std::memory_order_release);
  }
  m_wait->publish(line.value, step);
}

void coll_engine::wait_region(int rank, std::uint32_t step, const char* what) {
  auto& line = m_posted[static_cast<std::size_t>(rank)];
  m_wait->wait_reach(line.value, step, rank, what);
  // Compared only while the line still describes this call (its writer may have moved on).
  std::atomic_ref<std::uint32_t> first_step(posted_first_step(line));
  const std::uint32_t before = first_step.load(std::memory_order_acquire);
  if (before != m_call.first_step || before == 0) return;
  const std::uint32_t info =
      std::atomic_ref<std::uint32_t>(posted_info(line)).load(std::memory_order_relaxed);
  const std::uint64_t bytes =
      std::atomic_ref<std::uint64_t>(posted_bytes(line)).load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (first_step.load(std::memory_order_relaxed) != before) return;
  check_call(rank, step, info, bytes);
}

// ---------------------------------------------------------------------------------------------
// Broadcast

void coll_engine::broadcast(void* buffer, std::size_t bytes, int root,
                            broadcast_algorithm algorithm) {
  if (m_size == 1 || bytes == 0) return;
  begin_call(call_kind::broadcast, bytes, datatype::byte, 0xffU);
  switch (algorithm) {
    case broadcast_algorithm::central:
      if (bytes <= slot_payload)
        broadcast_slots(buffer, bytes, root);
      else
        broadcast_region(buffer, bytes, root, 1);
      return;
    case broadcast_algorithm::double_buffer:
      if (bytes <= slot_payload)
        broadcast_slots(buffer, bytes, root);
      else
        broadcast_region(buffer, bytes, root, 2);
      return;
    case broadcast_algorithm::tree: broadcast_tree(buffer, bytes, root); return;
    case broadcast_algorithm::single_copy:
      if (m_cma)
        broadcast_single_copy(buffer, bytes, root);
      else
        broadcast_region(buffer, bytes, root, 2);
      return;
    case broadcast_algorithm::automatic: break;
  }
  throw usage_error("cachecomm: coll_engine::broadcast needs a concrete algorithm");
}

void coll_engine::broadcast_slots(void* buffer, std::size_t bytes, int root) {
  auto* data = static_cast<std::byte*>(buffer);
  for (std::size_t offset = 0; offset < bytes; offset += slot_payload) {
    const std::size_t n = std::min(slot_payload, bytes - offset);
    const std::uint32_t step = begin_step();
    if (m_rank == root) {
      ensure_free(step, slot_depth(n));
      std::memcpy(slot_data(m_rank, step, n), data + offset, n);
      post_slot(step, n);
    } else {
      wait_slot(root, step, n, "broadcast (root's slot)");
      std::memcpy(data + offset, slot_data(root, step, n), n);
    }
    finish_step(step);
  }
}

void coll_engine::broadcast_tree(void* buffer, std::size_t bytes, int root) {
  // Binomial tree on ranks relative to the root: parent clears the highest bit, so each slot has
  // at most log2(P) readers instead of P-1.
  const auto relative = static_cast<unsigned>((m_rank - root + m_size) % m_size);
  const int parent =
      relative == 0 ? -1 : (static_cast<int>(relative - std::bit_floor(relative)) + root) % m_size;
  const unsigned first_child = relative == 0 ? 1U : std::bit_floor(relative) << 1;
  const bool has_children = relative + first_child < static_cast<unsigned>(m_size);
  auto* data = static_cast<std::byte*>(buffer);
  for (std::size_t offset = 0; offset < bytes; offset += slot_payload) {
    const std::size_t n = std::min(slot_payload, bytes - offset);
    const std::uint32_t step = begin_step();
    if (parent < 0) {
      ensure_free(step, slot_depth(n));
      std::memcpy(slot_data(m_rank, step, n), data + offset, n);
      post_slot(step, n);
    } else {
      wait_slot(parent, step, n, "broadcast (parent's slot in the tree)");
      if (has_children) {
        ensure_free(step, slot_depth(n));
        std::memcpy(slot_data(m_rank, step, n), slot_data(parent, step, n), n);
        post_slot(step, n);
      }
      std::memcpy(data + offset, slot_data(parent, step, n), n);
    }
    finish_step(step);
  }
}

void coll_engine::broadcast_region(void* buffer, std::size_t bytes, int root, std::uint32_t depth) {
  // depth 1 is the seed's centralized algorithm: each chunk fills the region and the root waits for
  // every reader before the next; depth 2 double-buffers in pipeline chunks.
  const std::size_t chunk =
      depth == 1 || m_oversubscribed ? m_tuning.region_bytes : m_tuning.chunk_bytes;
  auto* data = static_cast<std::byte*>(buffer);
  for (std::size_t offset = 0; offset < bytes; offset += chunk) {
    const std::size_t n = std::min(chunk, bytes - offset);
    const std::uint32_t step = begin_step();
    if (m_rank == root) {
      ensure_free(step, depth);
      copy_to_shared(region(step), data + offset, n, m_tuning.streaming_stores);
      post_region(step);
    } else {
      wait_region(root, step, "broadcast (root's data region)");
      std::memcpy(data + offset, region(step), n);
    }
    finish_step(step);
  }
}

int cross_memory_copy(pid_t pid, std::byte* local_data, std::uint64_t remote_address,
                      std::size_t bytes, bool push) {
  std::size_t copied = 0;
  while (copied < bytes) {
    iovec local{local_data + copied, bytes - copied};
    iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(remote_address + copied)),
                 bytes - copied};
    const ssize_t got = push ? ::process_vm_writev(pid, &local, 1, &remote, 1, 0)
                             : ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (got == 0) return EFAULT;
    copied += static_cast<std::size_t>(got);
  }
  return 0;
}

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
          push_error = cross_memory_copy(m_pids[static_cast<std::size_t>(rank)], data + pulled,
                                         address + pulled, pushed, true);
        }
      }
      std::atomic_ref<std::uint64_t>((&address_word(own_line))[1])
          .store(push_error == 0 ? 0 : step, std::memory_order_relaxed);
    }
    finish_step(step);  // readers wait for it when part of the message is pushed
    // The readers copy from the caller's buffer: it must outlive every read.
    for (int rank = 0; rank < m_size; ++rank) {
      if (rank != m_rank) {
        m_wait->wait_reach(m_done[static_cast<std::size_t>(rank)].value, step, rank,
                           "broadcast (single-copy reader)");
      }
    }
    return;
  }
  post_region(step);  // this rank's address, for the root's push
  wait_region(root, step, "broadcast (root's address)");
  auto& root_line = m_address[static_cast<std::size_t>(root)];
  const std::uint64_t address =
      std::atomic_ref<std::uint64_t>(address_word(root_line)).load(std::memory_order_relaxed);
  const pid_t root_pid = m_pids[static_cast<std::size_t>(root)];
  int error_number = cross_memory_copy(root_pid, data, address, pulled, false);
  if (pushed > 0) {
    m_wait->wait_reach(m_done[static_cast<std::size_t>(root)].value, step, root,
                       "broadcast (root's single-copy push)");
    const std::uint64_t failed = std::atomic_ref<std::uint64_t>((&address_word(root_line))[1])
                                     .load(std::memory_order_relaxed);
    if (error_number == 0 && failed == step) {
      error_number = cross_memory_copy(root_pid, data + pulled, address + pulled, pushed, false);
    }
  }
  finish_step(step);  // let the root go; this rank reports a failure
  if (error_number != 0) {
    throw system_error("cachecomm: single-copy broadcast: process_vm_readv from node rank " +
                           std::to_string(root) + " failed",
                       error_number);
  }
}

// ---------------------------------------------------------------------------------------------
// Reduce / allreduce

void coll_engine::reduce(const void* input, void* output, std::size_t count, datatype type,
                         reduce_op op, int root, reduce_algorithm algorithm) {
  if (count == 0) return;
  const bool receiver = root < 0 || root == m_rank;
  if (m_size == 1) {
    if (receiver && input != output) std::memcpy(output, input, count * size_of(type));
    return;
  }
  begin_call(call_kind::reduce, count * size_of(type), type, static_cast<std::uint32_t>(op));
  switch (algorithm) {
    case reduce_algorithm::slots: reduce_slots(input, output, count, type, op, root); return;
    case reduce_algorithm::reduce_scatter:
      reduce_scatter(input, output, count, type, op, root);
      return;
    case reduce_algorithm::gather_reduce:
      reduce_gather(input, output, count, type, op, root);
      return;
    case reduce_algorithm::automatic: break;
  }
  throw usage_error("cachecomm: coll_engine::reduce needs a concrete algorithm");
}

void coll_engine::reduce_slots(const void* input, void* output, std::size_t count, datatype type,
                               reduce_op op, int root) {
  const std::size_t element = size_of(type);
  const std::size_t per_slot = count * element <= slot_payload ? count : slot_payload / element;
  const bool receiver = root < 0 || root == m_rank;
  const auto* in = static_cast<const std::byte*>(input);
  auto* out = static_cast<std::byte*>(output);
  for (std::size_t first = 0; first < count; first += per_slot) {
    const std::size_t n = std::min(per_slot, count - first);
    const std::uint32_t step = begin_step();
    ensure_free(step, slot_depth(n * element));
    std::memcpy(slot_data(m_rank, step, n * element), in + first * element, n * element);
    store_slot(step, n * element);
    if (!receiver) wake_slot(step, n * element);
    if (receiver) {
      for (int rank = 0; rank < m_size; ++rank) {
        if (rank != m_rank) wait_slot(rank, step, n * element, "reduce (a rank's slot)");
        // This rank's own part comes from its private input (the same bits as its slot): by now
        // the others are reading the slot's line, and reading it back here would wait for them.
        m_inputs[static_cast<std::size_t>(rank)] =
            rank == m_rank ? in + first * element : slot_data(rank, step, n * element);
      }
      reduce_ordered(m_inputs.data(), m_size, out + first * element, nullptr, n, type, op);
      // finish_step and wake_slot under one fence: `done` as a release store first.
      auto& done = m_done[static_cast<std::size_t>(m_rank)].value;
      done.store(step, std::memory_order_release);
      wake_slot(step, n * element);
      m_wait->wake(reinterpret_cast<const std::uint32_t*>(&done));
      continue;
    }
    finish_step(step);
  }
}

void coll_engine::reduce_scatter(const void* input, void* output, std::size_t count, datatype type,
                                 reduce_op op, int root) {
  const std::size_t element = size_of(type);
  const std::size_t per_line = cache_line_size / element;
  const auto size = static_cast<std::size_t>(m_size);
  const auto me = static_cast<std::size_t>(m_rank);
  const bool receiver = root < 0 || root == m_rank;
  const bool others_receive = root < 0 || root != m_rank;
  // Per step every rank stages one chunk of its input; the staging half holds P of them.
  std::size_t step_bytes = m_tuning.region_bytes / size / cache_line_size * cache_line_size;
  if (!m_oversubscribed) step_bytes = std::min(step_bytes, m_tuning.chunk_bytes);
  const std::size_t step_elements = step_bytes / element;
  const auto* in = static_cast<const std::byte*>(input);
  auto* out = static_cast<std::byte*>(output);

  for (std::size_t first = 0; first < count; first += step_elements) {
    const std::size_t n = std::min(step_elements, count - first);
    const std::size_t lines = (n + per_line - 1) / per_line;
    auto slice_begin = [&](std::size_t slice) {
      return std::min(n, lines * slice / size * per_line);
    };
    const std::byte* in_chunk = in + first * element;
    std::byte* out_chunk = out + first * element;

    // 1. Stage the slices the other ranks reduce.
    const std::uint32_t staged = begin_step();
    ensure_free(staged, 2);
    std::byte* staging = region(staged);
    for (std::size_t slice = 0; slice < size; ++slice) {
      if (slice == me) continue;
      const std::size_t begin = slice_begin(slice);
      const std::size_t end = slice_begin(slice + 1);
      copy_to_shared(staging + me * step_bytes + begin * element, in_chunk + begin * element,
                     (end - begin) * element, m_tuning.streaming_stores);
    }
    post_region(staged);
    for (int rank = 0; rank < m_size; ++rank) {
      if (rank != m_rank) wait_region(rank, staged, "reduce (a rank's staged input)");
    }

    // 2. Reduce this rank's slice of every input, in rank order.
    const std::uint32_t reduced = begin_step();
    ensure_free(reduced, 2);
    std::byte* result = region(reduced);
    const std::size_t begin = slice_begin(me);
    const std::size_t end = slice_begin(me + 1);
    if (end > begin) {
      for (std::size_t rank = 0; rank < size; ++rank) {
        m_inputs[rank] =
            rank == me ? in_chunk + begin * element : staging + rank * step_bytes + begin * element;
      }
      if (!m_tuning.streaming_stores) {
        void* shared_out = others_receive ? result + begin * element : nullptr;
        void* own_out = receiver ? out_chunk + begin * element : nullptr;
        if (shared_out == nullptr) std::swap(shared_out, own_out);
        reduce_ordered(m_inputs.data(), m_size, shared_out, own_out, end - begin, type, op);
      } else {
        // A private buffer first, then the shared half with streaming stores: the others hold
        // that half's lines from reading it two steps ago (see shared_copy.hpp).
        const std::size_t slice_bytes = (end - begin) * element;
        std::byte* reduced_slice = out_chunk + begin * element;
        if (!receiver) {
          if (m_scratch.size() < slice_bytes) m_scratch.resize(slice_bytes);
          reduced_slice = m_scratch.data();
        }
        reduce_ordered(m_inputs.data(), m_size, reduced_slice, nullptr, end - begin, type, op);
        if (others_receive)
          copy_to_shared(result + begin * element, reduced_slice, slice_bytes, true);
      }
    }
    finish_step(staged);
    post_region(reduced);

    // 3. Gather the other slices.
    if (receiver) {
      for (std::size_t offset = 1; offset < size; ++offset) {
        const std::size_t rank = (me + offset) % size;
        wait_region(static_cast<int>(rank), reduced, "reduce (a rank's reduced slice)");
        const std::size_t slice_start = slice_begin(rank);
        const std::size_t slice_end = slice_begin(rank + 1);
        std::memcpy(out_chunk + slice_start * element, result + slice_start * element,
                    (slice_end - slice_start) * element);
      }
    }
    finish_step(reduced);
  }
}

// ---------------------------------------------------------------------------------------------
// Allgather

void coll_engine::allgather(const void* input, void* output, std::size_t block_bytes,
                            allgather_algorithm algorithm) {
  if (algorithm == allgather_algorithm::automatic) {
    throw usage_error("cachecomm: coll_engine::allgather needs a concrete algorithm");
  }
  if (block_bytes == 0) return;
  begin_call(call_kind::allgather, block_bytes, datatype::byte, 0xffU);
  if (m_size > 1 && algorithm == allgather_algorithm::single_copy && m_cma) {
    allgather_single_copy(input, output, block_bytes);
    return;
  }
  allgather_central(input, output,
                    block_bytes);  // also single_copy when cross-memory attach is refused
}

void coll_engine::allgather_central(const void* input, void* output, std::size_t block_bytes) {
  auto* out = static_cast<std::byte*>(output);
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  if (input != out + me * block_bytes) std::memcpy(out + me * block_bytes, input, block_bytes);
  if (m_size == 1) return;
  const bool use_slots = block_bytes <= slot_payload;
  const std::size_t chunk =
      use_slots ? slot_payload : m_tuning.region_bytes / size / cache_line_size * cache_line_size;
  const auto* in = static_cast<const std::byte*>(input);
  for (std::size_t offset = 0; offset < block_bytes; offset += chunk) {
    const std::size_t n = std::min(chunk, block_bytes - offset);
    const std::uint32_t step = begin_step();
    ensure_free(step, use_slots ? slot_depth(n) : 2);
    if (use_slots) {
      std::memcpy(slot_data(m_rank, step, n), in + offset, n);
      post_slot(step, n);
    } else {
      copy_to_shared(region(step) + me * chunk, in + offset, n, m_tuning.streaming_stores);
      post_region(step);
    }
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      const std::byte* source = nullptr;
      if (use_slots) {
        wait_slot(static_cast<int>(rank), step, n, "allgather (a rank's slot)");
        source = slot_data(static_cast<int>(rank), step, n);
      } else {
        wait_region(static_cast<int>(rank), step, "allgather (a rank's block)");
        source = region(step) + rank * chunk;
      }
      std::memcpy(out + rank * block_bytes + offset, source, n);
    }
    finish_step(step);
  }
}

}  // namespace cachecomm::detail
