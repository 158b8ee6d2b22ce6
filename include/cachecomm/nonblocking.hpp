// Nonblocking collectives: ibarrier, ibcast, ireduce, iallreduce, iallgather, igather, iscatter,
// ialltoall, ireduce_scatter_block, iscan, iexscan. Each starts the
// collective and returns a request; the result is in place once the request is complete (test,
// wait, wait_all, test_all, wait_any). Every rank of the communicator starts the same nonblocking
// collectives in the same order, interleaved with its blocking collectives in the same order (as
// in MPI), and leaves the buffers alone until the request is complete.
//
// Data path, chosen per call from what every rank agrees on (the comm, the call, its bytes):
// - shared_memory: single-node comms, messages up to the channel's slot
//   (CACHECOMM_NONBLOCKING_BYTES: 256 KiB up to 8 ranks on the node, halved as ranks double, at
//   least 64 KiB). What must fit is what one rank
//   puts in: a block (allgather, gather, scatter), the whole input (ibcast, reductions, scans), or
//   a block per rank (ialltoall, ireduce_scatter_block: size x block). The data goes into the
//   comm's nonblocking channel when the call starts and the peers read it themselves, so a rank
//   that computes between start and wait never holds its peers up; the result is read at this
//   rank's next test or wait (or any other request's, or a blocking collective's: every progress
//   pass advances every comm's requests). The channel is built collectively by
//   prepare_nonblocking() or by the comm's first blocking collective after a nonblocking call;
//   calls before that take the MPI path.
// - system_mpi: everything else (multi-node comms, larger messages): MPI's own MPI_Ibarrier,
//   MPI_Ibcast, ... on comm.mpi_comm(), which progress as the MPI library does.
// explain_nonblocking() and request::path()/reason() say which path a call takes and why.
//
// A blocking collective on the comm first finishes the comm's pending shared-memory requests
// (a peer may wait for this rank's contribution before entering it).
//
// Progress needs this rank's calls only for a call started while every slot of the comm's ring was
// still in use (its data goes in at the next test, wait, start or cachecomm wait of the process).
// A rank that keeps more calls outstanding than the ring holds and then blocks in MPI itself (an
// MPI_Recv from a peer that waits for those calls) holds that peer: make a test or wait first.
// The preload library drives them from MPI's blocking point-to-point calls too.
//
// Destruction: the destructor of a request that is still active (not yet reported complete by
// test/wait) waits for it, so the buffers it writes are never written after it is gone and the
// peers never wait for a contribution that never comes. If that wait fails (a peer died, or
// CACHECOMM_TIMEOUT elapsed) the error is printed and the job is aborted (MPI_Abort): the
// operation can neither finish nor be abandoned safely while the caller's buffers are in use.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"
#include "cachecomm/datatype.hpp"

namespace cachecomm {

namespace detail {
struct request_state;
}

/// How a nonblocking collective moves its data.
enum class nonblocking_path {
  none,           ///< an empty request (default-constructed or moved from)
  local,          ///< nothing to move (count 0): complete when started
  shared_memory,  ///< the comm's nonblocking channel (node-local shared memory)
  system_mpi,     ///< the system MPI's nonblocking collective on comm.mpi_comm()
};
[[nodiscard]] std::string_view to_string(nonblocking_path path);

enum class nonblocking_collective {
  barrier,
  broadcast,
  reduce,
  allreduce,
  allgather,
  gather,
  scatter,
  alltoall,
  reduce_scatter_block,
  scan,
  exscan,
};

struct nonblocking_choice {
  nonblocking_path path = nonblocking_path::none;
  std::string reason;
};
/// The path a nonblocking collective of `bytes` takes on `c` now, and why: `bytes` is what one rank
/// puts in (allgather, gather, scatter: one block; alltoall, reduce_scatter_block: size blocks;
/// the others: the whole message). Local: builds nothing.
[[nodiscard]] nonblocking_choice explain_nonblocking(comm& c, nonblocking_collective collective,
                                                     std::size_t bytes);

/// Collective over `c`: builds its nonblocking channel now (otherwise the first blocking
/// collective after a nonblocking call does), and finishes the comm's pending requests.
void prepare_nonblocking(comm& c);

/// One started nonblocking collective (the point-to-point channel has its own `request`).
/// Move-only; see the file comment for the destructor.
class collective_request {
 public:
  collective_request() noexcept;
  explicit collective_request(std::unique_ptr<detail::request_state> state) noexcept;  ///< internal
  ~collective_request();
  collective_request(const collective_request&) = delete;
  collective_request& operator=(const collective_request&) = delete;
  collective_request(collective_request&& other) noexcept;
  /// Completes this request first (as the destructor does), then takes `other`'s.
  collective_request& operator=(collective_request&& other) noexcept;

