// Rooted and all-to-all block collectives over shared memory: gather, scatter, alltoall.
// Every rank of the communicator calls them in the same order with matching arguments (as in MPI).
// Included by collectives.hpp.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "cachecomm/collectives.hpp"

namespace cachecomm {

/// One set of algorithms for the three block collectives (each has its own setting and registry).
enum class gather_algorithm {
  automatic,
  central,      ///< blocks through shared slots (small) or the data region, copied out by the root
  single_copy,  ///< the root pulls every block straight from its owner's buffer (cross-memory
                ///< attach)
};
enum class scatter_algorithm {
  automatic,
  central,      ///< the root copies the blocks into shared slots or the data region, ranks copy out
  single_copy,  ///< every rank pulls its block straight from the root's buffer
};
enum class alltoall_algorithm {
  automatic,
  central,      ///< every rank copies its blocks into shared memory, each rank copies its own out
  single_copy,  ///< every rank pulls its block from each other rank's send buffer
};

[[nodiscard]] std::string_view to_string(gather_algorithm algorithm);
[[nodiscard]] std::string_view to_string(scatter_algorithm algorithm);
[[nodiscard]] std::string_view to_string(alltoall_algorithm algorithm);
[[nodiscard]] gather_algorithm parse_gather_algorithm(std::string_view text);
[[nodiscard]] scatter_algorithm parse_scatter_algorithm(std::string_view text);
[[nodiscard]] alltoall_algorithm parse_alltoall_algorithm(std::string_view text);
[[nodiscard]] const std::vector<gather_algorithm>& all_gather_algorithms();
[[nodiscard]] const std::vector<scatter_algorithm>& all_scatter_algorithms();
[[nodiscard]] const std::vector<alltoall_algorithm>& all_alltoall_algorithms();

/// What `automatic` resolves to for blocks of `block_bytes` on this communicator, and why.
[[nodiscard]] algorithm_choice explain_gather(comm& c, std::size_t block_bytes);
[[nodiscard]] algorithm_choice explain_scatter(comm& c, std::size_t block_bytes);
[[nodiscard]] algorithm_choice explain_alltoall(comm& c, std::size_t block_bytes);

/// Rank r's `count_per_rank` elements land at receive + r * count_per_rank on `root`; `receive`
/// matters only there. `send` may be in_place on the root (its block is already in place).
void gather(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
            int root);
void gather(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
            int root, gather_algorithm algorithm);

/// `in_place` as a receive buffer (scatter's root keeps its own block where it is).
inline void* const in_place_receive = const_cast<void*>(in_place);

/// Rank r receives send + r * count_per_rank of the root; `send` matters only there. `receive`
/// may be in_place_receive on the root (its own block stays where it is).
void scatter(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
             int root);
void scatter(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
             int root, scatter_algorithm algorithm);

/// Block d of rank s's `send` lands as block s of rank d's `receive`. `send` may be in_place: the
/// blocks to send are in `receive` and are replaced.
void alltoall(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type);
void alltoall(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
              alltoall_algorithm algorithm);

template <typename T>
void alltoall(comm& c, std::span<const T> send, std::span<T> receive) {
  if (receive.size() != send.size()) throw_size_mismatch("alltoall", send.size(), receive.size());
  if (send.size() % static_cast<std::size_t>(c.size()) != 0) {
    throw_size_mismatch(
        "alltoall",
        send.size() / static_cast<std::size_t>(c.size()) * static_cast<std::size_t>(c.size()),
        send.size());
  }
  alltoall(c, send.data(), receive.data(), send.size() / static_cast<std::size_t>(c.size()),
           datatype_of<T>());
}

}  // namespace cachecomm
