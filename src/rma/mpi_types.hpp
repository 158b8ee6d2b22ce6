// The MPI handles of cachecomm's datatypes and operations (for the remote-node path of windows).
#pragma once

#include <mpi.h>

#include "cachecomm/datatype.hpp"

namespace cachecomm::detail {

[[nodiscard]] MPI_Datatype mpi_datatype_of(datatype type);
[[nodiscard]] MPI_Op mpi_op_of(reduce_op op);

}  // namespace cachecomm::detail
