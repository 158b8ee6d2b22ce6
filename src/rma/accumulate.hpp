// Element-wise atomic accumulate into shared memory (node-local targets of a window).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "cachecomm/datatype.hpp"
#include "shm/cache_line.hpp"

namespace cachecomm::detail {

/// Locks for the 16-byte elements (complex128), shared by every rank of the node; an element's
/// lock is chosen by its address within the segment, so all ranks pick the same one.
struct accumulate_stripes {
  static constexpr std::size_t count = 32;
  padded_flag* locks = nullptr;  ///< `count` lines in the window's segment
  const std::byte* segment_base = nullptr;
};

class waiter;

/// Applies `target[i] = op(target[i], origin[i])` for `count` elements of `type`, each element
/// atomically with respect to other calls (CAS loops for 1-8 byte elements, a striped lock for
/// complex128). `target` must be aligned to the element size (8 for complex128); `origin` may be
/// unaligned. The pair (type, op) must be supported (check_supported).
void accumulate_elements(std::byte* target, const std::byte* origin, std::size_t count,
                         datatype type, reduce_op op, const accumulate_stripes& stripes,
                         waiter& wait);

/// Alignment the target address of an accumulate of `type` needs.
[[nodiscard]] std::size_t accumulate_alignment(datatype type);

}  // namespace cachecomm::detail
