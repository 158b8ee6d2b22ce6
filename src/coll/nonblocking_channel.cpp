#include "coll/nonblocking_channel.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "coll/reduce_kernels.hpp"
#include "shm/cache_line.hpp"
#include "sync/waiter.hpp"

namespace cachecomm::detail {

namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return rank;
}

int size_of_comm(MPI_Comm comm) {
  int size = 1;
  PMPI_Comm_size(comm, &size);
  return size;
}

// Each rank's two words on lines of their own: arrived then released.
constexpr std::size_t words_per_rank = 2;

std::size_t segment_bytes(int ranks, std::size_t slots_offset, std::size_t stride) {
  return slots_offset + static_cast<std::size_t>(nonblocking_channel::ring) *
                            static_cast<std::size_t>(ranks) * stride;
}

}  // namespace

nonblocking_channel::nonblocking_channel(MPI_Comm node_comm, std::size_t slot_bytes,
                                         const wait_policy& policy)
    : m_rank(rank_of(node_comm)),
      m_size(size_of_comm(node_comm)),
      m_slot_bytes(slot_bytes),
      m_slot_stride(padded_to_line(cache_line_size + slot_bytes)),
      m_slots_offset(static_cast<std::size_t>(m_size) * words_per_rank * cache_line_size),
      m_policy(policy) {
  m_segment = shm_segment(node_comm, segment_bytes(m_size, m_slots_offset, m_slot_stride));
  m_base = static_cast<std::byte*>(m_segment.data());
#ifdef MADV_POPULATE_WRITE
  // Maps every page now, without touching its data: otherwise each rank takes a page fault at
  // the first use of every page of every slot, and OSU's large-message runs (10 warm-up calls)
  // measured mostly those. Best effort: older kernels refuse the advice and fault as before.
  (void)::madvise(m_base, m_segment.size(), MADV_POPULATE_WRITE);
#endif
}

std::atomic<std::uint32_t>& nonblocking_channel::arrived(int rank) const {
  const std::size_t offset = static_cast<std::size_t>(rank) * words_per_rank * cache_line_size;
  return reinterpret_cast<padded_flag*>(m_base + offset)->value;
}

std::atomic<std::uint32_t>& nonblocking_channel::released(int rank) const {
  const std::size_t offset =
      (static_cast<std::size_t>(rank) * words_per_rank + 1) * cache_line_size;
  return reinterpret_cast<padded_flag*>(m_base + offset)->value;
}

nonblocking_channel::slot_header& nonblocking_channel::header(int rank,
                                                              std::uint32_t sequence) const {
  const std::size_t slot =
      static_cast<std::size_t>(sequence % ring) * static_cast<std::size_t>(m_size) +
      static_cast<std::size_t>(rank);
  return *reinterpret_cast<slot_header*>(m_base + m_slots_offset + slot * m_slot_stride);
}

std::byte* nonblocking_channel::payload(int rank, std::uint32_t sequence) const {
  return reinterpret_cast<std::byte*>(&header(rank, sequence)) + cache_line_size;
}

std::uint32_t nonblocking_channel::info_of(const nonblocking_call& call) {
  const bool reduction =
      call.kind == nonblocking_kind::reduce || call.kind == nonblocking_kind::allreduce;
  const bool rooted = call.kind == nonblocking_kind::reduce || call.kind == nonblocking_kind::bcast;
  std::uint32_t info = static_cast<std::uint32_t>(call.kind) << 24U;
  if (reduction) {
    info |= (static_cast<std::uint32_t>(call.type) & 0xffU) << 16U;
    info |= (static_cast<std::uint32_t>(call.op) & 0xffU) << 8U;
  }
  if (rooted) info |= static_cast<std::uint32_t>(call.root) & 0xffU;
  return info;
}

bool nonblocking_channel::slot_free(std::uint32_t sequence) const {
  const std::uint32_t previous = sequence - ring;
  for (int rank = 0; rank < m_size; ++rank) {
    if (!sequence_reached(released(rank).load(std::memory_order_acquire), previous)) return false;
  }
  return true;
}

