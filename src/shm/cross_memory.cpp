#include "shm/cross_memory.hpp"

#include <sys/uio.h>

#include <cerrno>
#include <utility>

#include "core/mpi_check.hpp"

namespace cachecomm::detail {

namespace {

using mode_choices = std::vector<setting<single_copy_mode>::choice>;
// 1 and 0 are the spellings CACHECOMM_SINGLE_COPY had when it was a switch of the collectives.
mode_choices single_copy_choices() {
  return {{"auto", single_copy_mode::automatic},
          {"on", single_copy_mode::on},
          {"off", single_copy_mode::off},
          {"1", single_copy_mode::automatic},
          {"0", single_copy_mode::off}};
}

const setting<single_copy_mode> single_copy_setting{
    "CACHECOMM_SINGLE_COPY", "auto",
    "Single copy between the ranks of a node through cross-memory attach "
    "(process_vm_readv/writev), "
    "for large broadcasts, allgathers and channel messages: auto (where a probe at start shows the "
    "kernel allows it), on (fail if it does not), off. 1 and 0 mean auto and off.",
    single_copy_choices()};
const setting<single_copy_mode> p2p_alias_setting{
    "CACHECOMM_P2P_SINGLE_COPY", "auto",
    "Deprecated alias of CACHECOMM_SINGLE_COPY (read only when that is not set).",
    single_copy_choices()};

// The probe's word: recognisable, and different on every node rank.
constexpr std::uint64_t probe_marker = 0x5ca1ab1e00000000ULL;

}  // namespace

single_copy_mode single_copy_mode_of(const config& settings) {
  if (!settings.is_explicit(single_copy_setting.name()) &&
      settings.is_explicit(p2p_alias_setting.name())) {
    return p2p_alias_setting.read(settings);
  }
  return single_copy_setting.read(settings);
}

cross_memory cross_memory::probe(MPI_Comm node, int node_rank, std::vector<pid_t> pids,
                                 single_copy_mode mode) {
  cross_memory result;
  const auto node_size = static_cast<int>(pids.size());
  result.m_pids = std::move(pids);
  if (mode == single_copy_mode::off || node_size < 2) return result;

  volatile std::uint64_t marker = probe_marker + static_cast<std::uint64_t>(node_rank);
  auto mine = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&marker));
  std::vector<std::uint64_t> addresses(static_cast<std::size_t>(node_size));
  CACHECOMM_MPI(MPI_Allgather(&mine, 1, MPI_UINT64_T, addresses.data(), 1, MPI_UINT64_T, node));
  const int neighbour = (node_rank + 1) % node_size;
  const std::uint64_t address = addresses[static_cast<std::size_t>(neighbour)];
  std::uint64_t seen = 0;
  const bool reads = result.copy_from(neighbour, &seen, address, sizeof seen) == 0 &&
                     seen == probe_marker + static_cast<std::uint64_t>(neighbour);
  // Writing the word back unchanged tests the other direction without disturbing anything.
  const bool writes = reads && result.copy_to(neighbour, &seen, address, sizeof seen) == 0;
  int outcomes[2] = {reads ? 1 : 0, writes ? 1 : 0};
  int everywhere[2] = {0, 0};
  // Also keeps `marker` alive until every neighbour has read and written it.
  CACHECOMM_MPI(MPI_Allreduce(outcomes, everywhere, 2, MPI_INT, MPI_MIN, node));
  (void)marker;
  if (everywhere[0] == 1) result.m_features |= cross_memory_read;
  if (everywhere[0] == 1 && everywhere[1] == 1) result.m_features |= cross_memory_write;
  if (mode == single_copy_mode::on && !result.can_read()) {
    throw unsupported_error(
        "cachecomm: CACHECOMM_SINGLE_COPY=on but process_vm_readv between the ranks of this node "
        "is not permitted (ptrace restrictions: Yama's ptrace_scope, seccomp, a container)");
  }
  return result;
}

int cross_memory::copy_from(int peer, void* local, std::uint64_t remote_address,
                            std::size_t bytes) const noexcept {
  return copy(peer, local, remote_address, bytes, false);
}

int cross_memory::copy_to(int peer, const void* local, std::uint64_t remote_address,
                          std::size_t bytes) const noexcept {
  return copy(peer, const_cast<void*>(local), remote_address, bytes, true);
}

int cross_memory::copy(int peer, void* local, std::uint64_t remote_address, std::size_t bytes,
                       bool to_peer) const noexcept {
  if (peer < 0 || static_cast<std::size_t>(peer) >= m_pids.size()) return ESRCH;
  const pid_t pid = m_pids[static_cast<std::size_t>(peer)];
  auto* base = static_cast<std::byte*>(local);
  std::size_t copied = 0;
  while (copied < bytes) {
    iovec mine{base + copied, bytes - copied};
    iovec theirs{reinterpret_cast<void*>(static_cast<std::uintptr_t>(remote_address + copied)),
                 bytes - copied};
    const ssize_t moved = to_peer ? ::process_vm_writev(pid, &mine, 1, &theirs, 1, 0)
                                  : ::process_vm_readv(pid, &mine, 1, &theirs, 1, 0);
    if (moved < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    // A partial copy goes on from where it stopped; nothing copied means the range is unmapped.
    if (moved == 0) return EFAULT;
    copied += static_cast<std::size_t>(moved);
  }
  return 0;
}

system_error cross_memory_failure(std::string_view what, bool to_peer, int peer, int error_number) {
  return system_error("cachecomm: " + std::string(what) + ": " +
                          (to_peer ? "process_vm_writev to" : "process_vm_readv from") +
                          " node rank " + std::to_string(peer) + " failed",
                      error_number);
}

}  // namespace cachecomm::detail
