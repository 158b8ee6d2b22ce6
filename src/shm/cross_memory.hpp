// Single copy between the processes of one node: the only place that probes and uses cross-memory
// attach (process_vm_readv / process_vm_writev). One probe per comm, shared by the collectives and
// the point-to-point channel; one setting (CACHECOMM_SINGLE_COPY); one copy loop with one error
// behaviour. The mechanism sits behind feature bits and copy_from / copy_to, so another one
// (xpmem, knem) would be a second implementation of the same calls.
#pragma once

#include <mpi.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cachecomm/config.hpp"
#include "cachecomm/error.hpp"

namespace cachecomm::detail {

/// CACHECOMM_SINGLE_COPY: auto (use it where the probe succeeds), on (fail where it does not),
/// off (never probe, never use it).
enum class single_copy_mode { automatic = 1, on, off };

/// What the probe found; every rank of the node holds the same bits.
enum cross_memory_feature : unsigned {
  cross_memory_read = 1U << 0,   ///< a rank may read from a node peer's memory
  cross_memory_write = 1U << 1,  ///< a rank may also write into a node peer's memory
};

/// The mode CACHECOMM_SINGLE_COPY (or its deprecated alias CACHECOMM_P2P_SINGLE_COPY) asks for.
[[nodiscard]] single_copy_mode single_copy_mode_of(const config& settings);

class cross_memory {
 public:
  /// Nothing available (a node of one rank, or single copy off).
  cross_memory() = default;

  /// Collective over `node`: unless `mode` is off, each rank reads a known word from its
  /// neighbour and writes it back, and the node agrees on what worked everywhere (ptrace policy,
  /// seccomp and containers can each refuse it). `pids[i]` is node rank i's process. `mode` on:
  /// throws unsupported_error on every rank when reading is refused anywhere.
  [[nodiscard]] static cross_memory probe(MPI_Comm node, int node_rank, std::vector<pid_t> pids,
                                          single_copy_mode mode);

  [[nodiscard]] unsigned features() const { return m_features; }
  [[nodiscard]] bool can_read() const { return (m_features & cross_memory_read) != 0; }
  [[nodiscard]] bool can_write() const { return (m_features & cross_memory_write) != 0; }

  /// Copies `bytes` at `remote_address` in node rank `peer`'s memory into `local`. Interrupted and
  /// partial copies are continued. Returns 0, or the errno of the failure (EFAULT when the kernel
  /// copied nothing), so that a collective can finish its step before reporting it.
  [[nodiscard]] int copy_from(int peer, void* local, std::uint64_t remote_address,
                              std::size_t bytes) const noexcept;
  /// The same, from `local` into node rank `peer`'s memory.
  [[nodiscard]] int copy_to(int peer, const void* local, std::uint64_t remote_address,
                            std::size_t bytes) const noexcept;

 private:
  int copy(int peer, void* local, std::uint64_t remote_address, std::size_t bytes,
           bool to_peer) const noexcept;

  std::vector<pid_t> m_pids;
  unsigned m_features = 0;
};

/// The one error a failed copy becomes, wherever it happened: "cachecomm: <what>:
/// process_vm_readv from node rank <peer> failed: <reason>" (process_vm_writev to, for a write).
[[nodiscard]] system_error cross_memory_failure(std::string_view what, bool to_peer, int peer,
                                                int error_number);

}  // namespace cachecomm::detail
