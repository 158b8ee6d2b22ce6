// The system MPI as a candidate of every collective: where the automatic choice (a tuning file or
// a built-in rule, selection.hpp) says MPI's own call wins, the C++ API calls MPI on the comm's
// communicator and the preload library passes the program's call through (counted as mpi-faster).
#pragma once

#include <cstddef>
#include <string_view>

#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"
#include "coll/tuning_table.hpp"

namespace cachecomm::detail {

/// Why the automatic choice gives this call (`bytes`: message bytes; allgather: one rank's block)
/// to the system MPI, or empty when cachecomm serves it. Builds the comm's collective state on
/// first use, so every rank of the comm must ask (as for any collective call).
[[nodiscard]] std::string_view system_mpi_choice(comm& c, tuned_op op, std::size_t bytes);

/// Before the system MPI carries out a call the automatic choice gave it: every node rank announces
/// the call and checks that the others announced the same, so that ranks whose arguments differ
/// fail at once (mismatch_error) instead of one waiting in MPI forever. Reductions pass their type
/// and operation; the others' are ignored.
void agree_before_system_call(comm& c, tuned_op op, std::size_t bytes,
                              datatype type = datatype::byte, reduce_op operation = reduce_op::sum);

}  // namespace cachecomm::detail
