#include "core/mpi_types.hpp"

#include <string>

#include "cachecomm/error.hpp"

namespace cachecomm::detail {

MPI_Datatype mpi_datatype_of(datatype type) {
  switch (type) {
    case datatype::int8: return MPI_INT8_T;
    case datatype::uint8: return MPI_UINT8_T;
    case datatype::int16: return MPI_INT16_T;
    case datatype::uint16: return MPI_UINT16_T;
    case datatype::int32: return MPI_INT32_T;
    case datatype::uint32: return MPI_UINT32_T;
    case datatype::int64: return MPI_INT64_T;
    case datatype::uint64: return MPI_UINT64_T;
    case datatype::float32: return MPI_FLOAT;
    case datatype::float64: return MPI_DOUBLE;
    case datatype::complex64: return MPI_C_FLOAT_COMPLEX;
    case datatype::complex128: return MPI_C_DOUBLE_COMPLEX;
    case datatype::byte: return MPI_BYTE;
  }
  throw invalid_argument("cachecomm: unknown datatype value " +
                         std::to_string(static_cast<int>(type)));
}

MPI_Op mpi_op_of(reduce_op op) {
  switch (op) {
    case reduce_op::sum: return MPI_SUM;
    case reduce_op::product: return MPI_PROD;
    case reduce_op::min: return MPI_MIN;
    case reduce_op::max: return MPI_MAX;
    case reduce_op::logical_and: return MPI_LAND;
    case reduce_op::logical_or: return MPI_LOR;
    case reduce_op::logical_xor: return MPI_LXOR;
    case reduce_op::bitwise_and: return MPI_BAND;
    case reduce_op::bitwise_or: return MPI_BOR;
    case reduce_op::bitwise_xor: return MPI_BXOR;
    case reduce_op::replace: return MPI_REPLACE;
  }
  throw invalid_argument("cachecomm: unknown reduce_op value " +
                         std::to_string(static_cast<int>(op)));
}

}  // namespace cachecomm::detail
