// The MPI transports: "mpi" (pack + MPI_Isend/MPI_Irecv everywhere) and "shm" (fields in a node
// segment that neighbours on the node write into directly, MPI between nodes).
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "cachecomm/comm.hpp"
#include "cachecomm/grid_transport.hpp"
#include "core/comm_impl.hpp"
#include "core/mpi_check.hpp"
#include "grid/heap_memory.hpp"
#include "shm/cache_line.hpp"
#include "shm/segment.hpp"

namespace cachecomm {

namespace {

using detail::mpi_comm_owner;

// MPI counts are int: a larger halo message would be cut modulo 2^32 (or be negative).
int message_count(std::size_t bytes, int peer) {
  return detail::mpi_int_count<invalid_argument>(bytes, [&] {
    return "cachecomm::halo_exchange: a message of " + std::to_string(bytes) +
           " bytes to or from rank " + std::to_string(peer) +
           " exceeds MPI's int count (use more ranks or fewer fields per exchange)";
  });
}

class mpi_message_request final : public message_request {
 public:
  mpi_message_request(detail::comm_impl& impl, int peer, const char* what)
      : m_impl(&impl), m_peer(peer), m_what(what) {}
  ~mpi_message_request() override {
    // Only when an error abandoned it.
    if (m_request != MPI_REQUEST_NULL && !detail::mpi_finalized()) {
      MPI_Cancel(&m_request);
      MPI_Request_free(&m_request);
    }
  }
  bool test() override {
    int done = 0;
    CACHECOMM_MPI(MPI_Test(&m_request, &done, MPI_STATUS_IGNORE));
    return done != 0;
  }
  // Not MPI_Wait: a neighbour that never makes the matching call must end in peer_failure after
  // CACHECOMM_TIMEOUT, as it does on the shared-memory path, not hang (halo_handle's destructor
  // waits).
  void wait() override { m_impl->wait_mpi(m_request, m_peer, m_what); }
  MPI_Request m_request = MPI_REQUEST_NULL;

 private:
  detail::comm_impl* m_impl;
  int m_peer;
  const char* m_what;
};

// Segment: [2 flags x slots, one line each, per node rank][each node rank's fields, page aligned].
class shm_field_memory final : public field_memory {
 public:
  shm_field_memory(detail::comm_impl& impl, std::size_t bytes) : m_impl(&impl) {
    MPI_Comm node = impl.node();
    const auto& topology = impl.topology();
    m_node_size = topology.node_size;
    m_node_rank = topology.node_rank;
    std::vector<unsigned long long> sizes(static_cast<std::size_t>(m_node_size));
    unsigned long long mine = bytes;
    CACHECOMM_MPI(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, sizes.data(), 1,
                                MPI_UNSIGNED_LONG_LONG, node));
    detail::segment_layout layout;
    const std::size_t flags_offset = layout.reserve_slots(
        flag_count * static_cast<std::size_t>(m_node_size), sizeof(detail::padded_flag));
    std::vector<std::size_t> offsets;
    offsets.reserve(sizes.size());
    for (auto size : sizes) offsets.push_back(layout.reserve(size, 4096));
    m_segment = detail::shm_segment(node, layout.size());
    m_flags = detail::slot_array<detail::padded_flag>(
        m_segment.bytes_at(flags_offset, 1), flag_count * static_cast<std::size_t>(m_node_size));
    for (int node_rank = 0; node_rank < m_node_size; ++node_rank) {
      m_bases.push_back(static_cast<std::byte*>(m_segment.data()) +
                        offsets[static_cast<std::size_t>(node_rank)]);
    }
  }
  std::byte* local() override { return m_bases[static_cast<std::size_t>(m_node_rank)]; }
  std::byte* peer(int rank) override {
    int node_rank = m_impl->topology().local_rank(rank);
    return node_rank < 0 ? nullptr : m_bases[static_cast<std::size_t>(node_rank)];
  }
  void publish(int which, std::uint32_t value) override {
    m_impl->wait().publish(flag(m_node_rank, which), value);
  }
  void wait_peer(int rank, int which, std::uint32_t value, const char* what) override {
    int node_rank = m_impl->topology().local_rank(rank);
    m_impl->wait().wait_reach(flag(node_rank, which), value, node_rank, what);
  }
  bool peer_reached(int rank, int which, std::uint32_t value) override {
    int node_rank = m_impl->topology().local_rank(rank);
    return detail::sequence_reached(flag(node_rank, which).load(std::memory_order_acquire), value);
  }

