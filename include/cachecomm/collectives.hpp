// Data-moving collectives over shared memory: broadcast, reduce, allreduce, allgather.
// Every rank of the communicator calls them in the same order with matching arguments (as in MPI).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachecomm/comm.hpp"
#include "cachecomm/datatype.hpp"

namespace cachecomm {

namespace detail {
inline const char in_place_marker = 0;
}

/// Distinguished send buffer (like MPI_IN_PLACE): the input is already in the receive buffer
/// (for allgather: this rank's block is already at receive + rank * block).
inline const void* const in_place = &detail::in_place_marker;

enum class broadcast_algorithm {
  automatic,  ///< chosen by size, rank count, oversubscription and single-copy support
  central,    ///< root copies into one shared buffer, all copy out; chunks wait for every reader
  double_buffer,  ///< as central, but two buffers so the root fills one while ranks drain the other
  tree,           ///< binomial tree of per-rank cache-line slots (few readers per line)
  single_copy,  ///< readers copy straight from the root's buffer (cross-memory attach), if allowed
  slots,        ///< the root's cache-line slots, read by every rank (the small-message path)
  ring,  ///< chunks through a ring over the whole data region: the root leaves once it copied in
};

enum class reduce_algorithm {
  automatic,
  slots,           ///< every rank publishes its input in its own slot; the reducer reads all slots
  reduce_scatter,  ///< each rank reduces one slice of every input, then the slices are gathered
  gather_reduce,   ///< every rank stages its input in chunks; each receiver reduces all inputs (2
                   ///< ranks)
  split_pipeline,  ///< reduce-scatter and allgather of every chunk in one pipeline (each rank
                   ///< reduces its slice of chunk c while the others read chunk c + 1)
};

enum class allgather_algorithm {
  automatic,
  central,      ///< each rank copies its block into shared memory, every rank copies all blocks out
  single_copy,  ///< every rank pulls the others' blocks straight from their buffers (cross-memory
                ///< attach)
  stage_or_pull,  ///< each rank stages its block in shared memory while that copy runs at local
                  ///< speed, and has it pulled (cross-memory attach) while it does not
};

// Names, parsing and lists come from one registry per collective (src/coll/algorithm_registry.cpp).
[[nodiscard]] std::string_view to_string(broadcast_algorithm algorithm);
[[nodiscard]] std::string_view to_string(reduce_algorithm algorithm);
[[nodiscard]] std::string_view to_string(allgather_algorithm algorithm);
/// Parse the names `to_string` prints ("auto" for automatic); throw invalid_argument otherwise.
[[nodiscard]] broadcast_algorithm parse_broadcast_algorithm(std::string_view text);
[[nodiscard]] reduce_algorithm parse_reduce_algorithm(std::string_view text);
[[nodiscard]] allgather_algorithm parse_allgather_algorithm(std::string_view text);
/// Every concrete algorithm (not `automatic`).
[[nodiscard]] const std::vector<broadcast_algorithm>& all_broadcast_algorithms();
[[nodiscard]] const std::vector<reduce_algorithm>& all_reduce_algorithms();
[[nodiscard]] const std::vector<allgather_algorithm>& all_allgather_algorithms();

/// Online selection (docs/configuration.md) spends at most this many calls of one operation and
/// size bucket on a communicator trying candidates; unpaced (CACHECOMM_ONLINE_BUDGET=0), from the
/// next call the bucket is settled. A benchmark that times the automatic choice sets that and calls
/// it this often first, so that no trial call (each runs another candidate) lands among its
/// samples.
inline constexpr int online_selection_trial_calls = 59;
/// Paced (the default budget), a bucket is settled after at most this many calls: the trial's and
/// the pauses before its last round and its confirmation, in which the leader runs.
inline constexpr int online_selection_paced_calls = online_selection_trial_calls + 2 * 1024;

/// What `automatic` resolves to for a message of `bytes` on this communicator, and why (allgather:
/// `bytes` is one rank's block).
struct algorithm_choice {
  std::string algorithm;
  std::string reason;
};
[[nodiscard]] algorithm_choice explain_broadcast(comm& c, std::size_t bytes);
[[nodiscard]] algorithm_choice explain_reduce(comm& c, std::size_t bytes);
[[nodiscard]] algorithm_choice explain_allreduce(comm& c, std::size_t bytes);
[[nodiscard]] algorithm_choice explain_allgather(comm& c, std::size_t bytes);
/// True when readers may copy from another process's memory (probed at run time).
[[nodiscard]] bool single_copy_available(comm& c);

void broadcast(comm& c, void* buffer, std::size_t count, datatype type, int root);
void broadcast(comm& c, void* buffer, std::size_t count, datatype type, int root,
               broadcast_algorithm algorithm);

/// `receive` matters only at `root`. reduce_op::replace is refused (it is not a collective op).
void reduce(comm& c, const void* send, void* receive, std::size_t count, datatype type,
            reduce_op op, int root);
void reduce(comm& c, const void* send, void* receive, std::size_t count, datatype type,
            reduce_op op, int root, reduce_algorithm algorithm);

/// Every rank gets the same bits: elements are combined in rank order 0, 1, ..., P-1.
void allreduce(comm& c, const void* send, void* receive, std::size_t count, datatype type,
               reduce_op op);
void allreduce(comm& c, const void* send, void* receive, std::size_t count, datatype type,
               reduce_op op, reduce_algorithm algorithm);

/// Rank r's `count_per_rank` elements land at receive + r * count_per_rank.
void allgather(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type);
void allgather(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
               allgather_algorithm algorithm);

/// Throws invalid_argument for a typed call whose receive span has the wrong length.
[[noreturn]] void throw_size_mismatch(const char* operation, std::size_t expected, std::size_t got);

// Typed conveniences.
template <typename T>
void broadcast(comm& c, std::span<T> buffer, int root) {
  broadcast(c, buffer.data(), buffer.size(), datatype_of<T>(), root);
}
template <typename T>
void reduce(comm& c, std::span<const T> send, std::span<T> receive, reduce_op op, int root) {
  reduce(c, send.data(), receive.data(), send.size(), datatype_of<T>(), op, root);
}
template <typename T>
void allreduce(comm& c, std::span<const T> send, std::span<T> receive, reduce_op op) {
  if (receive.size() != send.size()) throw_size_mismatch("allreduce", send.size(), receive.size());
  allreduce(c, send.data(), receive.data(), send.size(), datatype_of<T>(), op);
}
/// In place: `buffer` is both input and output.
template <typename T>
void allreduce(comm& c, std::span<T> buffer, reduce_op op) {
  allreduce(c, in_place, buffer.data(), buffer.size(), datatype_of<T>(), op);
}
template <typename T>
void allgather(comm& c, std::span<const T> send, std::span<T> receive) {
  if (receive.size() != send.size() * static_cast<std::size_t>(c.size())) {
    throw_size_mismatch("allgather", send.size() * static_cast<std::size_t>(c.size()),
                        receive.size());
  }
  allgather(c, send.data(), receive.data(), send.size(), datatype_of<T>());
}

}  // namespace cachecomm

// The block collectives (gather, scatter, alltoall), the prefix reductions (scan, exscan) and the
// vector ones (reduce_scatter_block, allgatherv, gatherv).
#include "cachecomm/gather_scatter.hpp"      // IWYU pragma: export
#include "cachecomm/scan.hpp"                // IWYU pragma: export
#include "cachecomm/vector_collectives.hpp"  // IWYU pragma: export
