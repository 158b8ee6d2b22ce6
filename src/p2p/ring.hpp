// Layout of one shared-memory ring from a sender to a receiver on the same node.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "shm/cache_line.hpp"

namespace cachecomm::detail {

/// Bytes a message may have to travel inside its slot header (the flag's own cache line).
inline constexpr std::size_t ring_inline_bytes = 40;

/// What a slot carries: a message's first or later chunk, or the address of a message the
/// receiver copies itself from the sender's memory (single copy).
enum slot_kind : std::uint32_t { slot_continuation = 0, slot_first = 1, slot_single_copy = 2 };

/// One slot's header, exactly one cache line: the sequence flag, the message's description and,
/// for small messages, the payload, so a small message costs the receiver one line transfer.
struct alignas(cache_line_size) slot_header {
  std::atomic<std::uint32_t> sequence;  ///< slot number + 1 once the sender has filled it
  std::int32_t tag;
  std::uint32_t chunk_bytes;            ///< payload bytes in this slot
  std::uint32_t kind;                   ///< slot_kind of this slot
  std::uint64_t message_bytes;
  std::byte inline_data[ring_inline_bytes];
};
static_assert(sizeof(slot_header) == cache_line_size);

/// View of one ring: [consumed line][copied line][slot headers][slot data areas]. The sender writes
/// slots and their sequence; the receiver publishes how many slots it has consumed and how many
/// single-copy messages it has finished reading from the sender's memory.
class ring_view {
 public:
  ring_view() = default;
  ring_view(std::byte* base, std::uint32_t slots, std::size_t chunk)
      : m_consumed(reinterpret_cast<padded_flag*>(base)),
        m_copied(reinterpret_cast<padded_flag*>(base + cache_line_size)),
        m_headers(reinterpret_cast<slot_header*>(base + 2 * cache_line_size)),
        m_data(base + 2 * cache_line_size + slots * sizeof(slot_header)),
        m_slots(slots),
        m_chunk(chunk) {}

  [[nodiscard]] static std::size_t bytes_for(std::uint32_t slots, std::size_t chunk) {
    return 2 * cache_line_size + slots * sizeof(slot_header) + round_up(slots * chunk, cache_line_size);
  }
  [[nodiscard]] slot_header& header(std::uint32_t slot_number) const { return m_headers[slot_number % m_slots]; }
  [[nodiscard]] std::byte* data(std::uint32_t slot_number) const {
    return m_data + static_cast<std::size_t>(slot_number % m_slots) * m_chunk;
  }
  [[nodiscard]] std::atomic<std::uint32_t>& consumed() const { return m_consumed->value; }
  [[nodiscard]] std::atomic<std::uint32_t>& copied() const { return m_copied->value; }
  [[nodiscard]] std::uint32_t slots() const { return m_slots; }
  [[nodiscard]] std::size_t chunk() const { return m_chunk; }

 private:
  padded_flag* m_consumed = nullptr;
  padded_flag* m_copied = nullptr;
  slot_header* m_headers = nullptr;
  std::byte* m_data = nullptr;
  std::uint32_t m_slots = 0;
  std::size_t m_chunk = 0;
};

}  // namespace cachecomm::detail
