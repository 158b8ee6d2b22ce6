// Layout of the shared-memory rings between two ranks of a node.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "shm/cache_line.hpp"

namespace cachecomm::detail {

/// Bytes a message may have to travel inside its slot header (the flag's own cache line).
inline constexpr std::size_t ring_inline_bytes = 16;

/// What a slot carries: a message's first or later chunk, or the address of a message the
/// receiver copies itself from the sender's memory (single copy).
enum slot_kind : std::uint32_t { slot_continuation = 0, slot_first = 1, slot_single_copy = 2 };

/// One slot's header: half a cache line. Slot k of the ring a → b and slot k of the ring b → a
/// share one line, so a reply through the ring lands in the line its request brought over (small
/// ping-pongs mostly use the mailbox line instead, which never moves on to another line).
struct slot_header {
  std::atomic<std::uint32_t> sequence;  ///< slot number + 1 once the sender has filled it
  std::int32_t tag;
  std::uint64_t size_and_kind;  ///< message bytes << 8 | slot_kind
  std::byte inline_data[ring_inline_bytes];

  [[nodiscard]] std::size_t message_bytes() const {
    return static_cast<std::size_t>(size_and_kind >> 8);
  }
  [[nodiscard]] std::uint32_t kind() const {
    return static_cast<std::uint32_t>(size_and_kind & 0xff);
  }
};
static_assert(sizeof(slot_header) == cache_line_size / 2);

/// One direction's half of a pair's mailbox line. Small messages travel here whenever the previous
/// mailbox message of that direction has been taken: both directions' halves share one fixed line,
/// so a ping-pong hands the same line back and forth (the one-line limit) instead of moving on to
/// a fresh ring line per exchange, which costs about twice as much.
struct mailbox_half {
  std::atomic<std::uint32_t>
      sequence;  ///< mailbox messages sent in this direction (n once message n is in)
  std::int32_t tag;
  std::atomic<std::uint32_t>
      taken;  ///< mailbox messages of the *other* direction this side has taken
  std::uint32_t
      position_and_size;  ///< ring slots written before this message (low 24 bits) << 8 | bytes
  std::byte inline_data[ring_inline_bytes];

