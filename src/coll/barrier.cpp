#include "coll/barrier.hpp"

#include <memory>
#include <string>

#include "cachecomm/comm.hpp"
#include "cachecomm/error.hpp"
#include "coll/algorithm_registry.hpp"
#include "coll/node_barrier.hpp"
#include "coll/nonblocking_state.hpp"
#include "coll/selection.hpp"
#include "coll/tuning_loader.hpp"
#include "core/comm_impl.hpp"
#include "core/mpi_check.hpp"

namespace cachecomm {

namespace detail {

namespace {

const setting<barrier_algorithm> barrier_setting{
    "CACHECOMM_BARRIER", "auto", algorithm_setting_text("Barrier", barrier_registry()),
    algorithm_choices(barrier_registry())};
const setting<long long> tree_degree_setting{
    "CACHECOMM_TREE_DEGREE",
    4,
    "Fan-out of the k-ary tree barrier and of the tournament's release.",
    {.min = 2, .max = 64}};

class barrier_state final : public control_state {
 public:
  barrier_state(comm_impl& impl, std::byte* area) {
    const node_topology& topology = impl.topology();
    const config& settings = impl.settings();
    const long long degree = tree_degree_setting.read(settings);
    m_barrier = node_barrier(area, topology.node_size, topology.node_rank, static_cast<int>(degree),
                             topology.oversubscribed, &impl.wait());
    // The comm's tuning file is loaded here, once, while the comm is built (every rank of the
    // node is here); the data collectives read it through tuning_of().
    m_tuning = load_node_tuning(impl);
    selection_input input;
    input.node_count = topology.node_count;
    input.node.node_size = topology.node_size;
    input.node.oversubscribed = topology.oversubscribed;
    input.measured = &m_tuning.choices;
    const barrier_algorithm requested = barrier_setting.read(settings);
    m_default = select_barrier(input, requested);
    m_system_reason =
        system_mpi_reason(input, tuned_op::barrier, requested == barrier_algorithm::automatic);
  }

  node_barrier& barrier() { return m_barrier; }
  [[nodiscard]] const selection<barrier_algorithm>& default_choice() const { return m_default; }
  [[nodiscard]] const node_tuning& tuning() const { return m_tuning; }
  [[nodiscard]] std::string_view system_reason() const { return m_system_reason; }

 private:
  node_tuning m_tuning;
  std::string_view m_system_reason;  // non-empty: the automatic barrier is MPI_Barrier
  node_barrier m_barrier;
  selection<barrier_algorithm> m_default{barrier_algorithm::central_line, ""};
};

std::unique_ptr<control_state> create_barrier_state(comm_impl& impl, std::byte* area) {
  return std::make_unique<barrier_state>(impl, area);
}

barrier_state& state_of(comm_impl& impl) {
  return static_cast<barrier_state&>(impl.control());
}

// Registered at load time, before any comm can be built.
[[maybe_unused]] const bool provided = [] {
  provide_control_state({&node_barrier::bytes_needed, &create_barrier_state});
  return true;
}();

}  // namespace

const node_tuning& tuning_of(comm_impl& impl) {
  return state_of(impl).tuning();
}

std::string_view system_barrier_reason(comm_impl& impl) {
  return state_of(impl).system_reason();
}

void node_aware_barrier(comm_impl& impl, barrier_algorithm algorithm) {
  if (impl.nonblocking()) settle_nonblocking(impl);
  barrier_state& state = state_of(impl);
  if (algorithm == barrier_algorithm::automatic) {
    if (!state.system_reason().empty()) {
      // The system MPI's barrier measured faster (one node: the node's decision is the comm's).
      CACHECOMM_MPI(MPI_Barrier(impl.world()));
      return;
    }
    algorithm = state.default_choice().algorithm;
  }
  if (impl.single_node()) {
    state.barrier().full(algorithm);
    return;
  }
  // Hierarchical: gather on the node, leaders synchronize over MPI, release on the node.
  state.barrier().arrive(algorithm);
  if (impl.is_leader()) CACHECOMM_MPI(MPI_Barrier(impl.leaders()));
  state.barrier().depart(algorithm);
}

}  // namespace detail

void comm::barrier() {
  detail::node_aware_barrier(*m_impl, barrier_algorithm::automatic);
}
void comm::barrier(barrier_algorithm algorithm) {
  detail::node_aware_barrier(*m_impl, algorithm);
}
barrier_algorithm comm::default_barrier() const {
  return detail::state_of(*m_impl).default_choice().algorithm;
}
std::string comm::default_barrier_reason() const {
  const std::string_view system = detail::state_of(*m_impl).system_reason();
  if (!system.empty()) return "the system MPI's MPI_Barrier: " + std::string(system);
  return std::string(detail::state_of(*m_impl).default_choice().reason);
}

}  // namespace cachecomm
