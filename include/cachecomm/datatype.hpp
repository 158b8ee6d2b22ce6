// Element types and reduction operations shared by collectives, windows and the preload library.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cachecomm {

enum class datatype {
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  float32,
  float64,
  complex64,
  complex128,
  byte,  ///< opaque bytes: movable (broadcast, allgather, put/get) but not reducible
};

enum class reduce_op {
  sum,
  product,
  min,
  max,
  logical_and,
  logical_or,
  logical_xor,
  bitwise_and,
  bitwise_or,
  bitwise_xor,
  replace,  ///< for accumulate: the new value overwrites (MPI_REPLACE)
};

[[nodiscard]] std::size_t size_of(datatype type);
[[nodiscard]] std::string_view to_string(datatype type);
[[nodiscard]] std::string_view to_string(reduce_op op);

/// True when `op` is defined on `type` (sum/product: numbers; min/max: real numbers;
/// logical and bitwise: integers; replace: everything).
[[nodiscard]] bool supports(datatype type, reduce_op op);
/// Throws unsupported_error naming the pair when `supports` is false.
void check_supported(datatype type, reduce_op op);

/// The datatype of a C++ element type, for the typed convenience overloads.
template <typename T>
constexpr datatype datatype_of();

template <>
constexpr datatype datatype_of<std::int8_t>() {
  return datatype::int8;
}
template <>
constexpr datatype datatype_of<std::uint8_t>() {
  return datatype::uint8;
}
template <>
constexpr datatype datatype_of<std::int16_t>() {
  return datatype::int16;
}
template <>
constexpr datatype datatype_of<std::uint16_t>() {
  return datatype::uint16;
}
template <>
constexpr datatype datatype_of<std::int32_t>() {
  return datatype::int32;
}
template <>
constexpr datatype datatype_of<std::uint32_t>() {
  return datatype::uint32;
}
template <>
constexpr datatype datatype_of<std::int64_t>() {
  return datatype::int64;
}
template <>
constexpr datatype datatype_of<std::uint64_t>() {
  return datatype::uint64;
}
template <>
constexpr datatype datatype_of<float>() {
  return datatype::float32;
}
template <>
constexpr datatype datatype_of<double>() {
  return datatype::float64;
}
template <>
constexpr datatype datatype_of<std::complex<float>>() {
  return datatype::complex64;
}
template <>
constexpr datatype datatype_of<std::complex<double>>() {
  return datatype::complex128;
}
template <>
constexpr datatype datatype_of<std::byte>() {
  return datatype::byte;
}

}  // namespace cachecomm