  [[nodiscard]] std::size_t message_bytes() const { return position_and_size & 0xff; }
  /// True when the message follows ring slot `next_slot - 1` (all earlier ring slots are read).
  [[nodiscard]] bool follows(std::uint32_t next_slot) const {
    return ((position_and_size >> 8) & 0xffffff) == (next_slot & 0xffffff);
  }
};
static_assert(sizeof(mailbox_half) == cache_line_size / 2);
struct alignas(cache_line_size) mailbox_line {
  mailbox_half half[2];  ///< by direction: 0 low → high, 1 high → low
};
/// Futex words a receiver sleeps on, one per direction: whatever the sender publishes (mailbox or
/// ring slot) it rings this bell when some rank sleeps, so one word covers both places.
struct alignas(cache_line_size) doorbell_line {
  std::atomic<std::uint32_t> bell[2];
};

/// Shared copy of one large message by both ranks: the receiver posts where the data goes, then
/// both claim pieces (ticket << 32 | next piece, compare-and-swap) until none is left.
struct alignas(cache_line_size) shared_copy_line {
  std::atomic<std::uint64_t> claim;  ///< ticket << 32 | next piece to copy
  std::uint64_t target;              ///< receiver's buffer address
  std::uint64_t bytes;  ///< bytes to copy (the receive may be shorter than the message)
};
struct alignas(cache_line_size) shared_done_line {
  std::atomic<std::uint32_t> pieces;  ///< pieces finished (reset by the receiver per message)
};

/// The memory of one unordered pair {low, high}: [8 control lines: consumed, copied, shared copy
/// claim and pieces done, for each direction][mailbox line][doorbell line][slots header lines, each
/// holding both directions' slot k][data low → high][data high → low].
struct pair_layout {
  static constexpr std::size_t control_lines = 10;
  static constexpr std::size_t mailbox_line_index = 8;
  static constexpr std::size_t doorbell_line_index = 9;
  [[nodiscard]] static std::size_t bytes_for(std::uint32_t slots, std::size_t chunk) {
    return control_lines * cache_line_size + slots * cache_line_size +
           2 * round_up(slots * chunk, cache_line_size);
  }
};

/// View of one direction of a pair's rings. The sender writes slots and their sequence; the
/// receiver publishes how many slots it has consumed and how many single-copy messages it has read.
class ring_view {
 public:
  ring_view() = default;
  /// `pair_base` is the pair's memory; `direction` is 0 for low → high and 1 for high → low.
  ring_view(std::byte* pair_base, int direction, std::uint32_t slots, std::size_t chunk)
      : m_consumed(reinterpret_cast<padded_flag*>(
            pair_base + 4 * static_cast<std::size_t>(direction) * cache_line_size)),
        m_copied(reinterpret_cast<padded_flag*>(pair_base + (4 * direction + 1) * cache_line_size)),
        m_claim(
            reinterpret_cast<shared_copy_line*>(pair_base + (4 * direction + 2) * cache_line_size)),
        m_done(
            reinterpret_cast<shared_done_line*>(pair_base + (4 * direction + 3) * cache_line_size)),
        m_mailbox(reinterpret_cast<mailbox_line*>(pair_base + pair_layout::mailbox_line_index *
                                                                  cache_line_size)),
        m_doorbells(reinterpret_cast<doorbell_line*>(pair_base + pair_layout::doorbell_line_index *
                                                                     cache_line_size)),
        m_direction(direction),
        m_headers(pair_base + pair_layout::control_lines * cache_line_size +
                  direction * sizeof(slot_header)),
        m_data(pair_base + pair_layout::control_lines * cache_line_size + slots * cache_line_size +
               static_cast<std::size_t>(direction) * round_up(slots * chunk, cache_line_size)),
        m_mask(slots - 1),
        m_chunk(chunk) {}

  // `slots` is a power of two: a mask, not a division, on the latency path.
  [[nodiscard]] slot_header& header(std::uint32_t slot_number) const {
    return *reinterpret_cast<slot_header*>(
        m_headers + static_cast<std::size_t>(slot_number & m_mask) * cache_line_size);
  }
  [[nodiscard]] std::byte* data(std::uint32_t slot_number) const {
    return m_data + static_cast<std::size_t>(slot_number & m_mask) * m_chunk;
  }
  /// This direction's mailbox half (written by the sender) and the other one (where the receiver
  /// records how many of this direction's mailbox messages it has taken).
  [[nodiscard]] mailbox_half& mail() const { return m_mailbox->half[m_direction]; }
  [[nodiscard]] mailbox_half& reverse_mail() const { return m_mailbox->half[1 - m_direction]; }
  [[nodiscard]] std::atomic<std::uint32_t>& doorbell() const {
    return m_doorbells->bell[m_direction];
  }
  [[nodiscard]] std::atomic<std::uint32_t>& consumed() const { return m_consumed->value; }
  [[nodiscard]] std::atomic<std::uint32_t>& copied() const { return m_copied->value; }
  [[nodiscard]] shared_copy_line& claim() const { return *m_claim; }
  [[nodiscard]] std::atomic<std::uint32_t>& pieces_done() const { return m_done->pieces; }

 private:
  padded_flag* m_consumed = nullptr;
  padded_flag* m_copied = nullptr;
  shared_copy_line* m_claim = nullptr;
  shared_done_line* m_done = nullptr;
  mailbox_line* m_mailbox = nullptr;
  doorbell_line* m_doorbells = nullptr;
  int m_direction = 0;
  std::byte* m_headers = nullptr;
  std::byte* m_data = nullptr;
  std::uint32_t m_mask = 0;
  std::size_t m_chunk = 0;
};

}  // namespace cachecomm::detail
