// Element-wise atomic accumulate into shared memory (node-local targets of a window).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "cachecomm/datatype.hpp"
#include "shm/cache_line.hpp"

namespace cachecomm::detail {

/// Locks for the 16-byte elements (complex128), shared by every rank of the node; an element's
/// lock is chosen by its key (target node rank and byte offset in that target's region), which is
/// the same in every process even where the regions are mapped at different addresses.
struct accumulate_stripes {
  static constexpr std::size_t count = 32;
  padded_flag* locks = nullptr;  ///< `count` lines in the window's segment
};

/// Where an accumulate lands, for choosing stripes: the target's node rank and the byte offset of
/// the first element in its region.
struct element_key {
  std::size_t target_node = 0;
  std::size_t offset = 0;
};

class waiter;

/// Applies `target[i] = op(target[i], origin[i])` for `count` elements of `type`, each element
/// atomically with respect to other calls (CAS loops for 1-8 byte elements, a striped lock for
/// complex128). `target` must be aligned to the element size (8 for complex128); `origin` may be
/// unaligned. The pair (type, op) must be supported (check_supported).
void accumulate_elements(std::byte* target, const std::byte* origin, std::size_t count,
                         datatype type, reduce_op op, const accumulate_stripes& stripes,
                         element_key key, waiter& wait);

/// The same, also storing each element's previous value in `fetched` (MPI_Get_accumulate,
/// MPI_Fetch_and_op). A null `origin` only reads each element atomically (MPI_NO_OP); then `op`
/// is ignored.
void fetch_and_accumulate_elements(std::byte* target, const std::byte* origin, std::byte* fetched,
                                   std::size_t count, datatype type, reduce_op op,
                                   const accumulate_stripes& stripes, element_key key,
                                   waiter& wait);

/// Atomically: `fetched = *target; if (*target == compare) *target = origin;` bit for bit, for one
/// element of 1, 2, 4 or 8 bytes aligned to its size (MPI_Compare_and_swap).
void compare_and_swap_element(std::byte* target, const std::byte* origin, const std::byte* compare,
                              std::byte* fetched, std::size_t element_bytes);

/// Alignment the target address of an accumulate of `type` needs.
[[nodiscard]] std::size_t accumulate_alignment(datatype type);

}  // namespace cachecomm::detail
