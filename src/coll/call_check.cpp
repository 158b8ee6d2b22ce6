// Every call's description on one line per rank that all paths share, so that ranks whose
// mismatched arguments sent them down different paths (slots of two sizes, slots and the data
// region, single copy, the system MPI) still find each other's call and fail at once instead of
// waiting on flags the others never set.
//
// The hot path only writes the rank's own line (it stays in the writer's cache); other ranks read
// it only from the slow phase of a wait (wait_check), after milliseconds of spinning or dozens of
// yields, and before handing an allgather to the system MPI.
#include <algorithm>
#include <atomic>

#include "coll/coll_engine.hpp"

namespace cachecomm::detail {

namespace {

// The call line: the call number in the flag word (0 while being rewritten: a seqlock), then the
// call info and the byte count.
std::uint32_t& line_info(padded_flag& line) {
  return reinterpret_cast<std::uint32_t*>(&line)[1];
}
std::uint64_t& line_bytes(padded_flag& line) {
  return reinterpret_cast<std::uint64_t*>(&line)[1];
}
std::int32_t& line_root(padded_flag& line) {
  return reinterpret_cast<std::int32_t*>(&line)[4];
}

}  // namespace

void coll_engine::begin_call(call_kind kind, std::size_t bytes, datatype type, std::uint32_t op,
                             int root) {
  ++m_call.number;
  if (m_call.number == 0) m_call.number = 1;  // 0 marks a line being rewritten
  m_call.first_step = m_step + 1;
  m_call.info =
      static_cast<std::uint32_t>(kind) << 16U | static_cast<std::uint32_t>(type) << 8U | op;
  m_call.bytes = bytes;
  m_call.root = root;
  auto& line = m_call_lines[static_cast<std::size_t>(m_rank)];
  line.value.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  std::atomic_ref<std::uint32_t>(line_info(line)).store(m_call.info, std::memory_order_relaxed);
  std::atomic_ref<std::uint64_t>(line_bytes(line)).store(m_call.bytes, std::memory_order_relaxed);
  std::atomic_ref<std::int32_t>(line_root(line)).store(m_call.root, std::memory_order_relaxed);
  line.value.store(m_call.number, std::memory_order_release);
  // After the line: a rank that waits here for a peer in a mismatched call finds it there.
  if (!m_region_ready && may_use_region(kind, bytes)) prepare_region();
}

bool coll_engine::read_call_line(int rank, call_description& seen) const {
  auto& line = m_call_lines[static_cast<std::size_t>(rank)];
  const std::uint32_t before = line.value.load(std::memory_order_acquire);
  if (before == 0) return false;
  seen.info = std::atomic_ref<std::uint32_t>(line_info(line)).load(std::memory_order_relaxed);
  seen.bytes = std::atomic_ref<std::uint64_t>(line_bytes(line)).load(std::memory_order_relaxed);
  seen.root = std::atomic_ref<std::int32_t>(line_root(line)).load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (line.value.load(std::memory_order_relaxed) != before) return false;
  seen.number = before;
  return true;
}

void coll_engine::inspect_peers(int waited_node_rank, wait_check::ready_function ready,
                                void* ready_context) {
  for (int rank = 0; rank < m_size; ++rank) {
    if (rank == m_rank) continue;
    call_description seen;
    if (!read_call_line(rank, seen)) continue;  // being rewritten: looked at next time
    if (seen.number == m_call.number) {
      if (seen.info != m_call.info || seen.bytes != m_call.bytes || seen.root != m_call.root)
        call_mismatch(rank, m_step, seen.info, seen.bytes, seen.root);
      continue;
    }
    // A peer in a later call has set every flag of this call it was going to set (in a matched
    // call each rank sets what the others wait for before it leaves), and the line was written
    // after them: if the wait is still not over, it never will be.
    if (rank == waited_node_rank && sequence_reached(seen.number, m_call.number + 1) &&
        !ready(ready_context)) {
      call_abandoned(rank, seen.number);
    }
  }
}

void coll_engine::agree_on_system_call(tuned_op op, std::size_t bytes, datatype type,
                                       std::uint32_t operation) {
  if (m_size == 1 || op == tuned_op::barrier) return;  // a barrier has nothing to disagree on
  agree_on_call(op, bytes, type, operation);
}

online_selector::trial_views coll_engine::agree_on_trial(tuned_op op, std::size_t bytes,
                                                         datatype type, std::uint32_t operation,
                                                         const online_selector::trial_values& mine,
                                                         std::size_t count, unsigned parity) {
  const std::size_t first = (parity & 1U) * online_selector::max_candidates;
  auto value_of = [&](int rank, std::size_t k) {
    return std::atomic_ref<std::uint64_t>(
        m_trial_values[static_cast<std::size_t>(rank) * m_trial_stride + first + k]);
  };
  // Written before the announcement (a release store), read after seeing it: a rank that moves on
  // overwrites these values only a handshake later, which needs this rank's announcement of it.
  for (std::size_t k = 0; k < count; ++k)
    value_of(m_rank, k).store(mine[k], std::memory_order_relaxed);
  agree_on_call(op, bytes, type, operation);
  online_selector::trial_views views{};
  for (std::size_t k = 0; k < count; ++k) {
    std::uint64_t slowest = 0;
    std::uint64_t sum = 0;
    for (int rank = 0; rank < m_size; ++rank) {
      const std::uint64_t value = value_of(rank, k).load(std::memory_order_relaxed);
      slowest = std::max(slowest, value);
      sum += std::min(value, online_selector::no_time / static_cast<std::uint64_t>(m_size));
    }
    // One rank without a time (no_time) makes the candidate unmeasured for every rank alike.
    views[k] = {slowest, slowest == online_selector::no_time
                             ? online_selector::no_time
                             : sum / static_cast<std::uint64_t>(m_size)};
  }
  return views;
}

void coll_engine::agree_on_call(tuned_op op, std::size_t bytes, datatype type,
                                std::uint32_t operation) {
  // The same description the call's cachecomm path announces (reduce and allreduce share one).
  call_kind kind = call_kind::reduce;  // reduce and allreduce (the barrier never gets here)
  switch (op) {
    case tuned_op::broadcast: kind = call_kind::broadcast; break;
    case tuned_op::allgather: kind = call_kind::allgather; break;
    case tuned_op::gather: kind = call_kind::gather; break;
    case tuned_op::scatter: kind = call_kind::scatter; break;
    case tuned_op::alltoall: kind = call_kind::alltoall; break;
    case tuned_op::allgatherv: kind = call_kind::allgatherv; break;
    case tuned_op::alltoallv: kind = call_kind::alltoallv; break;
    case tuned_op::gatherv: kind = call_kind::gatherv; break;
    case tuned_op::barrier:
    case tuned_op::reduce:
    case tuned_op::allreduce: break;
  }
  begin_call(kind, bytes, type, operation);
  // Wakes a peer asleep here (begin_call alone wakes nobody: only this handshake sleeps on it).
  auto& own = m_call_lines[static_cast<std::size_t>(m_rank)].value;
  m_wait->publish(own, m_call.number);
  for (int rank = 0; rank < m_size; ++rank) {
    if (rank == m_rank) continue;
    auto& word = m_call_lines[static_cast<std::size_t>(rank)].value;
    call_description seen;
    while (true) {
      wait_for(word, m_call.number, rank,
               "a rank's call (before the system MPI's, or online selection's handshake)");
      if (read_call_line(rank, seen)) break;
      cpu_relax();
    }
    // A rank already in a later call agreed on this one in its own handshake, which waited for
    // this rank's announcement (a broadcast root or a reduce contributor may leave MPI's call
    // before this rank enters it). Not caught: a rank whose arguments took cachecomm's path where
    // it need not wait for the others (a slot broadcast's root); this rank then waits in MPI.
    if (seen.number != m_call.number) continue;
    if (seen.info != m_call.info || seen.bytes != m_call.bytes || seen.root != m_call.root)
      call_mismatch(rank, m_step, seen.info, seen.bytes, seen.root);
  }
}

}  // namespace cachecomm::detail
