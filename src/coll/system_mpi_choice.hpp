// The system MPI as a candidate of every collective: where the automatic choice (a tuning file or
// a built-in rule, selection.hpp) says MPI's own call wins, the C++ API calls MPI on the comm's
// communicator and the preload library passes the program's call through (counted as mpi-faster).
#pragma once

#include <cstddef>
#include <string_view>

#include "cachecomm/comm.hpp"
#include "coll/tuning_table.hpp"

namespace cachecomm::detail {

/// Why the automatic choice gives this call (`bytes`: message bytes; allgather: one rank's block)
/// to the system MPI, or empty when cachecomm serves it. Builds the comm's collective state on
/// first use, so every rank of the comm must ask (as for any collective call).
[[nodiscard]] std::string_view system_mpi_choice(comm& c, tuned_op op, std::size_t bytes);

}  // namespace cachecomm::detail