void nonblocking_channel::contribute(std::uint32_t sequence, const nonblocking_call& call) {
  const bool writes = call.kind != nonblocking_kind::barrier &&
                      (call.kind != nonblocking_kind::bcast || call.root == m_rank);
  if (writes && call.send != nullptr) {
    std::byte* mine = payload(m_rank, sequence);
    const std::size_t copied = std::min(call.own_bytes, call.bytes);
    std::memcpy(mine, call.send, copied);
    // A short contribution (erroneous program) leaves no stale bytes behind.
    if (copied < call.bytes) std::memset(mine + copied, 0, call.bytes - copied);
  }
  slot_header& own = header(m_rank, sequence);
  own.sequence = sequence;
  own.info = info_of(call);
  own.bytes = call.own_bytes;
  arrived(m_rank).store(sequence, std::memory_order_release);
}

bool nonblocking_channel::ready(std::uint32_t sequence, const nonblocking_call& call) const {
  auto has_arrived = [&](int rank) {
    return sequence_reached(arrived(rank).load(std::memory_order_acquire), sequence);
  };
  switch (call.kind) {
    case nonblocking_kind::bcast: return has_arrived(call.root);
    case nonblocking_kind::reduce:
      if (call.root != m_rank) return true;  // its data went into its slot: nothing to wait for
      [[fallthrough]];
    case nonblocking_kind::barrier:
    case nonblocking_kind::allreduce:
    case nonblocking_kind::allgather:
      for (int rank = 0; rank < m_size; ++rank) {
        if (!has_arrived(rank)) return false;
      }
      return true;
  }
  return false;
}

int nonblocking_channel::check(int rank, std::uint32_t sequence, const nonblocking_call& call,
                               std::string& problem) const {
  const slot_header& seen = header(rank, sequence);
  if (seen.sequence == sequence && seen.info == info_of(call) && seen.bytes == call.bytes)
    return MPI_SUCCESS;
  problem = "rank " + std::to_string(rank) + " of the communicator called nonblocking collective " +
            std::to_string(sequence) + " with " + std::to_string(seen.bytes) +
            " bytes (call code " + std::to_string(seen.info) + ") where this rank has " +
            std::to_string(call.bytes) + " bytes (call code " + std::to_string(info_of(call)) +
            "): the ranks made different calls";
  return seen.bytes != call.bytes ? MPI_ERR_TRUNCATE : MPI_ERR_OTHER;
}

int nonblocking_channel::finish(std::uint32_t sequence, const nonblocking_call& call,
                                std::string& problem) {
  int result = MPI_SUCCESS;
  auto checked = [&](int rank) {
    const int code = check(rank, sequence, call, problem);
    if (code != MPI_SUCCESS && result == MPI_SUCCESS) result = code;
    return code == MPI_SUCCESS;
  };
  switch (call.kind) {
    case nonblocking_kind::barrier:
      for (int rank = 0; rank < m_size; ++rank) (void)checked(rank);
      break;
    case nonblocking_kind::bcast:
      if (checked(call.root) && call.root != m_rank)
        std::memcpy(call.recv, payload(call.root, sequence), call.bytes);
      break;
    case nonblocking_kind::reduce:
    case nonblocking_kind::allreduce: {
      if (call.kind == nonblocking_kind::reduce && call.root != m_rank) {
        (void)checked(m_rank);
        break;
      }
      bool agreed = true;
      for (int rank = 0; rank < m_size; ++rank) agreed = checked(rank) && agreed;
      if (!agreed) break;
      // Every rank combines the slots in rank order: the same bits on every rank.
      std::vector<const void*> inputs(static_cast<std::size_t>(m_size));
      for (int rank = 0; rank < m_size; ++rank)
        inputs[static_cast<std::size_t>(rank)] = payload(rank, sequence);
      reduce_ordered(inputs.data(), m_size, call.recv, nullptr, call.count, call.type, call.op);
      break;
    }
    case nonblocking_kind::allgather:
      for (int rank = 0; rank < m_size; ++rank) {
        if (!checked(rank)) continue;
        std::memcpy(
            static_cast<std::byte*>(call.recv) + static_cast<std::size_t>(rank) * call.bytes,
            payload(rank, sequence), call.bytes);
      }
      break;
  }
  released(m_rank).store(sequence, std::memory_order_release);
  return result;
}

}  // namespace cachecomm::detail
