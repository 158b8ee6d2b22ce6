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

struct kept_state {
  reusable_state state;
  /// Proposed by a thread of this process for a communicator it is building (take_for): no other
  /// communicator may propose it meanwhile, and it is never evicted, so that the proposer finds it
  /// whatever the agreement says. At MPI_THREAD_MULTIPLE several threads build communicators of
  /// one group at once.
  bool reserved = false;
};

struct pool {
  std::mutex lock;
  std::deque<kept_state> kept;  ///< oldest first
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
    p.kept.push_back(kept_state{std::move(state), false});
    // The oldest unreserved ones beyond the bound (a reserved one waits for its proposer).
    for (auto it = p.kept.begin(); p.kept.size() > kept_max && it != p.kept.end();) {
      if (it->reserved) {
        ++it;
        continue;
      }
      evicted.push_back(std::move(it->state));
      it = p.kept.erase(it);
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
      if (!it->reserved && it->state.members == members) {
        mine = it->state.token;
        it->reserved = true;
        break;
      }
    }
  }
  // Tokens are random 64-bit numbers: taken only when the largest and the smallest agree. Where
  // threads of a rank reserved their states in another order than on the other ranks, the
  // tokens differ and every rank builds anew.
  std::array<std::uint64_t, 2> agreed{mine, ~mine};
  const bool agree =
      PMPI_Allreduce(MPI_IN_PLACE, agreed.data(), 2, MPI_UINT64_T, MPI_MAX, comm) == MPI_SUCCESS &&
      mine != 0 && agreed[0] == mine && ~agreed[1] == mine;
  if (mine == 0) return {};
  const std::lock_guard<std::mutex> guard(p.lock);
  const auto found = std::find_if(p.kept.begin(), p.kept.end(), [&](const kept_state& kept) {
    return kept.reserved && kept.state.token == mine;
  });
  if (found == p.kept.end()) return {};  // unreachable: a reserved state stays until released
  if (!agree) {
    found->reserved = false;  // back to the pool, for the next communicator of its group
    return {};
  }
  reusable_state taken = std::move(found->state);
  p.kept.erase(found);
  return taken;
}

void free_kept_states() {
  std::vector<reusable_state> all;
  {
    pool& p = the_pool();
    const std::lock_guard<std::mutex> guard(p.lock);
    for (kept_state& kept : p.kept) all.push_back(std::move(kept.state));
    p.kept.clear();
  }
  free_states(all);
}

}  // namespace cachecomm::detail::preload
