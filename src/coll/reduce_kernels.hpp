// Element-wise reduction kernels, one instantiation per (type, operation), written so the compiler
// vectorizes them. Combining always runs in the order the inputs are given, so results are the
// same bits on every rank that calls them with the same inputs.
#pragma once

#include <cstddef>

#include "cachecomm/datatype.hpp"

namespace cachecomm::detail {

/// out = inputs[0] op inputs[1] op ... op inputs[n-1] (left to right), `count` elements.
/// `out` may alias any input: each block is combined in a private buffer before it is stored.
/// `second_out` (may be null) receives a copy of the result too.
void reduce_ordered(const void* const* inputs, int input_count, void* out, void* second_out,
                    std::size_t count, datatype type, reduce_op op);

}  // namespace cachecomm::detail
