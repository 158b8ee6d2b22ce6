#include "coll/reduce_kernels.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cachecomm/error.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

namespace {

// Blocks of this many bytes stay in L1 while every input is folded into them.
constexpr std::size_t block_bytes = 4096;

// Integer arithmetic goes through the unsigned type: wrap-around is defined there (and is what MPI
// does).
template <typename T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if constexpr (sizeof(T) < sizeof(unsigned)) {
    return static_cast<T>(static_cast<U>(static_cast<unsigned>(static_cast<U>(a)) *
                                         static_cast<unsigned>(static_cast<U>(b))));
  } else {
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  }
}

template <typename T>
constexpr bool is_complex_v = !std::is_integral_v<T> && !std::is_floating_point_v<T>;

/// `earlier` op `later` for one element of a real type (`earlier` holds the lower ranks' inputs).
template <typename T, reduce_op Op>
inline T apply(T earlier, T later) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (Op == reduce_op::sum)
      return wrap_add(earlier, later);
    else if constexpr (Op == reduce_op::product)
      return wrap_mul(earlier, later);
    else if constexpr (Op == reduce_op::min)
      return later < earlier ? later : earlier;
    else if constexpr (Op == reduce_op::max)
      return later > earlier ? later : earlier;
    else if constexpr (Op == reduce_op::logical_and)
      return static_cast<T>((earlier != 0) & (later != 0));
    else if constexpr (Op == reduce_op::logical_or)
      return static_cast<T>((earlier != 0) | (later != 0));
    else if constexpr (Op == reduce_op::logical_xor)
      return static_cast<T>((earlier != 0) ^ (later != 0));
    else if constexpr (Op == reduce_op::bitwise_and)
      return static_cast<T>(earlier & later);
    else if constexpr (Op == reduce_op::bitwise_or)
      return static_cast<T>(earlier | later);
    else
      return static_cast<T>(earlier ^ later);
  } else {
    if constexpr (Op == reduce_op::sum)
      return earlier + later;
    else if constexpr (Op == reduce_op::product)
      return earlier * later;
    else if constexpr (Op == reduce_op::min)
      return later < earlier ? later : earlier;
    else
      return later > earlier ? later : earlier;
  }
}

/// out[i] = earlier[i] op later[i]. `out` may be `earlier` or `later` itself (each element is read
/// before it is written, so iterations do not depend on each other: ivdep lets them vectorize
/// without a run-time overlap check, which would fall back to scalar code exactly then), but must
/// not overlap them otherwise.
template <typename T, reduce_op Op>
inline void combine(T* out, const T* earlier, const T* later, std::size_t n) {
  if constexpr (!is_complex_v<T>) {
#pragma GCC ivdep
    for (std::size_t i = 0; i < n; ++i) out[i] = apply<T, Op>(earlier[i], later[i]);
  } else {
    // Complex: treated as interleaved (re, im) pairs of the real type, so the loops vectorize.
    using R = typename T::value_type;
    auto* o = reinterpret_cast<R*>(out);
    const auto* a = reinterpret_cast<const R*>(earlier);
    const auto* b = reinterpret_cast<const R*>(later);
    if constexpr (Op == reduce_op::sum) {
#pragma GCC ivdep
      for (std::size_t i = 0; i < 2 * n; ++i) o[i] = a[i] + b[i];
    } else if constexpr (Op == reduce_op::product) {
#pragma GCC ivdep
      for (std::size_t i = 0; i < n; ++i) {
        const R re = a[2 * i] * b[2 * i] - a[2 * i + 1] * b[2 * i + 1];
        const R im = a[2 * i] * b[2 * i + 1] + a[2 * i + 1] * b[2 * i];
        o[2 * i] = re;
        o[2 * i + 1] = im;
      }
    }
  }
}

/// block[i] = block[i] op later[i], into a private block that overlaps no input. Not inlined:
/// inlined, GCC 12 at -O3 jams two inputs' passes into one loop (unroll-and-jam) that it then
/// leaves scalar, and the 8- and 16-bit reductions ran one element at a time (int8 sums of 16
/// inputs 4-10x slower per byte than float). One call per 4 KiB block and input costs nothing.
template <typename T, reduce_op Op>
[[gnu::noinline]] void fold_into_block(T* __restrict block, const T* __restrict later,
                                       std::size_t n) {
  if constexpr (!is_complex_v<T>) {
    for (std::size_t i = 0; i < n; ++i) block[i] = apply<T, Op>(block[i], later[i]);
  } else {
    combine<T, Op>(block, block, later, n);
  }
}

