// The last step of a nonblocking collective on the channel (nonblocking_channel.hpp): checks the
// slots this rank reads against its own call, copies or combines them into the result, and
// releases the slots. Reductions combine in rank order, so every rank gets the bits of the
// rank-ordered fold (scan and exscan: of ranks 0..r and 0..r-1).
#include <cstring>

#include "coll/nonblocking_channel.hpp"
#include "coll/reduce_kernels.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

void nonblocking_channel::combine(int inputs, std::size_t block_offset, std::uint32_t sequence,
                                  const nonblocking_call& call) {
  for (int rank = 0; rank < inputs; ++rank)
    m_inputs[static_cast<std::size_t>(rank)] = payload(rank, sequence, call) + block_offset;
  reduce_ordered(m_inputs.data(), inputs, call.recv, nullptr, call.count, call.type, call.op);
}

int nonblocking_channel::finish(std::uint32_t sequence, const nonblocking_call& call,
                                std::string& problem) {
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
      if (all_checked(m_size)) combine(m_size, 0, sequence, call);
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
        copy_memory(out + static_cast<std::size_t>(rank) * call.bytes,
                    payload(rank, sequence, call), call.bytes);
      }
      break;
    case nonblocking_kind::alltoall:
      for (int rank = 0; rank < m_size; ++rank) {
        if (!checked(rank) || (rank == m_rank && copies_own_block_early(call))) continue;
        copy_memory(out + static_cast<std::size_t>(rank) * call.bytes,
                    payload(rank, sequence, call) + mine, call.bytes);
      }
      break;
  }
  released(m_rank).store(sequence, std::memory_order_release);
  return result;
}

}  // namespace cachecomm::detail
