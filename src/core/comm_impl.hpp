// Internal state behind cachecomm::comm, shared by every layer built on a communicator.
#pragma once

#include <mpi.h>

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "cachecomm/comm.hpp"
#include "shm/cross_memory.hpp"
#include "shm/segment.hpp"
#include "sync/waiter.hpp"

namespace cachecomm::detail {

class coll_engine;
struct nonblocking_state;

/// Owns an MPI communicator handle; frees it unless MPI is already finalized.
class mpi_comm_owner {
 public:
  mpi_comm_owner() = default;
  explicit mpi_comm_owner(MPI_Comm handle) : m_handle(handle) {}
  ~mpi_comm_owner();
  mpi_comm_owner(const mpi_comm_owner&) = delete;
  mpi_comm_owner& operator=(const mpi_comm_owner&) = delete;
  mpi_comm_owner(mpi_comm_owner&& other) noexcept : m_handle(other.m_handle) {
    other.m_handle = MPI_COMM_NULL;
  }
  mpi_comm_owner& operator=(mpi_comm_owner&& other) noexcept;
  [[nodiscard]] MPI_Comm get() const { return m_handle; }

 private:
  MPI_Comm m_handle = MPI_COMM_NULL;
};

/// Node state that a layer above core keeps in the control segment, after the wait words (the
/// barrier, src/coll/barrier.cpp). Core reserves its bytes and owns it without knowing its type,
/// so nothing in core depends on the layers above it.
class control_state {
 public:
  control_state() = default;
  virtual ~control_state() = default;
  control_state(const control_state&) = delete;
  control_state& operator=(const control_state&) = delete;
  control_state(control_state&&) = delete;
  control_state& operator=(control_state&&) = delete;
};

struct control_state_provider {
  std::size_t (*bytes_needed)(int node_size) = nullptr;
  /// Builds the state over `area` (bytes_needed(node_size) zeroed, cache-line-aligned bytes of
  /// the control segment); throws on bad settings, which fails the comm's construction.
  std::unique_ptr<control_state> (*create)(comm_impl& impl, std::byte* area) = nullptr;
};
/// Called once, at load time, by the layer that provides the control state.
void provide_control_state(control_state_provider provider);

class comm_impl {
 public:
  comm_impl(MPI_Comm parent, const config& settings);

  [[nodiscard]] MPI_Comm world() const { return m_comm.get(); }  ///< the user's communicator (dup)
  [[nodiscard]] MPI_Comm node() const { return m_node_comm.get(); }  ///< ranks of this node
  [[nodiscard]] MPI_Comm leaders() const {
    return m_leader_comm.get();
  }  ///< node rank 0s; null elsewhere
  [[nodiscard]] int rank() const { return m_rank; }
  [[nodiscard]] int size() const { return m_size; }
  [[nodiscard]] const node_topology& topology() const { return m_topology; }
  [[nodiscard]] bool is_leader() const { return m_topology.node_rank == 0; }
  [[nodiscard]] bool single_node() const { return m_topology.node_count == 1; }
  [[nodiscard]] const config& settings() const { return m_settings; }
  [[nodiscard]] const wait_policy& policy() const { return m_policy; }
  [[nodiscard]] waiter& wait() { return m_waiter; }
  /// The process of each node rank, gathered once when the comm is built.
  [[nodiscard]] const std::vector<pid_t>& node_pids() const { return m_node_pids; }
  /// Single copy between this node's ranks (CACHECOMM_SINGLE_COPY), probed on first use: that
  /// first call is collective over the node communicator (the collectives' state and a channel,
  /// each built collectively, are its users).
  [[nodiscard]] const cross_memory& single_copy();
  /// How this node's segments are shared (the control segment's path; every later segment of the
  /// node normally takes the same one).
  [[nodiscard]] segment_sharing control_sharing() const { return m_control.sharing(); }

  /// Completes an MPI request under the same deadline and node-peer liveness checks as every
  /// shared-memory wait (MPI_Wait would block forever on a peer that never makes the matching
  /// call). On timeout the request is cancelled and freed and peer_failure names `peer`.
  void wait_mpi(MPI_Request& request, int peer, const char* what);

  /// The state a layer above core keeps in the control segment (see control_state_provider).
  [[nodiscard]] control_state& control() const { return *m_control_state; }

  /// State of the data collectives (src/coll/coll_engine), built on first use.
  [[nodiscard]] std::shared_ptr<coll_engine>& collectives_state() { return m_collectives; }

  /// State of the nonblocking collectives (src/coll/nonblocking_state.hpp), made by the first
  /// nonblocking call; null until then, which keeps the blocking collectives' check one load.
  [[nodiscard]] std::shared_ptr<nonblocking_state>& nonblocking() { return m_nonblocking; }

 private:
  void split_nodes();
  void resolve_wait_policy();

  mpi_comm_owner m_comm;
  mpi_comm_owner m_node_comm;
  mpi_comm_owner m_leader_comm;
  int m_rank = 0;
  int m_size = 1;
  config m_settings;
  node_topology m_topology;
  std::vector<pid_t> m_node_pids;
  std::optional<cross_memory> m_single_copy;
  wait_policy m_policy;
  shm_segment m_control;
  waiter m_waiter;
  std::unique_ptr<control_state> m_control_state;    // after the waiter it uses
  std::shared_ptr<nonblocking_state> m_nonblocking;  // owns no MPI object: any order
  std::shared_ptr<coll_engine> m_collectives;        // last: released before the waiter it uses
};

}  // namespace cachecomm::detail
