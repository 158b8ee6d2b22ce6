#include "rma/accumulate.hpp"

#include <complex>
#include <cstring>
#include <string>
#include <type_traits>

#include "cachecomm/error.hpp"
#include "shm/memory_copy.hpp"
#include "sync/waiter.hpp"

namespace cachecomm::detail {

namespace {

template <typename T>
T combine(T current, T incoming, reduce_op op) {
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case reduce_op::sum: return static_cast<T>(current + incoming);
      case reduce_op::product: return static_cast<T>(current * incoming);
      case reduce_op::min: return incoming < current ? incoming : current;
      case reduce_op::max: return incoming > current ? incoming : current;
      case reduce_op::logical_and: return static_cast<T>((current != 0) && (incoming != 0));
      case reduce_op::logical_or: return static_cast<T>((current != 0) || (incoming != 0));
      case reduce_op::logical_xor: return static_cast<T>((current != 0) != (incoming != 0));
      case reduce_op::bitwise_and: return static_cast<T>(current & incoming);
      case reduce_op::bitwise_or: return static_cast<T>(current | incoming);
      case reduce_op::bitwise_xor: return static_cast<T>(current ^ incoming);
      case reduce_op::replace: return incoming;
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case reduce_op::sum: return current + incoming;
      case reduce_op::product: return current * incoming;
      case reduce_op::min: return incoming < current ? incoming : current;
      case reduce_op::max: return incoming > current ? incoming : current;
      case reduce_op::replace: return incoming;
      default: break;
    }
  } else {  // complex
    switch (op) {
      case reduce_op::sum: return current + incoming;
      case reduce_op::product: return current * incoming;
      case reduce_op::replace: return incoming;
      default: break;
    }
  }
  throw unsupported_error("cachecomm: accumulate operation not supported on this type");
}

template <std::size_t Bytes>
struct word_of;
template <>
struct word_of<1> {
  using type = std::uint8_t;
};
template <>
struct word_of<2> {
  using type = std::uint16_t;
};
template <>
struct word_of<4> {
  using type = std::uint32_t;
};
template <>
struct word_of<8> {
  using type = std::uint64_t;
};

// One element, 1-8 bytes: compare-and-swap on the element's bit pattern, so floating-point and
// complex64 need no lock and any op works the same way. `fetched` (may be null) receives each
// element's previous value; a null `origin` only reads (MPI_NO_OP).
template <typename T>
void accumulate_cas(std::byte* target, const std::byte* origin, std::byte* fetched,
                    std::size_t count, reduce_op op) {
  using word = typename word_of<sizeof(T)>::type;
  for (std::size_t i = 0; i < count; ++i) {
    auto* slot = reinterpret_cast<word*>(target + i * sizeof(T));
    if (origin == nullptr) {
      const word bits = __atomic_load_n(slot, __ATOMIC_RELAXED);
      copy_memory(fetched + i * sizeof(T), &bits, sizeof(T));
      continue;
    }
    T incoming;
    copy_memory(static_cast<void*>(&incoming), origin + i * sizeof(T), sizeof(T));
    if (op == reduce_op::replace) {
      word bits;
      copy_memory(&bits, &incoming, sizeof(T));
      if (fetched == nullptr) {
        __atomic_store_n(slot, bits, __ATOMIC_RELAXED);
      } else {
        const word previous = __atomic_exchange_n(slot, bits, __ATOMIC_RELAXED);
        copy_memory(fetched + i * sizeof(T), &previous, sizeof(T));
      }
      continue;
    }
    word expected = __atomic_load_n(slot, __ATOMIC_RELAXED);
    while (true) {
      T current;
      copy_memory(static_cast<void*>(&current), &expected, sizeof(T));
      T updated = combine(current, incoming, op);
      word desired;
      copy_memory(&desired, &updated, sizeof(T));
      if (__atomic_compare_exchange_n(slot, &expected, desired, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED))
        break;
    }
    if (fetched != nullptr) copy_memory(fetched + i * sizeof(T), &expected, sizeof(T));
  }
}

