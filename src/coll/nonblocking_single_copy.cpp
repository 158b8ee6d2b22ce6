// Single copy on the nonblocking channel (nonblocking_channel.hpp, top): large broadcasts,
// scatters, gathers, allgathers and alltoalls publish their buffers' addresses in their slots, and
// each block goes once from its owner's buffer into its reader's, pulled by the reader or pushed by
// the owner, whichever claims it first.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "coll/mpi_library.hpp"
#include "coll/nonblocking_channel.hpp"
#include "core/comm_impl.hpp"
#include "shm/memory_copy.hpp"
#include "sync/waiter.hpp"

namespace cachecomm::detail {

namespace {

/// Which kinds take single copy, from the channel's smallest block (make_nonblocking_channel):
/// broadcasts always, the other moves under CACHECOMM_NONBLOCKING_SINGLE_COPY=all.
bool takes_single_copy(nonblocking_kind kind, bool every_move) {
  switch (kind) {
    case nonblocking_kind::bcast: return true;
    case nonblocking_kind::scatter:
    case nonblocking_kind::gather:
    case nonblocking_kind::allgather:
    case nonblocking_kind::alltoall: return every_move;
    default: return false;  // reductions and barriers never take it
  }
}

/// How long an owner leaves a started reader's block for the reader to pull before it pushes the
/// block itself. A reader that waits pulls within a microsecond or two of the owner's arrival; one
/// computing, or blocked outside cachecomm, is served by the push. Pushing at once, racing the
/// reader, gave ibcast 0.84-0.96 of MPI's time and igather 1.24-1.36 (2 launches); after 30 us,
/// 1.00-1.05 and 1.01-1.04: the copy stays with the reader, as in MPI's own single copy, and the
/// owner's calls stay short.
constexpr std::chrono::microseconds push_grace{30};

/// Who claimed the block from one owner to one reader (a word per reader on the owner's line).
enum claim : std::uint32_t {
  open = 0,  ///< nobody yet
  pulling,   ///< the reader is copying it
  pulled,    ///< the reader has it
  pushing,   ///< the owner is copying it
  pushed,    ///< the reader has it, from the owner
};

/// What a rank publishes on its slot's header line (the inline payload) for a single-copy call.
struct published_buffers {
  std::uint64_t send;    ///< the buffer it owns (0 where it owns none)
  std::uint64_t recv;    ///< where it receives (0 where it reads nothing)
  std::uint64_t stride;  ///< the distance between its buffers' blocks
  std::atomic<std::uint32_t>
      claims[nonblocking_single_copy_max_ranks];  ///< per reader rank, of this rank's blocks
};
static_assert(sizeof(published_buffers) == 48);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

/// Whether `rank`'s buffer is read by its peers in `call`.
bool owns(const nonblocking_call& call, int rank) {
  switch (call.kind) {
    case nonblocking_kind::bcast:
    case nonblocking_kind::scatter: return call.root == rank;
    case nonblocking_kind::gather: return call.root != rank;
    default: return true;  // allgather, alltoall
  }
}

/// Whether `reader` reads `owner`'s block in `call` (owner != reader).
bool reads(const nonblocking_call& call, int owner, int reader) {
  if (call.kind == nonblocking_kind::gather) return reader == call.root;
  return owns(call, owner);
}

}  // namespace

bool nonblocking_channel::single_copy_applies(nonblocking_kind kind, std::size_t bytes) const {
  // Asked several times per operation of every call: a channel without single copy (the default)
  // answers with one load.
  if (!m_cross.can_write()) return false;
  return bytes >= m_single_copy_min_bytes && takes_single_copy(kind, m_single_copy_every_move);
}

bool nonblocking_channel::single_copy(const nonblocking_call& call) const {
  if (!single_copy_applies(call.kind, call.bytes)) return false;
  // In place, an alltoall's blocks to send are its result's: a peer would read what this rank
  // overwrites (MPI has every rank of an alltoall pass MPI_IN_PLACE, or none).
  return call.kind != nonblocking_kind::alltoall || call.send != call.recv;
}

void nonblocking_channel::contribute_single_copy(std::uint32_t sequence,
                                                 const nonblocking_call& call) {
  auto& own = *reinterpret_cast<published_buffers*>(payload(m_rank, sequence, call));
  own.send = owns(call, m_rank) ? reinterpret_cast<std::uintptr_t>(call.send) : 0;
  own.recv = reinterpret_cast<std::uintptr_t>(call.recv);
  own.stride = block_stride(call);
  for (auto& word : own.claims) word.store(claim::open, std::memory_order_relaxed);
  slot_header& header_line = header(m_rank, sequence);
  header_line.info = info_of(call);
  // A block of another size than the call's (an erroneous program): a size no peer's call has, so
  // no peer reads from or writes into this rank's buffers, and this rank moves nothing (finish
  // reports it).
  header_line.bytes = call.own_bytes == call.bytes ? call.bytes : ~std::uint64_t{0};
  header_line.sequence.store(sequence, std::memory_order_release);
  // This rank's own block of the result, from its own buffer (none in place).
  const auto* const send = static_cast<const std::byte*>(call.send);
  auto* const recv = static_cast<std::byte*>(call.recv);
  const std::size_t own_block = static_cast<std::size_t>(m_rank) * block_stride(call);
  const std::byte* from = nullptr;
  std::byte* into = nullptr;
  switch (call.kind) {
    case nonblocking_kind::scatter:
      if (call.root == m_rank) from = send + own_block, into = recv;
      break;
    case nonblocking_kind::gather:
      if (call.root == m_rank) from = send, into = recv + own_block;
      break;
    case nonblocking_kind::allgather: from = send, into = recv + own_block; break;
    case nonblocking_kind::alltoall: from = send + own_block, into = recv + own_block; break;
    default: break;
  }
  if (from != nullptr && recv != nullptr && from != into && call.own_bytes == call.bytes)
    copy_memory(into, from, call.bytes);
}

int nonblocking_channel::move_block(int owner, int reader, std::uint32_t sequence,
                                    const nonblocking_call& call) const {
  const auto& from = *reinterpret_cast<const published_buffers*>(payload(owner, sequence, call));
  const auto& to = *reinterpret_cast<const published_buffers*>(payload(reader, sequence, call));
  // Scatter and alltoall send the reader's block of the owner's buffer; gather, allgather and
  // alltoall receive into the owner's block of the reader's.
  const bool per_reader =
      call.kind == nonblocking_kind::scatter || call.kind == nonblocking_kind::alltoall;
  const bool gathered = call.kind == nonblocking_kind::gather ||
                        call.kind == nonblocking_kind::allgather ||
                        call.kind == nonblocking_kind::alltoall;
  const std::uint64_t source =
      from.send + (per_reader ? static_cast<std::uint64_t>(reader) * from.stride : 0);
  const std::uint64_t destination =
      to.recv + (gathered ? static_cast<std::uint64_t>(owner) * to.stride : 0);
  if (reader == m_rank) {
    return m_cross.copy_from(owner, reinterpret_cast<void*>(destination), source, call.bytes);
  }
  return m_cross.copy_to(reader, reinterpret_cast<const void*>(source), destination, call.bytes);
}

bool nonblocking_channel::pull_block(int owner, std::uint32_t sequence,
                                     const nonblocking_call& call, int& result,
                                     std::string& problem) {
  auto& word = reinterpret_cast<published_buffers*>(payload(owner, sequence, call))
                   ->claims[static_cast<std::size_t>(m_rank)];
  std::uint32_t expected = claim::open;
  if (!word.compare_exchange_strong(expected, claim::pulling, std::memory_order_acq_rel))
    return false;
  const int error_number = move_block(owner, m_rank, sequence, call);
  word.store(claim::pulled, std::memory_order_release);
  if (error_number != 0 && result == MPI_SUCCESS) {
    result = MPI_ERR_OTHER;
    problem = cross_memory_failure("single-copy nonblocking collective", false, owner, error_number)
                  .what();
  }
  return true;
}

int nonblocking_channel::finish_single_copy(std::uint32_t sequence, const nonblocking_call& call,
                                            std::string& problem) {
  int result = MPI_SUCCESS;
  if (call.own_bytes != call.bytes) {
    problem = "this rank's block has " + std::to_string(call.own_bytes) +
              " bytes where the call's blocks have " + std::to_string(call.bytes) +
              ": the ranks made different calls";
    return MPI_ERR_TRUNCATE;
  }
  for (int owner = 0; owner < m_size; ++owner) {
    if (owner == m_rank || !reads(call, owner, m_rank)) continue;
    // A call that differs is reported, never read (its buffer may be shorter).
    if (const int code = check(owner, sequence, call, problem); code != MPI_SUCCESS) {
      if (result == MPI_SUCCESS) result = code;
      continue;
    }
    // Taken already: the owner is pushing it, or has (complete waits for that).
    (void)pull_block(owner, sequence, call, result, problem);
  }
  return result;
}

bool nonblocking_channel::single_copy_moved(std::uint32_t sequence, const nonblocking_call& call,
                                            int& result, std::string& problem) {
  auto claims_of = [&](int owner) -> std::atomic<std::uint32_t>* {
    return reinterpret_cast<published_buffers*>(payload(owner, sequence, call))->claims;
  };
  const auto moved_state = [](std::uint32_t state) {
    return state == claim::pulled || state == claim::pushed;
  };
  if (call.own_bytes != call.bytes) return true;  // nothing moves (contribute_single_copy)
  std::string ignored;                            // finish reported what differs
  bool moved = true;
  for (int peer = 0; peer < m_size; ++peer) {
    if (peer == m_rank) continue;
    // The peer's blocks this rank reads: pulled in finish, or pushed by their owner; open again
    // where the owner's push failed, and then pulled here. A peer whose call differs was reported
    // in finish and is not waited for.
    if (reads(call, peer, m_rank) && check(peer, sequence, call, ignored) == MPI_SUCCESS) {
      const std::uint32_t state =
          claims_of(peer)[static_cast<std::size_t>(m_rank)].load(std::memory_order_acquire);
      if (!moved_state(state) &&
          !(state == claim::open && pull_block(peer, sequence, call, result, problem)))
        moved = false;
    }
    // This rank's block the peer reads: pushed here once the peer has started and left it
    // unclaimed for push_grace.
    if (!reads(call, m_rank, peer)) continue;
    std::atomic<std::uint32_t>& word = claims_of(m_rank)[static_cast<std::size_t>(peer)];
    std::uint32_t state = word.load(std::memory_order_acquire);
    if (state == claim::open && arrived(peer, sequence)) {
      // A peer whose call differs does not read it; a short block of this rank's is never sent.
      if (check(peer, sequence, call, ignored) != MPI_SUCCESS || call.own_bytes != call.bytes)
        continue;
      const auto now = std::chrono::steady_clock::now();
      if (!m_grace_started || m_grace_sequence != sequence) {
        m_grace_sequence = sequence;
        m_grace_started = true;
        m_grace_start = now;
      }
      if (now - m_grace_start >= push_grace &&
          word.compare_exchange_strong(state, claim::pushing, std::memory_order_acq_rel)) {
        // A failed push opens the block again: the reader pulls it, or reports the failure.
        state = move_block(m_rank, peer, sequence, call) == 0 ? claim::pushed : claim::open;
        word.store(state, std::memory_order_release);
      }
    }
    if (!moved_state(state)) moved = false;
  }
  return moved;
}

bool nonblocking_channel::complete(std::uint32_t sequence, const nonblocking_call& call, int& error,
                                   std::string& problem) {
  if (!single_copy(call)) return true;
  if (!single_copy_moved(sequence, call, error, problem)) return false;
  released(m_rank).store(sequence, std::memory_order_release);
  return true;
}

namespace {
enum class single_copy_choice { automatic, off, bcast, all };
const setting<single_copy_choice> nonblocking_single_copy_setting{
    "CACHECOMM_NONBLOCKING_SINGLE_COPY",
    "auto",
    "Nonblocking collectives' channel (C++ API and preload library), 2 ranks on their own cores "
    "with cross-memory attach (CACHECOMM_SINGLE_COPY): auto (the default) moves MPI_Ibcast from "
    "128 KiB by single copy (one copy from the root's buffer into each reader's, pulled or pushed) "
    "under Open MPI, whose own is a single copy, and nothing under other MPIs; bcast does so from "
    "64 KiB under any MPI; all also for iscatter, igather, iallgather and ialltoall from 64 KiB; "
    "off never (every call through the slots: two copies).",
    {{"auto", single_copy_choice::automatic},
     {"off", single_copy_choice::off},
     {"bcast", single_copy_choice::bcast},
     {"all", single_copy_choice::all}}};

/// The smallest block of the forced settings (bcast, all): measured from 64 KiB (at 32 KiB the
/// slots won in every launch: ibcast 1.45-2.74 against single copy's 1.04-1.06).
constexpr std::size_t forced_min_bytes = std::size_t{64} << 10;

/// auto: single copy for broadcasts from this block, under Open MPI only. Measured at 2 ranks on
/// their own cores, the 2-core AMD EPYC (Zen 3) VM, cachecomm-paired-bench (hot buffers, per call,
/// ratio MPI's time / the preload's; docs/results/session34.md, session35.md):
/// - Open MPI 4.1 and 5 move a large ibcast by cross-memory attach; single copy ties them
///   (0.97-1.07 over 12 launches) where the slots' two copies lose in the launches whose vCPUs pass
///   lines slowly: 256 KiB 1.31 by median but 0.66 at worst (4 of 12 below 0.97), 1 MiB 1.12 and
///   0.52 (5 of 12); Open MPI 5's slots 0.80-0.86 at 256 KiB-1 MiB. At 64 KiB the slots lost in 3
///   of 12 (0.78 at worst) but won by median (1.12-1.20 against 1.02-1.07): the rule starts above.
/// - MPICH 5's broadcast is two copies, slower than the slots (2.0-3.2x), which single copy would
///   give up (1.03-1.38); Intel MPI's 1 MiB ibcast is as fast as the slots and twice single copy's.
/// - Cold buffers favour the slots (1 MiB 2.00 against 1.02: MPI's own single copy is slower on
///   cold buffers), so the rule gives up a lead there to stay level hot.
/// - The gathers and alltoalls stay in the slots: 1.5-2.4x MPI's by median, below it in 1 launch
///   of 12 (single copy 1.01-1.08).
constexpr std::size_t open_mpi_bcast_min_bytes = std::size_t{128} << 10;
}  // namespace

std::shared_ptr<nonblocking_channel> make_nonblocking_channel(comm_impl& impl,
                                                              std::size_t slot_bytes,
                                                              std::uint32_t ring,
                                                              const wait_policy& policy) {
  const node_topology& topology = impl.topology();
  const single_copy_choice requested = nonblocking_single_copy_setting.read(impl.settings());
  const bool automatic = requested == single_copy_choice::automatic;
  // Every rank runs on the same MPI library, so every rank takes the same choice.
  const single_copy_choice choice = !automatic ? requested
                                    : running_mpi_family() == mpi_library_family::open_mpi
                                        ? single_copy_choice::bcast
                                        : single_copy_choice::off;
  const std::size_t min_bytes = automatic ? open_mpi_bcast_min_bytes : forced_min_bytes;
  // The probe is collective: every rank reaches this line with the same settings and shape.
  const cross_memory* single_copy =
      choice != single_copy_choice::off &&
              nonblocking_single_copy_wanted(topology.node_size, topology.oversubscribed)
          ? &impl.single_copy()
          : nullptr;
  return std::make_shared<nonblocking_channel>(impl.node(), slot_bytes, ring, policy, single_copy,
                                               choice == single_copy_choice::all, min_bytes);
}

}  // namespace cachecomm::detail
