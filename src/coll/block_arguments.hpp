// The argument checks of gather, scatter, alltoall, reduce_scatter_block, scan and exscan, shared
// by the blocking calls (block_collectives.cpp, vector_collectives.cpp) and their nonblocking forms
// (nonblocking_blocks.cpp), which pass their own name as `what` ("igather"...). Each checks only
// this rank's own arguments and throws invalid_argument or unsupported_error naming the problem.
#pragma once

#include <cstddef>

#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"

namespace cachecomm::detail {

/// The bytes of one block; the buffers are checked only when it is not 0. `send` may be in_place
/// at the root.
std::size_t check_gather_arguments(const char* what, const comm& c, const void* send,
                                   const void* receive, std::size_t count_per_rank, datatype type,
                                   int root);
/// As gather's; `receive` may be in_place at the root.
std::size_t check_scatter_arguments(const char* what, const comm& c, const void* send,
                                    const void* receive, std::size_t count_per_rank, datatype type,
                                    int root);
/// The bytes of one block; `send` may be in_place, otherwise it must not overlap `receive`.
std::size_t check_alltoall_arguments(const char* what, const comm& c, const void* send,
                                     const void* receive, std::size_t count_per_rank,
                                     datatype type);
/// The bytes of one block (this rank's result); `send` may be in_place.
std::size_t check_reduce_scatter_block_arguments(const char* what, const comm& c, const void* send,
                                                 const void* receive, std::size_t count_per_rank,
                                                 datatype type, reduce_op op);
/// scan and exscan: the bytes of `count` elements; `send` may be in_place.
std::size_t check_prefix_arguments(const char* what, const void* send, const void* receive,
                                   std::size_t count, datatype type, reduce_op op);

}  // namespace cachecomm::detail
