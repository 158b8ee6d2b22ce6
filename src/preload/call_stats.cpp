#include "preload/call_stats.hpp"

#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "coll/online_selection.hpp"

namespace cachecomm::detail::preload {

std::string_view mpi_name(call_kind kind) {
  switch (kind) {
    case call_kind::barrier: return "MPI_Barrier";
    case call_kind::bcast: return "MPI_Bcast";
    case call_kind::reduce: return "MPI_Reduce";
    case call_kind::allreduce: return "MPI_Allreduce";
    case call_kind::allgather: return "MPI_Allgather";
    case call_kind::gather: return "MPI_Gather";
    case call_kind::scatter: return "MPI_Scatter";
    case call_kind::alltoall: return "MPI_Alltoall";
    case call_kind::scan: return "MPI_Scan";
    case call_kind::exscan: return "MPI_Exscan";
    case call_kind::reduce_scatter_block: return "MPI_Reduce_scatter_block";
    case call_kind::reduce_scatter: return "MPI_Reduce_scatter";
    case call_kind::allgatherv: return "MPI_Allgatherv";
    case call_kind::gatherv: return "MPI_Gatherv";
    case call_kind::scatterv: return "MPI_Scatterv";
    case call_kind::alltoallv: return "MPI_Alltoallv";
    case call_kind::win_allocate: return "MPI_Win_allocate";
    case call_kind::win_fence: return "MPI_Win_fence";
    case call_kind::win_pscw: return "MPI_Win_post/start/complete/wait";
    case call_kind::win_put: return "MPI_Put";
    case call_kind::win_get: return "MPI_Get";
    case call_kind::win_accumulate: return "MPI_Accumulate";
    case call_kind::win_free: return "MPI_Win_free";
    case call_kind::win_get_accumulate: return "MPI_Get_accumulate";
    case call_kind::win_fetch_and_op: return "MPI_Fetch_and_op";
    case call_kind::win_compare_and_swap: return "MPI_Compare_and_swap";
    case call_kind::win_passive: return "MPI_Win_lock/unlock/lock_all/unlock_all";
    case call_kind::comm_dup: return "MPI_Comm_dup";
    case call_kind::comm_split: return "MPI_Comm_split";
    case call_kind::comm_split_type: return "MPI_Comm_split_type";
    case call_kind::comm_create: return "MPI_Comm_create";
    case call_kind::comm_free: return "MPI_Comm_free";
    case call_kind::ibarrier: return "MPI_Ibarrier";
    case call_kind::ibcast: return "MPI_Ibcast";
    case call_kind::ireduce: return "MPI_Ireduce";
    case call_kind::iallreduce: return "MPI_Iallreduce";
    case call_kind::iallgather: return "MPI_Iallgather";
    case call_kind::ialltoall: return "MPI_Ialltoall";
    case call_kind::igather: return "MPI_Igather";
    case call_kind::iscatter: return "MPI_Iscatter";
    case call_kind::ireduce_scatter_block: return "MPI_Ireduce_scatter_block";
    case call_kind::iscan: return "MPI_Iscan";
    case call_kind::iexscan: return "MPI_Iexscan";
    case call_kind::iallgatherv: return "MPI_Iallgatherv";
    case call_kind::ireduce_scatter: return "MPI_Ireduce_scatter";
    case call_kind::count_: break;
  }
  return "?";
}

std::string_view to_string(outcome reason) {
  switch (reason) {
    case outcome::served: return "served";
    case outcome::disabled: return "disabled";
    case outcome::not_initialized: return "not-initialized";
    case outcome::intercommunicator: return "intercommunicator";
    case outcome::warming_up: return "warming-up";
    case outcome::mpi_warming: return "mpi-warming";
    case outcome::derived_datatype: return "derived-datatype";
    case outcome::unmapped_datatype: return "unmapped-datatype";
    case outcome::user_op: return "user-op";
    case outcome::unmapped_op: return "unmapped-op";
    case outcome::unsupported_pair: return "unsupported-type-op";
    case outcome::empty: return "empty";
    case outcome::invalid_argument: return "invalid-argument";
    case outcome::state_failed: return "state-failed";
    case outcome::cachecomm_error: return "cachecomm-error";
    case outcome::communicator_management: return "communicator-management";
    case outcome::mpi_window: return "mpi-window";
    case outcome::outside_epoch: return "outside-epoch";
    case outcome::packed_through_mpi: return "done-by-mpi-under-lock";
    case outcome::multi_node: return "multi-node";
    case outcome::no_mpi_window: return "no-mpi-window";
    case outcome::needs_mpi_progress: return "needs-mpi-progress";
    case outcome::passive_target: return "passive-target";
    case outcome::one_rank: return "one-rank";
    case outcome::mpi_faster: return "mpi-faster";
    case outcome::mpi_trial: return "mpi-trial";
    case outcome::nonblocking_setup: return "nonblocking-setup";
    case outcome::beyond_slot: return "beyond-nonblocking-slot";
    case outcome::count_: break;
  }
  return "?";
}

call_table& call_stats::add_table() {
  const std::lock_guard<std::mutex> lock(m_tables_mutex);
  m_tables.push_back(std::make_unique<call_table>());
  return *m_tables.back();
}

call_table call_stats::total() const {
  call_table sum{};
  const std::lock_guard<std::mutex> lock(m_tables_mutex);
  for (const auto& table : m_tables) {
    for (std::size_t kind = 0; kind < sum.size(); ++kind) {
      for (std::size_t result = 0; result < sum[kind].size(); ++result) {
        sum[kind][result] += __atomic_load_n(&(*table)[kind][result], __ATOMIC_RELAXED);
      }
    }
  }
  return sum;
}

namespace {
const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "unknown";
  }
}
}  // namespace

