// Shared helpers of the collectives tests: input values whose reductions are exact (so any
// correct order gives the same bits as MPI), and the MPI names of cachecomm's types and ops.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "cachecomm/comm.hpp"
#include "cachecomm/datatype.hpp"
#include "coll/coll_settings.hpp"
#include "core/mpi_types.hpp"

namespace cachecomm::testing {

// The reference answers come from MPI through the library's own table of MPI handles; a wrong entry
// there would make the MPI reference disagree with the shared-memory results and fail the tests.
inline MPI_Datatype mpi_type(datatype type) {
  return detail::mpi_datatype_of(type);
}
inline MPI_Op mpi_op(reduce_op op) {
  return detail::mpi_op_of(op);
}

inline const std::vector<datatype>& reducible_types() {
  static const std::vector<datatype> all = {
      datatype::int8,    datatype::uint8,   datatype::int16,     datatype::uint16,
      datatype::int32,   datatype::uint32,  datatype::int64,     datatype::uint64,
      datatype::float32, datatype::float64, datatype::complex64, datatype::complex128};
  return all;
}

inline const std::vector<reduce_op>& collective_ops() {
  static const std::vector<reduce_op> all = {
      reduce_op::sum,         reduce_op::product,    reduce_op::min,         reduce_op::max,
      reduce_op::logical_and, reduce_op::logical_or, reduce_op::logical_xor, reduce_op::bitwise_and,
      reduce_op::bitwise_or,  reduce_op::bitwise_xor};
  return all;
}

/// A small integer for element `index` of `rank`, chosen so that `op` over any number of ranks
/// stays exact in every type (products only ever multiply by 1, -1 or, on three ranks, 2).
inline long long exact_value(reduce_op op, int rank, std::size_t index, unsigned seed,
                             bool is_signed) {
  const auto mix = static_cast<long long>(
      (index * 2654435761ULL + static_cast<unsigned long long>(rank) * 40503ULL + seed) %
      1000003ULL);
  switch (op) {
    case reduce_op::product:
      if (rank < 3 && mix % 5 == 0) return 2;
      return is_signed && mix % 3 == 0 ? -1 : 1;
    case reduce_op::logical_and:
    case reduce_op::logical_or:
    case reduce_op::logical_xor: return mix % 3;
    case reduce_op::bitwise_and:
    case reduce_op::bitwise_or:
    case reduce_op::bitwise_xor: return mix % 256;
    default: return is_signed ? mix % 21 - 10 : mix % 21;
  }
}

template <typename T>
void fill_typed(void* buffer, std::size_t count, reduce_op op, int rank, unsigned seed) {
  auto* out = static_cast<T*>(buffer);
  for (std::size_t i = 0; i < count; ++i) {
    if constexpr (std::is_integral_v<T> || std::is_floating_point_v<T>) {
      out[i] = static_cast<T>(
          exact_value(op, rank, i, seed, std::is_signed_v<T> || std::is_floating_point_v<T>));
    } else {
      using R = typename T::value_type;
      if (op == reduce_op::product) {
        // i, -1 or 1: every product of them is exact.
        const long long pick = exact_value(reduce_op::sum, rank, i, seed, false) % 3;
        out[i] = pick == 0 ? T(R(0), R(1)) : (pick == 1 ? T(R(-1), R(0)) : T(R(1), R(0)));
      } else {
        out[i] = T(static_cast<R>(exact_value(op, rank, i, seed, true)),
                   static_cast<R>(exact_value(op, rank, i + 7, seed, true)));
      }
    }
  }
}

inline void fill(void* buffer, std::size_t count, datatype type, reduce_op op, int rank,
                 unsigned seed) {
  switch (type) {
    case datatype::int8: fill_typed<std::int8_t>(buffer, count, op, rank, seed); break;
    case datatype::uint8: fill_typed<std::uint8_t>(buffer, count, op, rank, seed); break;
    case datatype::int16: fill_typed<std::int16_t>(buffer, count, op, rank, seed); break;
    case datatype::uint16: fill_typed<std::uint16_t>(buffer, count, op, rank, seed); break;
    case datatype::int32: fill_typed<std::int32_t>(buffer, count, op, rank, seed); break;
    case datatype::uint32: fill_typed<std::uint32_t>(buffer, count, op, rank, seed); break;
    case datatype::int64: fill_typed<std::int64_t>(buffer, count, op, rank, seed); break;
    case datatype::uint64: fill_typed<std::uint64_t>(buffer, count, op, rank, seed); break;
    case datatype::float32: fill_typed<float>(buffer, count, op, rank, seed); break;
    case datatype::float64: fill_typed<double>(buffer, count, op, rank, seed); break;
    case datatype::complex64: fill_typed<std::complex<float>>(buffer, count, op, rank, seed); break;
    case datatype::complex128:
      fill_typed<std::complex<double>>(buffer, count, op, rank, seed);
      break;
    case datatype::byte:
      fill_typed<std::uint8_t>(buffer, count, reduce_op::bitwise_xor, rank, seed);
      break;
  }
}

/// Equal results: bit for bit, except that floating-point zeros of either sign are equal (MPI
/// libraries form complex products in different orders, which may flip the sign of a zero).
inline bool same_values(const void* a, const void* b, std::size_t count, datatype type) {
  if (std::memcmp(a, b, count * size_of(type)) == 0) return true;
  std::size_t reals = count;
  switch (type) {
    case datatype::complex64: reals *= 2; [[fallthrough]];
    case datatype::float32: {
      const auto* x = static_cast<const float*>(a);
      const auto* y = static_cast<const float*>(b);
      for (std::size_t i = 0; i < reals; ++i)
        if (!(x[i] == y[i])) return false;
      return true;
    }
    case datatype::complex128: reals *= 2; [[fallthrough]];
    case datatype::float64: {
      const auto* x = static_cast<const double*>(a);
      const auto* y = static_cast<const double*>(b);
      for (std::size_t i = 0; i < reals; ++i)
        if (!(x[i] == y[i])) return false;
      return true;
    }
    default: return false;
  }
}

/// Element count for a message of about `bytes` bytes (at least one element when bytes > 0).
inline std::size_t count_for(std::size_t bytes, datatype type) {
  const std::size_t element = size_of(type);
  return (bytes + element - 1) / element;
}

/// True on every rank when `condition` holds on every rank.
inline bool all_ranks(bool condition, MPI_Comm comm = MPI_COMM_WORLD) {
  int local = condition ? 1 : 0;
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MIN, comm);
  return global == 1;
}

