// MPI datatypes and operations -> cachecomm's, deciding which calls cachecomm can serve.
// Works with Open MPI (handles are pointers) and MPICH (handles are integers): only == is used.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <optional>

#include "cachecomm/datatype.hpp"
#include "preload/call_stats.hpp"

namespace cachecomm::detail::preload {

/// A datatype whose elements can be moved as plain bytes: predefined and without gaps.
struct movable_type {
  std::size_t element_bytes = 0;
};

/// The byte size of a predefined gap-free datatype, or the reason it must pass through.
[[nodiscard]] std::optional<movable_type> as_movable(MPI_Datatype type, outcome& why_not);

/// The cachecomm element type for reductions (exact numeric type), or the reason it must pass
/// through.
[[nodiscard]] std::optional<datatype> as_reducible(MPI_Datatype type, outcome& why_not);

/// The cachecomm operation for a predefined MPI operation, or the reason it must pass through.
[[nodiscard]] std::optional<reduce_op> as_reduce_op(MPI_Op op, outcome& why_not);

}  // namespace cachecomm::detail::preload
