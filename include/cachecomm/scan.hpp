// Prefix reductions over shared memory: scan (inclusive) and exscan (exclusive). On a communicator
// that spans nodes they are the system MPI's (its combining order).
// Included by collectives.hpp.
#pragma once

#include <cstddef>
#include <span>

#include "cachecomm/collectives.hpp"

namespace cachecomm {

/// Rank r receives input_0 op input_1 op ... op input_r, combined left to right in rank order (the
/// same bits as that fold, for any operation). `send` may be in_place.
void scan(comm& c, const void* send, void* receive, std::size_t count, datatype type, reduce_op op);

/// Rank r > 0 receives input_0 op ... op input_{r-1} (left to right); rank 0's `receive` is left
/// unchanged (MPI leaves it undefined). `send` may be in_place.
void exscan(comm& c, const void* send, void* receive, std::size_t count, datatype type,
            reduce_op op);

template <typename T>
void scan(comm& c, std::span<const T> send, std::span<T> receive, reduce_op op) {
  if (receive.size() != send.size()) throw_size_mismatch("scan", send.size(), receive.size());
  scan(c, send.data(), receive.data(), send.size(), datatype_of<T>(), op);
}

}  // namespace cachecomm
