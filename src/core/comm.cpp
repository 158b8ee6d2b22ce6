#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "cachecomm/comm.hpp"
#include "cachecomm/error.hpp"
#include "core/comm_impl.hpp"
#include "core/machine_sharing.hpp"
#include "core/mpi_check.hpp"
#include "topo/machine.hpp"

namespace cachecomm {

namespace {
const detail::setting<long long> ranks_per_node_setting{
    "CACHECOMM_RANKS_PER_NODE",
    0,
    "Split each machine into pretend nodes of this many ranks (0: one node per machine). "
    "Lets the multi-node paths run on one machine.",
    {.min = 0, .max = std::numeric_limits<int>::max()}};
const detail::setting<wait_mode> wait_setting{
    "CACHECOMM_WAIT",
    "auto",
    "How ranks wait: auto (spin unless oversubscribed, then yield), spin, yield, sleep.",
    {{"auto", wait_mode::automatic},
     {"spin", wait_mode::spin},
     {"yield", wait_mode::yield},
     {"sleep", wait_mode::sleep}}};
const detail::setting<std::optional<long long>> spin_setting{
    "CACHECOMM_SPIN_COUNT",
    "Polls with pause before yielding (auto: by wait mode).",
    {.min = 0, .max = std::numeric_limits<unsigned>::max()}};
const detail::setting<std::optional<long long>> yield_setting{
    "CACHECOMM_YIELD_COUNT",
    "Polls with sched_yield before sleeping on a futex (auto: by wait mode).",
    {.min = 0, .max = std::numeric_limits<unsigned>::max()}};
const detail::setting<double> timeout_setting{
    "CACHECOMM_TIMEOUT",
    "300",
    "Seconds any single wait may last before it fails naming the rank it waited for (0: no "
    "limit).",
    {.min = 0}};
const detail::setting<double> liveness_setting{
    "CACHECOMM_LIVENESS_INTERVAL",
    "0.05",
    "Seconds between checks that node peers are alive while waiting.",
    {.min = 0, .min_exclusive = true}};
}  // namespace

namespace detail {

mpi_comm_owner::~mpi_comm_owner() {
  if (m_handle != MPI_COMM_NULL && !mpi_finalized()) MPI_Comm_free(&m_handle);
}

mpi_comm_owner& mpi_comm_owner::operator=(mpi_comm_owner&& other) noexcept {
  if (this != &other) {
    mpi_comm_owner doomed(m_handle);
    m_handle = other.m_handle;
    other.m_handle = MPI_COMM_NULL;
  }
  return *this;
}

namespace {
control_state_provider& control_provider() {
  static control_state_provider provider;
  return provider;
}
/// A communicator of `parent`'s group, built without MPI_Comm_dup: Open MPI agrees on a dup's
/// context id with a nonblocking allreduce on `parent` itself, which takes the next of `parent`'s
/// nonblocking-collective sequence numbers. A program whose ranks cross a pending MPI_Iallreduce
/// with a blocking collective (legal there: they never match each other) would then see this
/// agreement match the program's own Iallreduce on the ranks that started it before the blocking
/// call the state is built in (mpi4py's fallback Comm.Iagree: a hang). MPI_Comm_create_group
/// agrees by point-to-point messages under its own tag instead.
MPI_Comm private_copy(MPI_Comm parent) {
  constexpr int creation_tag = 0x6363;  // any tag: it never meets point-to-point traffic
  MPI_Group group = MPI_GROUP_NULL;
  CACHECOMM_MPI(MPI_Comm_group(parent, &group));
  MPI_Comm copy = MPI_COMM_NULL;
  const int code = MPI_Comm_create_group(parent, group, creation_tag, &copy);
  MPI_Group_free(&group);
  CACHECOMM_MPI(code);
  return copy;
}

}  // namespace

void provide_control_state(control_state_provider provider) {
  control_provider() = provider;
}

comm_impl::comm_impl(MPI_Comm parent, const config& settings) : m_settings(settings) {
  int initialized = 0;
  CACHECOMM_MPI(MPI_Initialized(&initialized));
  if (initialized == 0)
    throw usage_error("cachecomm: MPI must be initialized before creating a comm");
  if (parent == MPI_COMM_NULL)
    throw invalid_argument("cachecomm: cannot build a comm on MPI_COMM_NULL");
  int inter = 0;
  CACHECOMM_MPI(MPI_Comm_test_inter(parent, &inter));
  if (inter != 0) throw unsupported_error("cachecomm: inter-communicators are not supported");

  m_comm = mpi_comm_owner(private_copy(parent));
  CACHECOMM_MPI(MPI_Comm_rank(world(), &m_rank));
  CACHECOMM_MPI(MPI_Comm_size(world(), &m_size));

  split_nodes();
  resolve_wait_policy();

  // The control segment: wait words, then the control state of the layer above (barrier flags).
  const control_state_provider& provider = control_provider();
  if (provider.bytes_needed == nullptr || provider.create == nullptr) {
    throw usage_error("cachecomm: no control state provider is registered (src/coll/barrier.cpp)");
  }
  const int node_size = m_topology.node_size;
  segment_layout layout;
  const std::size_t wait_offset = layout.reserve(sizeof(node_wait_area));
  const std::size_t control_bytes = provider.bytes_needed(node_size);
  const std::size_t control_offset = layout.reserve(control_bytes);
  m_control = shm_segment(node(), layout.size());

  // The node's pids, gathered once: the liveness checks and single copy both need them.
  m_node_pids.resize(static_cast<std::size_t>(node_size));
  pid_t self = ::getpid();
  static_assert(sizeof(pid_t) == sizeof(int));
  CACHECOMM_MPI(MPI_Allgather(&self, 1, MPI_INT, m_node_pids.data(), 1, MPI_INT, node()));
  m_waiter = waiter(m_policy, m_control.at<node_wait_area>(wait_offset),
                    peer_monitor(m_node_pids, m_topology.node_rank), m_topology.node_rank,
                    m_topology.node_ranks);

  m_control_state = provider.create(*this, m_control.bytes_at(control_offset, control_bytes));
}

const cross_memory& comm_impl::single_copy() {
  if (!m_single_copy) {
    m_single_copy = cross_memory::probe(node(), m_topology.node_rank, m_node_pids,
                                        single_copy_mode_of(m_settings));
  }
  return *m_single_copy;
}

void comm_impl::split_nodes() {
  // Ranks that can share memory, then (optionally) pretend nodes of a fixed size within them.
  MPI_Comm shared = MPI_COMM_NULL;
  CACHECOMM_MPI(MPI_Comm_split_type(world(), MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &shared));
  mpi_comm_owner shared_owner(shared);
  int shared_rank = 0;
  int shared_size = 1;
  CACHECOMM_MPI(MPI_Comm_rank(shared, &shared_rank));
  CACHECOMM_MPI(MPI_Comm_size(shared, &shared_size));

  const long long per_node = ranks_per_node_setting.read(m_settings);
  MPI_Comm node_comm = MPI_COMM_NULL;
  if (per_node > 0) {
    CACHECOMM_MPI(
        MPI_Comm_split(shared, static_cast<int>(shared_rank / per_node), shared_rank, &node_comm));
  } else {
    CACHECOMM_MPI(MPI_Comm_dup(shared, &node_comm));
  }
  m_node_comm = mpi_comm_owner(node_comm);
  m_topology.forced_split = per_node > 0;
  CACHECOMM_MPI(MPI_Comm_rank(node(), &m_topology.node_rank));
  CACHECOMM_MPI(MPI_Comm_size(node(), &m_topology.node_size));

  MPI_Comm leader_comm = MPI_COMM_NULL;
  CACHECOMM_MPI(
      MPI_Comm_split(world(), m_topology.node_rank == 0 ? 0 : MPI_UNDEFINED, m_rank, &leader_comm));
  m_leader_comm = mpi_comm_owner(leader_comm);
  int node_ids[2] = {0,
                     1};  // index of this node, number of nodes: known to leaders, sent to the rest
  if (leader_comm != MPI_COMM_NULL) {
    CACHECOMM_MPI(MPI_Comm_rank(leader_comm, &node_ids[0]));
    CACHECOMM_MPI(MPI_Comm_size(leader_comm, &node_ids[1]));
  }
  CACHECOMM_MPI(MPI_Bcast(node_ids, 2, MPI_INT, 0, node()));
  m_topology.node_index = node_ids[0];
  m_topology.node_count = node_ids[1];

  // The node map: every rank's node and node rank, gathered once; this node's ranks follow.
  const auto node_size = static_cast<std::size_t>(m_topology.node_size);
  const auto size = static_cast<std::size_t>(m_size);
  int mine[2] = {m_topology.node_index, m_topology.node_rank};
  std::vector<int> all(2 * size);
  CACHECOMM_MPI(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, world()));
  m_topology.node_of_rank.resize(size);
  m_topology.node_rank_of_rank.resize(size);
  m_topology.node_ranks.assign(node_size, -1);
  for (std::size_t rank = 0; rank < size; ++rank) {
    m_topology.node_of_rank[rank] = all[2 * rank];
    m_topology.node_rank_of_rank[rank] = all[2 * rank + 1];
    if (all[2 * rank] == m_topology.node_index) {
      m_topology.node_ranks[static_cast<std::size_t>(all[2 * rank + 1])] = static_cast<int>(rank);
    }
  }
  int unit = current_core();
  m_topology.core_of_node_rank.resize(node_size);
  CACHECOMM_MPI(
      MPI_Allgather(&unit, 1, MPI_INT, m_topology.core_of_node_rank.data(), 1, MPI_INT, node()));

