// cachecomm::comm: a communicator that knows which ranks share a node and owns their shared memory.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "cachecomm/barrier.hpp"
#include "cachecomm/config.hpp"
#include "cachecomm/wait_policy.hpp"

namespace cachecomm {

namespace detail {
class comm_impl;
}

/// Where the ranks of a communicator live.
struct node_topology {
  int node_rank = 0;          ///< rank among the ranks of this node
  int node_size = 1;          ///< ranks on this node (of this communicator)
  int node_index = 0;         ///< which node, 0 .. node_count-1
  int node_count = 1;         ///< nodes the communicator spans
  bool forced_split = false;  ///< nodes come from CACHECOMM_RANKS_PER_NODE, not the hardware
  /// Processing units the job's ranks on this machine may run on (the union of their affinity
  /// masks, at most the machine's).
  int cores_available = 1;
  int ranks_sharing_memory =
      1;  ///< ranks of the job on this machine (may exceed node_size when split)
  /// ranks_sharing_memory > cores_available, or their affinity masks leave some rank no
  /// processing unit of its own (two ranks pinned to one core).
  bool oversubscribed = false;
  /// The L2 cache of a core on this machine (the largest its ranks report; 0 when unknown).
  std::size_t l2_cache_bytes = 0;
  std::vector<int> node_ranks;  ///< communicator rank of each node rank (the local ranks)
  std::vector<int>
      core_of_node_rank;  ///< core (hwloc logical index) each node rank last ran on, -1 if unknown
  // The node map, built once per comm (one MPI_Allgather): every layer asks it instead of
  // rebuilding its own.
  std::vector<int> node_of_rank;       ///< node index of each communicator rank
  std::vector<int> node_rank_of_rank;  ///< each communicator rank's rank on its own node

  /// The node `rank` (a communicator rank) lives on.
  [[nodiscard]] int node_id(int rank) const { return node_of_rank[static_cast<std::size_t>(rank)]; }
  /// `rank`'s rank on its own node (whichever node that is).
  [[nodiscard]] int node_rank_of(int rank) const {
    return node_rank_of_rank[static_cast<std::size_t>(rank)];
  }
  /// True when `rank` shares this node (this rank included).
  [[nodiscard]] bool is_local(int rank) const { return node_id(rank) == node_index; }
  /// `rank`'s node rank when it shares this node, -1 otherwise.
  [[nodiscard]] int local_rank(int rank) const { return is_local(rank) ? node_rank_of(rank) : -1; }
};

class comm {
 public:
  /// Collective over `parent` (which is duplicated, so the caller keeps its own). MPI must be
  /// initialized. Settings come from `settings` (by default the CACHECOMM_* environment).
  explicit comm(MPI_Comm parent = MPI_COMM_WORLD,
                const config& settings = config::from_environment());
  ~comm();
  comm(const comm&) = delete;
  comm& operator=(const comm&) = delete;
  comm(comm&&) noexcept;
  comm& operator=(comm&&) noexcept;

  [[nodiscard]] int rank() const;
  [[nodiscard]] int size() const;
  /// The communicator's own duplicate of the parent: safe for the caller's MPI traffic too.
  [[nodiscard]] MPI_Comm mpi_comm() const;
  [[nodiscard]] const node_topology& topology() const;
  [[nodiscard]] const wait_policy& waiting() const;
  [[nodiscard]] const config& settings() const;

  /// Blocks until every rank of the communicator has called it.
  void barrier();
  /// Same, with an explicit algorithm for the node-local part.
  void barrier(barrier_algorithm algorithm);
  /// The algorithm `barrier()` uses and why.
  [[nodiscard]] barrier_algorithm default_barrier() const;
  [[nodiscard]] std::string default_barrier_reason() const;

  /// Internal layers (collectives, windows, channels) reach the node state through this.
  [[nodiscard]] detail::comm_impl& impl() const { return *m_impl; }

 private:
  std::unique_ptr<detail::comm_impl> m_impl;
};

}  // namespace cachecomm