template <typename T, reduce_op Op>
void reduce_typed(const void* const* inputs, int input_count, void* out, void* second_out,
                  std::size_t count) {
  constexpr std::size_t per_block = std::max<std::size_t>(1, block_bytes / sizeof(T));
  auto input = [inputs](int index, std::size_t start) {
    return static_cast<const T*>(inputs[index]) + start;
  };
  T* result = static_cast<T*>(out);
  T* copy = static_cast<T*>(second_out);
  if (input_count == 2) {
    // One pass straight into `out` (the large reductions at 2 ranks): staging the inputs through
    // a block in L1 costs two more passes, measured at +20 us per MiB of doubles. Each block of
    // the second output is written after that block of both inputs is read (it may alias one).
    for (std::size_t start = 0; start < count; start += per_block) {
      const std::size_t n = std::min(per_block, count - start);
      combine<T, Op>(result + start, input(0, start), input(1, start), n);
      if (copy != nullptr) copy_memory(copy + start, result + start, n * sizeof(T));
    }
    return;
  }
  // More inputs: fold them into a block that stays in L1, then store it (out may alias any input).
  alignas(64) unsigned char storage[per_block * sizeof(T)];
  T* block = reinterpret_cast<T*>(storage);
  for (std::size_t start = 0; start < count; start += per_block) {
    const std::size_t n = std::min(per_block, count - start);
    if (input_count == 1)
      copy_memory(block, input(0, start), n * sizeof(T));
    else
      combine<T, Op>(block, input(0, start), input(1, start), n);
    for (int index = 2; index < input_count; ++index)
      fold_into_block<T, Op>(block, input(index, start), n);
    copy_memory(result + start, block, n * sizeof(T));
    if (copy != nullptr) copy_memory(copy + start, block, n * sizeof(T));
  }
}

using reduce_function = void (*)(const void* const*, int, void*, void*, std::size_t);

template <typename T>
reduce_function pick_op(reduce_op op) {
  constexpr bool integral = std::is_integral_v<T>;
  constexpr bool real = integral || std::is_floating_point_v<T>;
  switch (op) {
    case reduce_op::sum: return reduce_typed<T, reduce_op::sum>;
    case reduce_op::product: return reduce_typed<T, reduce_op::product>;
    default: break;
  }
  if constexpr (real) {
    if (op == reduce_op::min) return reduce_typed<T, reduce_op::min>;
    if (op == reduce_op::max) return reduce_typed<T, reduce_op::max>;
  }
  if constexpr (integral) {
    switch (op) {
      case reduce_op::logical_and: return reduce_typed<T, reduce_op::logical_and>;
      case reduce_op::logical_or: return reduce_typed<T, reduce_op::logical_or>;
      case reduce_op::logical_xor: return reduce_typed<T, reduce_op::logical_xor>;
      case reduce_op::bitwise_and: return reduce_typed<T, reduce_op::bitwise_and>;
      case reduce_op::bitwise_or: return reduce_typed<T, reduce_op::bitwise_or>;
      case reduce_op::bitwise_xor: return reduce_typed<T, reduce_op::bitwise_xor>;
      default: break;
    }
  }
  return nullptr;
}

reduce_function pick(datatype type, reduce_op op) {
  switch (type) {
    case datatype::int8: return pick_op<std::int8_t>(op);
    case datatype::uint8: return pick_op<std::uint8_t>(op);
    case datatype::int16: return pick_op<std::int16_t>(op);
    case datatype::uint16: return pick_op<std::uint16_t>(op);
    case datatype::int32: return pick_op<std::int32_t>(op);
    case datatype::uint32: return pick_op<std::uint32_t>(op);
    case datatype::int64: return pick_op<std::int64_t>(op);
    case datatype::uint64: return pick_op<std::uint64_t>(op);
    case datatype::float32: return pick_op<float>(op);
    case datatype::float64: return pick_op<double>(op);
    case datatype::complex64: return pick_op<std::complex<float>>(op);
    case datatype::complex128: return pick_op<std::complex<double>>(op);
    case datatype::byte: return nullptr;
  }
  return nullptr;
}

}  // namespace

void reduce_ordered(const void* const* inputs, int input_count, void* out, void* second_out,
                    std::size_t count, datatype type, reduce_op op) {
  if (count == 0) return;
  reduce_function function = pick(type, op);
  if (function == nullptr) check_supported(type, op);  // throws with the reason
  if (function == nullptr || op == reduce_op::replace) {
    throw unsupported_error("cachecomm: no reduction kernel for " + std::string(to_string(op)) +
                            " on " + std::string(to_string(type)));
  }
  function(inputs, input_count, out, second_out, count);
}

}  // namespace cachecomm::detail