void print_summary(const call_stats& stats, state_counts states, int thread_level) {
  constexpr std::size_t kinds = static_cast<std::size_t>(call_kind::count_);
  constexpr std::size_t outcomes = static_cast<std::size_t>(outcome::count_);
  std::vector<long long> local;
  local.reserve(kinds * outcomes + 3);
  for (const auto& row : stats.total()) local.insert(local.end(), row.begin(), row.end());
  local.push_back(states.built);
  local.push_back(states.freed);
  local.push_back(states.reused);
  std::vector<long long> total(local.size(), 0);
  int rank = 0;
  int size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  PMPI_Reduce(local.data(), total.data(), static_cast<int>(local.size()), MPI_LONG_LONG, MPI_SUM, 0,
              MPI_COMM_WORLD);
  if (rank != 0) return;

  std::string text =
      "cachecomm preload summary (" + std::to_string(size) + " ranks, calls summed over ranks)\n";
  text += std::string("  thread level ") + thread_level_name(thread_level) +
          ": collectives and windows served\n";
  for (std::size_t kind = 0; kind < kinds; ++kind) {
    const long long* row = &total[kind * outcomes];
    long long passed = 0;
    std::string reasons;
    const long long failed = row[static_cast<std::size_t>(outcome::cachecomm_error)];
    for (std::size_t reason = 1; reason < outcomes; ++reason) {
      if (row[reason] == 0 || reason == static_cast<std::size_t>(outcome::cachecomm_error))
        continue;
      passed += row[reason];
      reasons += (reasons.empty() ? "" : ", ") +
                 std::string(to_string(static_cast<outcome>(reason))) + " " +
                 std::to_string(row[reason]);
    }
    if (row[0] == 0 && passed == 0 && failed == 0) continue;
    char line[128];
    std::snprintf(line, sizeof line, "  %-32s served %8lld  passed %8lld",
                  std::string(mpi_name(static_cast<call_kind>(kind))).c_str(), row[0], passed);
    text += line;
    if (failed != 0) text += "  failed " + std::to_string(failed);
    if (!reasons.empty()) text += "  (" + reasons + ")";
    text += "\n";
  }
  text += "  cachecomm communicator states: built " + std::to_string(total[kinds * outcomes]) +
          ", reused " + std::to_string(total[kinds * outcomes + 2]) + ", freed " +
          std::to_string(total[kinds * outcomes + 1]) + "\n";
  // Rank 0's own communicators (their states were freed above, which logged them): what each
  // (operation, size bucket) ran and why.
  const std::vector<std::string> selections = selection_log();
  if (!selections.empty()) {
    text += "  algorithm per size (world rank 0's communicators):\n";
    for (const std::string& line : selections) text += "    " + line + "\n";
  }
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace cachecomm::detail::preload
