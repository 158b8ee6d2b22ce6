// Collectives whose ranks contribute blocks of different sizes, and the reduce-scatters:
// reduce_scatter_block, reduce_scatter, allgatherv, gatherv, scatterv, alltoallv. Every rank of the
// communicator calls them in the same order with matching arguments (as in MPI). Included by
// collectives.hpp.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "cachecomm/collectives.hpp"

namespace cachecomm {

/// reduce_scatter_block's and reduce_scatter's algorithms (one setting, CACHECOMM_REDUCE_SCATTER).
enum class reduce_scatter_algorithm {
  automatic,
  central,      ///< every rank copies its input into shared memory; rank r reduces block r of all
  single_copy,  ///< rank r pulls block r of every input straight from its owner's buffer
};
enum class allgatherv_algorithm {
  automatic,
  central,      ///< every rank copies its block into shared memory, every rank copies all out
  single_copy,  ///< every rank pulls the others' blocks straight from their buffers
};
enum class gatherv_algorithm {
  automatic,
  central,      ///< blocks in the ranks' slots (small) or through the data region
  single_copy,  ///< small blocks in the slots, larger ones pulled by the root from their owners
};

enum class scatterv_algorithm {
  automatic,
  central,      ///< every block in the root's slot when all fit, otherwise through the data region
  single_copy,  ///< as central when all fit, otherwise each rank pulls its block from the root
};

enum class alltoallv_algorithm {
  automatic,
  central,  ///< every rank's blocks in its slot when they fit, otherwise through the data region
  single_copy,  ///< as central when they fit, otherwise each rank pulls its blocks from the owners
};

[[nodiscard]] std::string_view to_string(reduce_scatter_algorithm algorithm);
[[nodiscard]] std::string_view to_string(alltoallv_algorithm algorithm);
[[nodiscard]] alltoallv_algorithm parse_alltoallv_algorithm(std::string_view text);
[[nodiscard]] const std::vector<alltoallv_algorithm>& all_alltoallv_algorithms();
[[nodiscard]] std::string_view to_string(scatterv_algorithm algorithm);
[[nodiscard]] scatterv_algorithm parse_scatterv_algorithm(std::string_view text);
[[nodiscard]] const std::vector<scatterv_algorithm>& all_scatterv_algorithms();
[[nodiscard]] std::string_view to_string(allgatherv_algorithm algorithm);
[[nodiscard]] std::string_view to_string(gatherv_algorithm algorithm);
[[nodiscard]] reduce_scatter_algorithm parse_reduce_scatter_algorithm(std::string_view text);
[[nodiscard]] allgatherv_algorithm parse_allgatherv_algorithm(std::string_view text);
[[nodiscard]] gatherv_algorithm parse_gatherv_algorithm(std::string_view text);
[[nodiscard]] const std::vector<reduce_scatter_algorithm>& all_reduce_scatter_algorithms();
[[nodiscard]] const std::vector<allgatherv_algorithm>& all_allgatherv_algorithms();
[[nodiscard]] const std::vector<gatherv_algorithm>& all_gatherv_algorithms();

/// What `automatic` resolves to on this communicator, and why. `bytes`: one rank's result block
/// (reduce_scatter_block; reduce_scatter: the largest) or the largest block (allgatherv, gatherv).
[[nodiscard]] algorithm_choice explain_reduce_scatter(comm& c, std::size_t bytes);
[[nodiscard]] algorithm_choice explain_allgatherv(comm& c, std::size_t bytes);
[[nodiscard]] algorithm_choice explain_gatherv(comm& c, std::size_t bytes);
/// `bytes`: the largest block (the root decides scatterv's path from it and tells the others).
[[nodiscard]] algorithm_choice explain_scatterv(comm& c, std::size_t bytes);
/// `bytes`: the largest block of the call (the algorithm is the same on every rank, since no rank
/// knows the others' counts; the reason says which path a call of that size takes).
[[nodiscard]] algorithm_choice explain_alltoallv(comm& c, std::size_t bytes);

/// `send` holds size() blocks of `count_per_rank` elements; rank r receives block r of every
/// rank's input, combined left to right in rank order (the bits of that fold, for any operation).
/// `send` may be in_place: the input is in `receive` (all size() blocks), the result replaces its
/// first block.
void reduce_scatter_block(comm& c, const void* send, void* receive, std::size_t count_per_rank,
                          datatype type, reduce_op op);
void reduce_scatter_block(comm& c, const void* send, void* receive, std::size_t count_per_rank,
                          datatype type, reduce_op op, reduce_scatter_algorithm algorithm);

/// MPI_Reduce_scatter: `send` holds sum(receive_counts) elements, block r (receive_counts[r]
/// elements, the blocks one after another in rank order) for rank r; rank r receives block r of
/// every rank's input combined left to right in rank order (the bits of that fold, as
/// reduce_scatter_block). `receive_counts` has one entry per rank, zeros allowed, and is the same
/// on every rank: ranks whose counts differ (another total, or the same total split otherwise)
/// fail with a mismatch error naming both totals, never with short data or a hang. `send` may be
/// in_place: the input is in `receive` (all the blocks), the result replaces its start.
void reduce_scatter(comm& c, const void* send, void* receive,
                    std::span<const std::size_t> receive_counts, datatype type, reduce_op op);
void reduce_scatter(comm& c, const void* send, void* receive,
                    std::span<const std::size_t> receive_counts, datatype type, reduce_op op,
                    reduce_scatter_algorithm algorithm);

/// Rank r's `send_count` elements land at receive + displacements[r] (in elements) on every rank.
/// `counts` and `displacements` have one entry per rank and are the same on every rank;
/// `send_count` must equal counts[rank] (ranks that disagree get mismatch errors, not wrong data).
/// `send` may be in_place: this rank's block is already at its place in `receive`.
void allgatherv(comm& c, const void* send, std::size_t send_count, void* receive,
                std::span<const std::size_t> counts, std::span<const std::size_t> displacements,
                datatype type);
void allgatherv(comm& c, const void* send, std::size_t send_count, void* receive,
                std::span<const std::size_t> counts, std::span<const std::size_t> displacements,
                datatype type, allgatherv_algorithm algorithm);

/// Rank r's `send_count` elements land at receive + displacements[r] (in elements) on `root`;
/// `receive`, `counts` and `displacements` matter only there. A rank whose send_count differs from
/// the root's counts[r] makes the call fail on that rank and on the root (a clear error, after
/// every rank took its part: the others' blocks arrive). `send` may be in_place on the root.
void gatherv(comm& c, const void* send, std::size_t send_count, void* receive,
             std::span<const std::size_t> counts, std::span<const std::size_t> displacements,
             datatype type, int root);
void gatherv(comm& c, const void* send, std::size_t send_count, void* receive,
             std::span<const std::size_t> counts, std::span<const std::size_t> displacements,
             datatype type, int root, gatherv_algorithm algorithm);

/// The root's counts[r] elements at send + displacements[r] land in rank r's `receive`; `send`,
/// `counts` and `displacements` matter only on the root. A rank whose receive_count differs from
/// the root's counts[r] receives the smaller of the two and fails after the call, naming both.
/// `receive` may be in_place_receive on the root (its block stays where it is).
void scatterv(comm& c, const void* send, std::span<const std::size_t> counts,
              std::span<const std::size_t> displacements, void* receive, std::size_t receive_count,
              datatype type, int root);
void scatterv(comm& c, const void* send, std::span<const std::size_t> counts,
              std::span<const std::size_t> displacements, void* receive, std::size_t receive_count,
              datatype type, int root, scatterv_algorithm algorithm);

/// send_counts[r] elements at send + send_displacements[r] go to rank r, and the
/// receive_counts[r] elements from rank r land at receive + receive_displacements[r] (all in
/// elements, one entry per rank). Rank i's send_counts[j] must equal rank j's receive_counts[i]: a
/// rank that receives another count than its sender sends fails after the call naming both (it
/// keeps the smaller part; the other ranks are not affected). `send` may be in_place: the blocks
/// are taken from `receive` with the receive counts and displacements (the send ones are ignored)
/// and replaced by the blocks received.
void alltoallv(comm& c, const void* send, std::span<const std::size_t> send_counts,
               std::span<const std::size_t> send_displacements, void* receive,
               std::span<const std::size_t> receive_counts,
               std::span<const std::size_t> receive_displacements, datatype type);
void alltoallv(comm& c, const void* send, std::span<const std::size_t> send_counts,
               std::span<const std::size_t> send_displacements, void* receive,
               std::span<const std::size_t> receive_counts,
               std::span<const std::size_t> receive_displacements, datatype type,
               alltoallv_algorithm algorithm);

}  // namespace cachecomm
