#include "cachecomm/datatype.hpp"

#include <string>

#include "cachecomm/error.hpp"

namespace cachecomm {

std::size_t size_of(datatype type) {
  switch (type) {
    case datatype::int8:
    case datatype::uint8:
    case datatype::byte: return 1;
    case datatype::int16:
    case datatype::uint16: return 2;
    case datatype::int32:
    case datatype::uint32:
    case datatype::float32: return 4;
    case datatype::int64:
    case datatype::uint64:
    case datatype::float64:
    case datatype::complex64: return 8;
    case datatype::complex128: return 16;
  }
  throw invalid_argument("cachecomm: unknown datatype value " +
                         std::to_string(static_cast<int>(type)));
}

std::string_view to_string(datatype type) {
  switch (type) {
    case datatype::int8: return "int8";
    case datatype::uint8: return "uint8";
    case datatype::int16: return "int16";
    case datatype::uint16: return "uint16";
    case datatype::int32: return "int32";
    case datatype::uint32: return "uint32";
    case datatype::int64: return "int64";
    case datatype::uint64: return "uint64";
    case datatype::float32: return "float32";
    case datatype::float64: return "float64";
    case datatype::complex64: return "complex64";
    case datatype::complex128: return "complex128";
    case datatype::byte: return "byte";
  }
  return "unknown-datatype";
}

std::string_view to_string(reduce_op op) {
  switch (op) {
    case reduce_op::sum: return "sum";
    case reduce_op::product: return "product";
    case reduce_op::min: return "min";
    case reduce_op::max: return "max";
    case reduce_op::logical_and: return "logical-and";
    case reduce_op::logical_or: return "logical-or";
    case reduce_op::logical_xor: return "logical-xor";
    case reduce_op::bitwise_and: return "bitwise-and";
    case reduce_op::bitwise_or: return "bitwise-or";
    case reduce_op::bitwise_xor: return "bitwise-xor";
    case reduce_op::replace: return "replace";
  }
  return "unknown-op";
}

namespace {
bool is_integer(datatype type) {
  switch (type) {
    case datatype::int8:
    case datatype::uint8:
    case datatype::int16:
    case datatype::uint16:
    case datatype::int32:
    case datatype::uint32:
    case datatype::int64:
    case datatype::uint64: return true;
    default: return false;
  }
}
bool is_complex(datatype type) {
  return type == datatype::complex64 || type == datatype::complex128;
}
}  // namespace

bool supports(datatype type, reduce_op op) {
  switch (op) {
    case reduce_op::replace: return true;
    case reduce_op::sum:
    case reduce_op::product: return type != datatype::byte;
    case reduce_op::min:
    case reduce_op::max: return type != datatype::byte && !is_complex(type);
    default: return is_integer(type);  // logical and bitwise operations
  }
}

void check_supported(datatype type, reduce_op op) {
  if (static_cast<int>(type) < 0 || static_cast<int>(type) > static_cast<int>(datatype::byte)) {
    throw unsupported_error("cachecomm: unknown datatype value " +
                            std::to_string(static_cast<int>(type)));
  }
  if (!supports(type, op)) {
    throw unsupported_error(
        "cachecomm: operation " + std::string(to_string(op)) + " is not supported on " +
        std::string(to_string(type)) +
        " (min/max need real numbers; logical and bitwise operations need integers; "
        "bytes can only be moved)");
  }
}

}  // namespace cachecomm
