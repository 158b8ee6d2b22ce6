#include "preload/state_pool.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <mutex>
#include <random>

#include "cachecomm/error.hpp"
#include "core/comm_impl.hpp"
#include "preload/runtime.hpp"

namespace cachecomm::detail::preload {

namespace {

// Enough for a program's few groups (the world, halves, rows and columns); each kept state holds
// its segments (tens of KiB until a large call prepared the data region).
constexpr std::size_t kept_max = 8;

struct pool {
  std::mutex lock;
  std::deque<reusable_state> kept;  ///< oldest first
};

pool& the_pool() {
  static pool instance;
  return instance;
}

// Frees states outside the lock; cachecomm's own MPI calls go to PMPI.
void free_states(std::vector<reusable_state>& states) {
  if (states.empty()) return;
  cachecomm_scope scope;
  states.clear();
}

}  // namespace

std::vector<int> world_members(MPI_Comm comm) {
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Group world = MPI_GROUP_NULL;
  std::vector<int> members;
  int size = 0;
  if (PMPI_Comm_group(comm, &group) == MPI_SUCCESS &&
      PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS &&
      PMPI_Group_size(group, &size) == MPI_SUCCESS) {
    std::vector<int> ranks(static_cast<std::size_t>(size));
    for (int rank = 0; rank < size; ++rank) ranks[static_cast<std::size_t>(rank)] = rank;
    members.resize(ranks.size());
    if (PMPI_Group_translate_ranks(group, size, ranks.data(), world, members.data()) !=
            MPI_SUCCESS ||
        std::find(members.begin(), members.end(), MPI_UNDEFINED) != members.end()) {
      members.clear();
    }
  }
  if (group != MPI_GROUP_NULL) PMPI_Group_free(&group);
  if (world != MPI_GROUP_NULL) PMPI_Group_free(&world);
  return members;
}

std::uint64_t draw_token(const cachecomm::comm& fast) {
  std::uint64_t token = 0;
  if (fast.rank() == 0) {
    std::random_device source;
    while (token == 0) token = (std::uint64_t{source()} << 32U) | source();
  }
  const int code = PMPI_Bcast(&token, 1, MPI_UINT64_T, 0, fast.impl().world());
  if (code != MPI_SUCCESS) throw cachecomm::mpi_error("cachecomm preload: a state's token", code);
  return token;
}

bool keep_for_reuse(reusable_state&& state) {
  if (state.members.empty() || state.token == 0 || !state.fast || state.fast.use_count() != 1 ||
      (state.nonblocking && state.nonblocking.use_count() != 1)) {
    return false;
  }
  std::vector<reusable_state> evicted;
  {
    pool& p = the_pool();
    const std::lock_guard<std::mutex> guard(p.lock);
    p.kept.push_back(std::move(state));
    while (p.kept.size() > kept_max) {
      evicted.push_back(std::move(p.kept.front()));
      p.kept.pop_front();
    }
  }
  free_states(evicted);
  return true;
}

reusable_state take_for(MPI_Comm comm, const std::vector<int>& members) {
  pool& p = the_pool();
  std::uint64_t mine = 0;
  if (!members.empty()) {
    const std::lock_guard<std::mutex> guard(p.lock);
    for (auto it = p.kept.rbegin(); it != p.kept.rend(); ++it) {
      if (it->members == members) {
        mine = it->token;
        break;
      }
    }
  }
  // Tokens are random 64-bit numbers: taken only when the largest and the smallest agree.
  std::array<std::uint64_t, 2> agreed{mine, ~mine};
  if (PMPI_Allreduce(MPI_IN_PLACE, agreed.data(), 2, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS ||
      mine == 0 || agreed[0] != mine || ~agreed[1] != mine) {
    return {};
  }
  const std::lock_guard<std::mutex> guard(p.lock);
  auto found = std::find_if(p.kept.begin(), p.kept.end(),
                            [&](const reusable_state& kept) { return kept.token == mine; });
  // Unreachable: only this thread takes states (none are kept at MPI_THREAD_MULTIPLE).
  if (found == p.kept.end()) return {};
  reusable_state taken = std::move(*found);
  p.kept.erase(found);
  return taken;
}

void free_kept_states() {
  std::vector<reusable_state> all;
  {
    pool& p = the_pool();
    const std::lock_guard<std::mutex> guard(p.lock);
    for (reusable_state& kept : p.kept) all.push_back(std::move(kept));
    p.kept.clear();
  }
  free_states(all);
}

}  // namespace cachecomm::detail::preload
