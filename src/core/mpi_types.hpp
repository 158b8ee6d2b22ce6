// The MPI handles of cachecomm's datatypes and operations, for every path that hands work to MPI
// (collectives between node leaders, windows across nodes).
#pragma once

#include <mpi.h>

#include "cachecomm/datatype.hpp"

namespace cachecomm::detail {

[[nodiscard]] MPI_Datatype mpi_datatype_of(datatype type);
[[nodiscard]] MPI_Op mpi_op_of(reduce_op op);

}  // namespace cachecomm::detail
