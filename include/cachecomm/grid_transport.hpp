// How the ranks of a Cartesian grid reach each other: shared memory within a node, MPI between
// nodes, or an in-process model (every rank a thread) for debugging. The grid and the halo
// exchange only talk to this interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cachecomm {

class comm;

/// Memory holding one rank's fields, allocated collectively. Peers reachable through shared
/// memory can be written directly; the flags order those writes (sequence numbers per exchange).
class field_memory {
 public:
  virtual ~field_memory() = default;
  [[nodiscard]] virtual std::byte* local() = 0;
  /// Base of `rank`'s memory if this rank can write into it directly, otherwise null.
  [[nodiscard]] virtual std::byte* peer(int rank) {
    (void)rank;
    return nullptr;
  }
  /// Flag `which` (0: ghosts consumed, 1: halos sent) of this rank becomes `value`.
  virtual void publish(int which, std::uint32_t value) {
    (void)which;
    (void)value;
  }
  /// Waits until flag `which` of direct peer `rank` reaches `value`; `what` names the wait.
  virtual void wait_peer(int rank, int which, std::uint32_t value, const char* what) {
    (void)rank;
    (void)which;
    (void)value;
    (void)what;
  }
  [[nodiscard]] virtual bool peer_reached(int rank, int which, std::uint32_t value) {
    (void)rank;
    (void)which;
    (void)value;
    return true;
  }
};

/// A point-to-point request in flight (MPI_Request, or a model mailbox slot).
class message_request {
 public:
  virtual ~message_request() = default;
  [[nodiscard]] virtual bool test() = 0;
  virtual void wait() = 0;
};

class grid_transport {
 public:
  virtual ~grid_transport() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  [[nodiscard]] virtual std::string name() const = 0;
  /// Collective: memory for this rank's fields (`bytes` may differ between ranks).
  [[nodiscard]] virtual std::unique_ptr<field_memory> allocate(std::size_t bytes) = 0;
  /// Buffers must stay valid until the request completes. `tag` is below 2^15.
  [[nodiscard]] virtual std::unique_ptr<message_request> send(int peer, int tag, const void* data,
                                                              std::size_t bytes) = 0;
  [[nodiscard]] virtual std::unique_ptr<message_request> receive(int peer, int tag, void* data,
                                                                 std::size_t bytes) = 0;
  virtual void barrier() = 0;
  /// Every rank's `mine` (all the same length), concatenated in rank order.
  [[nodiscard]] virtual std::vector<double> allgather(const std::vector<double>& mine) = 0;
  /// Collective: a fresh number per halo exchange built on this transport (keeps tags apart).
  [[nodiscard]] int next_exchange_id() { return m_exchanges++; }

 private:
  int m_exchanges = 0;
};

/// Shared memory between the ranks of a node (neighbours write straight into each other's ghost
/// cells), packing and MPI between nodes. Collective over `communicator`.
[[nodiscard]] std::unique_ptr<grid_transport> make_shm_transport(comm& communicator);
/// Packing and MPI_Isend/MPI_Irecv for every neighbour, as a plain MPI code would.
[[nodiscard]] std::unique_ptr<grid_transport> make_mpi_transport(comm& communicator);

/// The model message-passing system (seed 6.1): runs `body` on `ranks` threads of this process,
/// each with its own transport to an in-process coordinator and its own private grids. If a rank
/// throws, the others stop at their next wait and the first error is rethrown here.
void run_model_ranks(int ranks, const std::function<void(grid_transport&)>& body);

}  // namespace cachecomm
