// Prefix reductions over shared memory: scan (inclusive) and exscan (exclusive). On a communicator
// that spans nodes they are the system MPI's (its combining order).
// Included by collectives.hpp.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "cachecomm/collectives.hpp"

namespace cachecomm {

/// One set of algorithms for scan and exscan (CACHECOMM_SCAN).
enum class scan_algorithm {
  automatic,
  region,       ///< every rank but the last copies its input into its slot or its part of the
                ///< data region (pipelined); each combines the lower ranks' copies
  single_copy,  ///< each rank pulls the lower ranks' inputs straight from their buffers
                ///< (cross-memory attach)
};
[[nodiscard]] std::string_view to_string(scan_algorithm algorithm);
[[nodiscard]] scan_algorithm parse_scan_algorithm(std::string_view text);
[[nodiscard]] const std::vector<scan_algorithm>& all_scan_algorithms();
/// What `automatic` resolves to for a vector of `bytes` on this communicator (`exclusive`: for
/// exscan), and why.
[[nodiscard]] algorithm_choice explain_scan(comm& c, std::size_t bytes, bool exclusive = false);

/// Rank r receives input_0 op input_1 op ... op input_r, combined left to right in rank order (the
/// same bits as that fold, for any operation). `send` may be in_place.
void scan(comm& c, const void* send, void* receive, std::size_t count, datatype type, reduce_op op);

/// Rank r > 0 receives input_0 op ... op input_{r-1} (left to right); rank 0's `receive` is left
/// unchanged (MPI leaves it undefined). `send` may be in_place.
void exscan(comm& c, const void* send, void* receive, std::size_t count, datatype type,
            reduce_op op);
/// The same with a chosen algorithm (automatic: the rules or the tuning).
void scan(comm& c, const void* send, void* receive, std::size_t count, datatype type, reduce_op op,
          scan_algorithm algorithm);
void exscan(comm& c, const void* send, void* receive, std::size_t count, datatype type,
            reduce_op op, scan_algorithm algorithm);

template <typename T>
void scan(comm& c, std::span<const T> send, std::span<T> receive, reduce_op op) {
  if (receive.size() != send.size()) throw_size_mismatch("scan", send.size(), receive.size());
  scan(c, send.data(), receive.data(), send.size(), datatype_of<T>(), op);
}

}  // namespace cachecomm
