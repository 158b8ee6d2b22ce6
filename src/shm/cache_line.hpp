// Cache-line geometry and the padded slot helpers every shared-memory layout is built from.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cachecomm/error.hpp"

namespace cachecomm::detail {

// 64 bytes on every x86-64 and most Arm cores; flags that different ranks write live on
// separate lines, because a shared line costs a coherence round trip per poll.
inline constexpr std::size_t cache_line_size = 64;

[[nodiscard]] constexpr std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

[[nodiscard]] constexpr std::size_t padded_to_line(std::size_t bytes) {
  return round_up(bytes == 0 ? 1 : bytes, cache_line_size);
}

/// A 32-bit flag alone on its cache line.
struct alignas(cache_line_size) padded_flag {
  std::atomic<std::uint32_t> value;
};
static_assert(sizeof(padded_flag) == cache_line_size);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

/// Computes offsets inside a segment so that every rank derives the same layout from the same
/// inputs.
class segment_layout {
 public:
  /// Reserves `bytes` aligned to `alignment` (a power of two) and returns its offset.
  std::size_t reserve(std::size_t bytes, std::size_t alignment = cache_line_size) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      throw invalid_argument("cachecomm: segment alignment must be a power of two");
    }
    // Sizes come from users (window regions, grid fields): a sum that wrapped around would give a
    // small segment with regions outside it. The limit leaves room for callers' padding and is far
    // above any mappable size.
    if (alignment > max_bytes - m_size || bytes > max_bytes - round_up(m_size, alignment)) {
      throw invalid_argument("cachecomm: shared segment of more than " + std::to_string(m_size) +
                             " + " + std::to_string(bytes) +
                             " bytes exceeds the largest mappable size");
    }
    m_size = round_up(m_size, alignment);
    std::size_t offset = m_size;
    m_size += bytes;
    return offset;
  }
  /// Reserves `count` slots of `slot_bytes` each, every slot starting on its own cache line.
  std::size_t reserve_slots(std::size_t count, std::size_t slot_bytes) {
    const std::size_t stride = padded_to_line(slot_bytes);
    if (count > max_bytes / stride) {
      throw invalid_argument("cachecomm: shared segment of " + std::to_string(count) +
                             " slots of " + std::to_string(stride) +
                             " bytes exceeds the largest mappable size");
    }
    return reserve(count * stride, cache_line_size);
  }
  [[nodiscard]] std::size_t size() const { return round_up(m_size, cache_line_size); }

 private:
  static constexpr std::size_t max_bytes = static_cast<std::size_t>(PTRDIFF_MAX) / 2;  // 2^62
  std::size_t m_size = 0;
};

/// View of `count` cache-line-padded slots of type T starting at `base`.
template <typename T>
class slot_array {
 public:
  slot_array() = default;
  slot_array(void* base, std::size_t count)
      : m_base(static_cast<std::byte*>(base)), m_count(count) {
    if (reinterpret_cast<std::uintptr_t>(base) % cache_line_size != 0) {
      throw invalid_argument("cachecomm: slot array base is not cache-line aligned");
    }
  }
  static constexpr std::size_t stride = padded_to_line(sizeof(T));
  [[nodiscard]] T& operator[](std::size_t index) const {
    return *reinterpret_cast<T*>(m_base + index * stride);
  }
  [[nodiscard]] std::size_t size() const { return m_count; }
  [[nodiscard]] static constexpr std::size_t bytes_for(std::size_t count) { return count * stride; }

 private:
  std::byte* m_base = nullptr;
  std::size_t m_count = 0;
};

}  // namespace cachecomm::detail
