// The last step of a nonblocking collective on the channel (nonblocking_channel.hpp): checks the
// slots this rank reads against its own call, copies or combines them into the result, and
// releases the slots. Reductions combine in rank order, so every rank gets the bits of the
// rank-ordered fold (scan and exscan: of ranks 0..r and 0..r-1).
#include <algorithm>
#include <cstring>

#include "coll/nonblocking_channel.hpp"
#include "coll/reduce_kernels.hpp"
#include "shm/cache_line.hpp"
#include "shm/memory_copy.hpp"
#include "sync/waiter.hpp"

namespace cachecomm::detail {

void nonblocking_channel::combine(int inputs, std::size_t block_offset, std::uint32_t sequence,
                                  const nonblocking_call& call) {
  for (int rank = 0; rank < inputs; ++rank)
    m_inputs[static_cast<std::size_t>(rank)] = payload(rank, sequence, call) + block_offset;
  reduce_ordered(m_inputs.data(), inputs, call.recv, nullptr, call.count, call.type, call.op);
}

void nonblocking_channel::finish_split_allreduce(std::uint32_t sequence,
                                                 const nonblocking_call& call) {
  const std::size_t element = size_of(call.type);
  const std::size_t part = split_part_elements(call);
  const std::size_t result_offset = padded_to_line(call.bytes);
  auto* const out = static_cast<std::byte*>(call.recv);
  const auto first_of = [&](int rank) {
    return std::min(call.count, static_cast<std::size_t>(rank) * part);
  };
  const auto length_of = [&](int rank) {
    return std::min(call.count, first_of(rank) + part) - first_of(rank);
  };
  const auto combine_into = [&](std::byte* into, void* second, std::size_t first, std::size_t n) {
    for (int rank = 0; rank < m_size; ++rank)
      m_inputs[static_cast<std::size_t>(rank)] = payload(rank, sequence, call) + first * element;
    reduce_ordered(m_inputs.data(), m_size, into, second, n, call.type, call.op);
  };
  const auto published = [&](int owner) {
    return sequence_reached(reduced(owner).load(std::memory_order_acquire), sequence);
  };
  // The rest of `owner`'s part from `done` on, from its result area.
  const auto copy_part = [&](int owner, std::size_t done) {
    copy_memory(out + (first_of(owner) + done) * element,
                payload(owner, sequence, call) + result_offset + done * element,
                (length_of(owner) - done) * element);
  };

  // This rank's part: into its result area, for the others, and into the result at once.
  if (const std::size_t n = length_of(m_rank); n > 0) {
    combine_into(payload(m_rank, sequence, call) + result_offset, out + first_of(m_rank) * element,
                 first_of(m_rank), n);
  }
  reduced(m_rank).store(sequence, std::memory_order_release);
  // The others' parts, from the next rank's on: first those already published (copied), then the
  // rest, combined here a few lines at a time, looking again between them: a late owner (busy, or
  // descheduled where ranks share cores) may publish meanwhile.
  std::fill(m_parts_left.begin(), m_parts_left.end(), false);
  bool any_left = false;
  for (int step = 1; step < m_size; ++step) {
    const int owner = (m_rank + step) % m_size;
    if (published(owner)) {
      copy_part(owner, 0);
    } else {
      m_parts_left[static_cast<std::size_t>(owner)] = true;
      any_left = true;
    }
  }
  if (!any_left) return;
  const std::size_t chunk = std::max<std::size_t>(1, 4096 / element);
  for (int step = 1; step < m_size; ++step) {
    const int owner = (m_rank + step) % m_size;
    if (!m_parts_left[static_cast<std::size_t>(owner)]) continue;
    const std::size_t first = first_of(owner);
    const std::size_t n = length_of(owner);
    for (std::size_t done = 0; done < n;) {
      if (published(owner)) {
        copy_part(owner, done);
        break;
      }
      const std::size_t now = std::min(chunk, n - done);
      combine_into(out + (first + done) * element, nullptr, first + done, now);
      done += now;
    }
  }
}

int nonblocking_channel::finish(std::uint32_t sequence, const nonblocking_call& call,
                                std::string& problem) {
  if (single_copy(call)) return finish_single_copy(sequence, call, problem);
  int result = MPI_SUCCESS;
  auto checked = [&](int rank) {
    const int code = check(rank, sequence, call, problem);
    if (code != MPI_SUCCESS && result == MPI_SUCCESS) result = code;
    return code == MPI_SUCCESS;
  };
  auto all_checked = [&](int end) {
    bool agreed = true;
    for (int rank = 0; rank < end; ++rank) agreed = checked(rank) && agreed;
    return agreed;
  };
  auto* const out = static_cast<std::byte*>(call.recv);
  const std::size_t mine = static_cast<std::size_t>(m_rank) * call.bytes;
  switch (call.kind) {
    case nonblocking_kind::barrier: (void)all_checked(m_size); break;
    case nonblocking_kind::bcast:
      if (checked(call.root) && call.root != m_rank)
        copy_memory(call.recv, payload(call.root, sequence, call), call.bytes);
      break;
    case nonblocking_kind::scatter:
      // The root's own block too (unless in place: recv is null there).
      if (checked(call.root) && call.recv != nullptr)
        copy_memory(call.recv, payload(m_rank, sequence, call), call.bytes);
      break;
    case nonblocking_kind::reduce:
    case nonblocking_kind::allreduce:
      if (call.kind == nonblocking_kind::reduce && call.root != m_rank) {
        (void)checked(m_rank);
        break;
      }
      if (!all_checked(m_size)) break;
      if (splits_allreduce(call))
        finish_split_allreduce(sequence, call);
      else
        combine(m_size, 0, sequence, call);
      break;
    case nonblocking_kind::reduce_scatter_block:
      if (all_checked(m_size)) combine(m_size, mine, sequence, call);
      break;
    case nonblocking_kind::scan:
      if (all_checked(m_rank + 1)) combine(m_rank + 1, 0, sequence, call);
      break;
    case nonblocking_kind::exscan:
      // Rank 0's result is undefined (MPI): its receive buffer is left alone.
      if (all_checked(m_rank) && m_rank > 0) combine(m_rank, 0, sequence, call);
      break;
    case nonblocking_kind::gather:
      if (call.root != m_rank) {
        (void)checked(m_rank);
        break;
      }
      [[fallthrough]];
    case nonblocking_kind::allgather:
      for (int rank = 0; rank < m_size; ++rank) {
        if (!checked(rank) || (rank == m_rank && copies_own_block_early(call))) continue;
        copy_memory(out + static_cast<std::size_t>(rank) * block_stride(call),
                    payload(rank, sequence, call), call.bytes);
      }
      break;
    case nonblocking_kind::alltoall:
      for (int rank = 0; rank < m_size; ++rank) {
        if (!checked(rank) || (rank == m_rank && copies_own_block_early(call))) continue;
        copy_memory(out + static_cast<std::size_t>(rank) * block_stride(call),
                    payload(rank, sequence, call) + mine, call.bytes);
      }
      break;
  }
  released(m_rank).store(sequence, std::memory_order_release);
  return result;
}

}  // namespace cachecomm::detail