  // Oversubscription is a property of the machine, not of the pretend nodes.
  const detail::machine_sharing sharing = detail::share_machine(shared);
  m_topology.cores_available = sharing.units;
  m_topology.ranks_sharing_memory = sharing.ranks;
  m_topology.oversubscribed = sharing.oversubscribed;
  m_topology.l2_cache_bytes = sharing.l2_cache_bytes;
}

void comm_impl::resolve_wait_policy() {
  m_policy.mode = wait_setting.read(m_settings);
  wait_mode effective = m_policy.mode;
  if (effective == wait_mode::automatic)
    effective = m_topology.oversubscribed ? wait_mode::yield : wait_mode::spin;
  switch (effective) {
    case wait_mode::spin:
      m_policy.spin_iterations = 200000;  // ~ a few ms of polling before giving the core away
      m_policy.yield_iterations = 2000;
      break;
    case wait_mode::yield:
      // Oversubscribed: the rank we wait for needs our core, so give it away at once, and keep
      // yielding (cheap when others are runnable) for a while before paying for a futex sleep.
      m_policy.spin_iterations = 0;
      m_policy.yield_iterations = 20000;
      break;
    default:
      m_policy.spin_iterations = 16;
      m_policy.yield_iterations = 2;
      break;
  }
  m_policy.spinning = effective == wait_mode::spin;
  if (const auto spins = spin_setting.read(m_settings)) {
    m_policy.spin_iterations = static_cast<unsigned>(*spins);
  }
  if (const auto yields = yield_setting.read(m_settings)) {
    m_policy.yield_iterations = static_cast<unsigned>(*yields);
  }
  m_policy.timeout_seconds = timeout_setting.read(m_settings);
  m_policy.liveness_interval_seconds = liveness_setting.read(m_settings);
}

void comm_impl::wait_mpi(MPI_Request& request, int peer, const char* what) {
  const double start = monotonic_seconds();
  for (unsigned poll = 0;; ++poll) {
    int done = 0;
    CACHECOMM_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done != 0) return;
    if (poll < m_policy.spin_iterations) continue;
    ::sched_yield();
    if ((poll & 255U) != 255U) continue;
    m_waiter.check_peers(what);
    if (m_policy.timeout_seconds > 0 && monotonic_seconds() - start > m_policy.timeout_seconds) {
      // The message may have matched after the last test: then the wait is over after all, and
      // reporting a timeout would lose a message the caller counts on.
      if (!cancel_request(request)) return;
      throw peer_failure("cachecomm: rank " + std::to_string(m_rank) + " waited more than " +
                             std::to_string(m_policy.timeout_seconds) + " s for rank " +
                             std::to_string(peer) + " in " + what +
                             " (alive but not arriving: mismatched calls? raise CACHECOMM_TIMEOUT)",
                         peer);
    }
  }
}

}  // namespace detail

comm::comm(MPI_Comm parent, const config& settings)
    : m_impl(std::make_unique<detail::comm_impl>(parent, settings)) {}
comm::~comm() = default;
comm::comm(comm&&) noexcept = default;
comm& comm::operator=(comm&&) noexcept = default;

int comm::rank() const {
  return m_impl->rank();
}
int comm::size() const {
  return m_impl->size();
}
MPI_Comm comm::mpi_comm() const {
  return m_impl->world();
}
const node_topology& comm::topology() const {
  return m_impl->topology();
}
const wait_policy& comm::waiting() const {
  return m_impl->policy();
}
const config& comm::settings() const {
  return m_impl->settings();
}

}  // namespace cachecomm