// complex128 (16 bytes): std::complex<double> is only 8-byte aligned and cmpxchg16b faults on a
// misaligned address, while GCC's 16-byte __atomic falls back to libatomic whose lock table is
// private to each process. A striped spin lock in the shared segment works for any 8-aligned
// element and across processes; complex accumulate is rare enough that the lock costs little.
void accumulate_locked(std::byte* target, const std::byte* origin, std::byte* fetched,
                       std::size_t count, reduce_op op, const accumulate_stripes& stripes,
                       element_key key, waiter& wait) {
  using T = std::complex<double>;
  for (std::size_t i = 0; i < count; ++i) {
    std::byte* element = target + i * sizeof(T);
    const std::size_t stripe = key.target_node * 7 + (key.offset + i * sizeof(T)) / sizeof(T);
    auto& lock = stripes.locks[stripe % accumulate_stripes::count].value;
    auto try_lock = [&] {
      std::uint32_t unlocked = 0;
      return lock.load(std::memory_order_relaxed) == 0 &&
             lock.compare_exchange_strong(unlocked, 1, std::memory_order_acquire);
    };
    wait.wait(reinterpret_cast<const std::uint32_t*>(&lock), try_lock, -1,
              "window accumulate (complex128 lock)");
    T current;
    copy_memory(static_cast<void*>(&current), element, sizeof(T));
    if (fetched != nullptr) copy_memory(fetched + i * sizeof(T), &current, sizeof(T));
    if (origin != nullptr) {
      T incoming;
      copy_memory(static_cast<void*>(&incoming), origin + i * sizeof(T), sizeof(T));
      T updated = combine(current, incoming, op);
      copy_memory(element, &updated, sizeof(T));
    }
    wait.publish(lock, 0);
  }
}

}  // namespace

std::size_t accumulate_alignment(datatype type) {
  return type == datatype::complex128 ? 8 : size_of(type);
}

void fetch_and_accumulate_elements(std::byte* target, const std::byte* origin, std::byte* fetched,
                                   std::size_t count, datatype type, reduce_op op,
                                   const accumulate_stripes& stripes, element_key key,
                                   waiter& wait) {
  switch (type) {
    case datatype::int8: return accumulate_cas<std::int8_t>(target, origin, fetched, count, op);
    case datatype::uint8:
    case datatype::byte:  // replace only
      return accumulate_cas<std::uint8_t>(target, origin, fetched, count, op);
    case datatype::int16: return accumulate_cas<std::int16_t>(target, origin, fetched, count, op);
    case datatype::uint16: return accumulate_cas<std::uint16_t>(target, origin, fetched, count, op);
    case datatype::int32: return accumulate_cas<std::int32_t>(target, origin, fetched, count, op);
    case datatype::uint32: return accumulate_cas<std::uint32_t>(target, origin, fetched, count, op);
    case datatype::int64: return accumulate_cas<std::int64_t>(target, origin, fetched, count, op);
    case datatype::uint64: return accumulate_cas<std::uint64_t>(target, origin, fetched, count, op);
    case datatype::float32: return accumulate_cas<float>(target, origin, fetched, count, op);
    case datatype::float64: return accumulate_cas<double>(target, origin, fetched, count, op);
    case datatype::complex64:
      return accumulate_cas<std::complex<float>>(target, origin, fetched, count, op);
    case datatype::complex128:
      return accumulate_locked(target, origin, fetched, count, op, stripes, key, wait);
  }
}

void accumulate_elements(std::byte* target, const std::byte* origin, std::size_t count,
                         datatype type, reduce_op op, const accumulate_stripes& stripes,
                         element_key key, waiter& wait) {
  fetch_and_accumulate_elements(target, origin, nullptr, count, type, op, stripes, key, wait);
}

namespace {

template <typename Word>
void compare_and_swap_word(std::byte* target, const std::byte* origin, const std::byte* compare,
                           std::byte* fetched) {
  Word desired;
  Word expected;
  copy_memory(&desired, origin, sizeof(Word));
  copy_memory(&expected, compare, sizeof(Word));
  // On failure `expected` receives the current value; on success it already holds it.
  __atomic_compare_exchange_n(reinterpret_cast<Word*>(target), &expected, desired, false,
                              __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  copy_memory(fetched, &expected, sizeof(Word));
}

}  // namespace

void compare_and_swap_element(std::byte* target, const std::byte* origin, const std::byte* compare,
                              std::byte* fetched, std::size_t element_bytes) {
  switch (element_bytes) {
    case 1: return compare_and_swap_word<std::uint8_t>(target, origin, compare, fetched);
    case 2: return compare_and_swap_word<std::uint16_t>(target, origin, compare, fetched);
    case 4: return compare_and_swap_word<std::uint32_t>(target, origin, compare, fetched);
    case 8: return compare_and_swap_word<std::uint64_t>(target, origin, compare, fetched);
    default:
      throw unsupported_error("cachecomm: compare-and-swap of " + std::to_string(element_bytes) +
                              "-byte elements (only 1, 2, 4 and 8)");
  }
}

}  // namespace cachecomm::detail