  /// Advances every pending request of the process once; true when this one is complete (also for
  /// an empty or already completed request). Throws the collective's error (usage_error when the
  /// ranks' calls differed, mpi_error from MPI) the first time it reports completion.
  bool test();
  /// Waits until complete (advancing every pending request meanwhile); throws as test() does, and
  /// peer_failure when CACHECOMM_TIMEOUT elapses.
  void wait();
  /// Started and not yet reported complete by test/wait.
  [[nodiscard]] bool active() const noexcept;
  [[nodiscard]] nonblocking_path path() const noexcept;
  /// Why the call took its path (empty for an empty request).
  [[nodiscard]] std::string_view reason() const noexcept;
  [[nodiscard]] const detail::request_state* state() const noexcept {
    return m_state.get();
  }  ///< internal

 private:
  void complete_before_release() noexcept;
  std::unique_ptr<detail::request_state> m_state;
};

/// Waits until every request is complete, in whatever order they finish. When some fail, all are
/// still completed and the first error (in array order) is thrown.
void wait_all(std::span<collective_request> requests);
/// One progress pass; true when every request is complete. Errors as wait_all.
bool test_all(std::span<collective_request> requests);
/// Waits until one active request is complete and returns its index (it is then inactive);
/// returns requests.size() when none is active. Throws that request's error.
std::size_t wait_any(std::span<collective_request> requests);

/// As the blocking calls of collectives.hpp; `in_place` where they allow it (iallreduce; ireduce at
/// the root; iallgather with this rank's block already at receive + rank * block).
[[nodiscard]] collective_request ibarrier(comm& c);
[[nodiscard]] collective_request ibcast(comm& c, void* buffer, std::size_t count, datatype type,
                                        int root);
/// `receive` matters only at `root`. reduce_op::replace is refused.
[[nodiscard]] collective_request ireduce(comm& c, const void* send, void* receive,
                                         std::size_t count, datatype type, reduce_op op, int root);
/// Every rank gets the same bits (shared-memory path: combined in rank order).
[[nodiscard]] collective_request iallreduce(comm& c, const void* send, void* receive,
                                            std::size_t count, datatype type, reduce_op op);
[[nodiscard]] collective_request iallgather(comm& c, const void* send, void* receive,
                                            std::size_t count_per_rank, datatype type);
/// As gather (gather_scatter.hpp): `send` may be in_place at the root; `receive` matters only
/// there.
[[nodiscard]] collective_request igather(comm& c, const void* send, void* receive,
                                         std::size_t count_per_rank, datatype type, int root);
/// As scatter: `receive` may be in_place_receive at the root; `send` matters only there.
[[nodiscard]] collective_request iscatter(comm& c, const void* send, void* receive,
                                          std::size_t count_per_rank, datatype type, int root);
/// As alltoall: `send` may be in_place (the blocks to send are in `receive`).
[[nodiscard]] collective_request ialltoall(comm& c, const void* send, void* receive,
                                           std::size_t count_per_rank, datatype type);
/// As reduce_scatter_block (shared-memory path: block r combined in rank order on rank r); `send`
/// may be in_place.
[[nodiscard]] collective_request ireduce_scatter_block(comm& c, const void* send, void* receive,
                                                       std::size_t count_per_rank, datatype type,
                                                       reduce_op op);
/// As scan and exscan (scan.hpp): the same bits as the blocking calls (rank-ordered fold); iexscan
/// leaves rank 0's `receive` alone (MPI: undefined). `send` may be in_place.
[[nodiscard]] collective_request iscan(comm& c, const void* send, void* receive, std::size_t count,
                                       datatype type, reduce_op op);
[[nodiscard]] collective_request iexscan(comm& c, const void* send, void* receive,
                                         std::size_t count, datatype type, reduce_op op);

// Typed conveniences.
template <typename T>
[[nodiscard]] collective_request ibcast(comm& c, std::span<T> buffer, int root) {
  return ibcast(c, buffer.data(), buffer.size(), datatype_of<T>(), root);
}
template <typename T>
[[nodiscard]] collective_request iallreduce(comm& c, std::span<const T> send, std::span<T> receive,
                                            reduce_op op) {
  if (receive.size() != send.size()) throw_size_mismatch("iallreduce", send.size(), receive.size());
  return iallreduce(c, send.data(), receive.data(), send.size(), datatype_of<T>(), op);
}
/// In place: `buffer` is both input and output.
template <typename T>
[[nodiscard]] collective_request iallreduce(comm& c, std::span<T> buffer, reduce_op op) {
  return iallreduce(c, in_place, buffer.data(), buffer.size(), datatype_of<T>(), op);
}
template <typename T>
[[nodiscard]] collective_request iallgather(comm& c, std::span<const T> send,
                                            std::span<T> receive) {
  if (receive.size() != send.size() * static_cast<std::size_t>(c.size())) {
    throw_size_mismatch("iallgather", send.size() * static_cast<std::size_t>(c.size()),
                        receive.size());
  }
  return iallgather(c, send.data(), receive.data(), send.size(), datatype_of<T>());
}

}  // namespace cachecomm