/// CACHECOMM_NONBLOCKING_BYTES's default on `c`: 256 KiB up to 8 ranks on the node, halved as ranks
/// double, at least 64 KiB (4 slots per rank within 8 MiB).
inline std::size_t slot_bytes_of(const comm& c) {
  std::size_t slot = 256U << 10;
  while (slot > (64U << 10) &&
         4 * slot * static_cast<std::size_t>(c.topology().node_size) > (8U << 20))
    slot /= 2;
  return slot;
}

/// The largest call (what one rank puts in) the comm's nonblocking channel serves, cut into
/// chunks of a slot: a whole ring of them (the library's rule, coll/coll_settings.hpp, on the
/// default settings).
inline std::size_t largest_nonblocking_call_of(const comm& c, bool block_per_rank) {
  const node_topology& topology = c.topology();
  const std::uint32_t ring = detail::nonblocking_ring_slots(
      slot_bytes_of(c), topology.node_size, topology.l2_cache_bytes, topology.oversubscribed);
  return detail::nonblocking_largest_call(slot_bytes_of(c), ring, topology.node_size,
                                          block_per_rank);
}

/// Nonblocking message sizes: a few bytes, a page, a few pages, just above the slot (two chunks),
/// well above (three).
inline std::vector<std::size_t> sizes_for(const comm& c) {
  const std::size_t slot = slot_bytes_of(c);
  return {1, 7, 4096, 16385, slot + 1, 2 * slot + 4096};
}

}  // namespace cachecomm::testing