 private:
  static constexpr std::size_t flag_count = 16;  // 8 exchanges per grid x (consumed, sent)
  std::atomic<std::uint32_t>& flag(int node_rank, int which) {
    if (which < 0 || static_cast<std::size_t>(which) >= flag_count) {
      throw usage_error(
          "cachecomm::halo_exchange: at most 8 exchanges per grid on the shm transport");
    }
    return m_flags[static_cast<std::size_t>(node_rank) * flag_count +
                   static_cast<std::size_t>(which)]
        .value;
  }
  detail::comm_impl* m_impl;
  int m_node_size = 1;
  int m_node_rank = 0;
  detail::shm_segment m_segment;
  detail::slot_array<detail::padded_flag> m_flags;
  std::vector<std::byte*> m_bases;
};

class mpi_grid_transport final : public grid_transport {
 public:
  mpi_grid_transport(comm& communicator, bool shared_memory)
      : m_impl(&communicator.impl()), m_shared_memory(shared_memory) {
    MPI_Comm dup = MPI_COMM_NULL;
    CACHECOMM_MPI(MPI_Comm_dup(communicator.mpi_comm(), &dup));
    m_comm = mpi_comm_owner(dup);
  }
  int rank() const override { return m_impl->rank(); }
  int size() const override { return m_impl->size(); }
  std::string name() const override { return m_shared_memory ? "shm" : "mpi"; }
  std::unique_ptr<field_memory> allocate(std::size_t bytes) override {
    if (m_shared_memory) return std::make_unique<shm_field_memory>(*m_impl, bytes);
    return std::make_unique<detail::heap_field_memory>(bytes);
  }
  std::unique_ptr<message_request> send(int peer, int tag, const void* data,
                                        std::size_t bytes) override {
    auto request = std::make_unique<mpi_message_request>(
        *m_impl, peer, "a halo exchange (sending to a neighbour)");
    CACHECOMM_MPI(MPI_Isend(data, message_count(bytes, peer), MPI_BYTE, peer, tag, m_comm.get(),
                            &request->m_request));
    return request;
  }
  std::unique_ptr<message_request> receive(int peer, int tag, void* data,
                                           std::size_t bytes) override {
    auto request = std::make_unique<mpi_message_request>(
        *m_impl, peer, "a halo exchange (receiving from a neighbour)");
    CACHECOMM_MPI(MPI_Irecv(data, message_count(bytes, peer), MPI_BYTE, peer, tag, m_comm.get(),
                            &request->m_request));
    return request;
  }
  void barrier() override { CACHECOMM_MPI(MPI_Barrier(m_comm.get())); }
  std::vector<double> allgather(const std::vector<double>& mine) override {
    std::vector<double> all(mine.size() * static_cast<std::size_t>(size()));
    CACHECOMM_MPI(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                                static_cast<int>(mine.size()), MPI_DOUBLE, m_comm.get()));
    return all;
  }

 private:
  detail::comm_impl* m_impl;
  bool m_shared_memory;
  mpi_comm_owner m_comm;
};

}  // namespace

std::unique_ptr<grid_transport> make_shm_transport(comm& communicator) {
  return std::make_unique<mpi_grid_transport>(communicator, true);
}

std::unique_ptr<grid_transport> make_mpi_transport(comm& communicator) {
  return std::make_unique<mpi_grid_transport>(communicator, false);
}

}  // namespace cachecomm
