// The transport under the communication cache: delivers one message of line records to one target.
// Small on purpose, so that a sink over cachecomm::window can replace the shared-memory one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "cachecomm/error.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

/// A message as it travels: records [offset u64][length u64][length bytes] back to back, built in
/// place so that no transport has to copy it again. Adjacent records merge into one.
class line_message {
 public:
  static constexpr std::size_t record_header = 2 * sizeof(std::uint64_t);

  void clear() {
    m_size = 0;
    m_records = 0;
    m_payload_bytes = 0;
    m_last_header = npos;
  }
  /// Appends `length` bytes for `offset` of the target's window.
  void append(std::uint64_t offset, const std::byte* data, std::size_t length) {
    if (m_last_header != npos && m_last_end == offset) {
      // Continues the previous record: its bytes are the last thing in the buffer.
      reserve_more(length);
      std::uint64_t previous = 0;
      copy_memory(&previous, m_buffer.data() + m_last_header + sizeof(std::uint64_t),
                  sizeof previous);
      previous += length;
      copy_memory(m_buffer.data() + m_last_header + sizeof(std::uint64_t), &previous,
                  sizeof previous);
    } else {
      reserve_more(record_header + length);
      const std::uint64_t header[2] = {offset, length};
      m_last_header = m_size;
      copy_memory(m_buffer.data() + m_size, header, record_header);
      m_size += record_header;
      ++m_records;
    }
    copy_memory(m_buffer.data() + m_size, data, length);
    m_size += length;
    m_payload_bytes += length;
    m_last_end = offset + length;
  }
  [[nodiscard]] std::span<const std::byte> bytes() const { return {m_buffer.data(), m_size}; }
  [[nodiscard]] std::size_t records() const { return m_records; }
  [[nodiscard]] std::size_t payload_bytes() const { return m_payload_bytes; }
  [[nodiscard]] bool empty() const { return m_size == 0; }
  /// Exchanges storage with `spare` (a transport keeps the bytes in flight) and clears.
  void swap_buffer(std::vector<std::byte>& spare) {
    m_buffer.swap(spare);
    clear();
  }

  /// Calls `apply(offset, data, length)` for each record of `message`; throws `error` naming
  /// `source` when a record runs past the message or past `window_bytes`.
  template <typename Apply>
  static void for_each_record(std::span<const std::byte> message, std::size_t window_bytes,
                              int source, Apply&& apply) {
    std::size_t position = 0;
    while (position < message.size()) {
      std::uint64_t header[2] = {0, 0};
      if (message.size() - position < record_header) fail(source, "a record header is cut off");
      copy_memory(header, message.data() + position, record_header);
      position += record_header;
      const std::uint64_t offset = header[0];
      const std::uint64_t length = header[1];
      if (length > message.size() - position) fail(source, "a record's bytes are cut off");
      if (offset > window_bytes || length > window_bytes - offset) {
        fail(source, std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                         " fall outside the " + std::to_string(window_bytes) + "-byte window");
      }
      apply(offset, message.data() + position, static_cast<std::size_t>(length));
      position += length;
    }
  }

 private:
  static constexpr std::size_t npos = ~std::size_t{0};
  void reserve_more(std::size_t bytes) {
    if (m_size + bytes > m_buffer.size())
      m_buffer.resize(std::max(2 * m_buffer.size(), m_size + bytes));
  }
  [[noreturn]] static void fail(int source, const std::string& why) {
    throw error("cachecomm::comm_cache: malformed line message from rank " +
                std::to_string(source) + ": " + why);
  }

  std::vector<std::byte> m_buffer;
  std::size_t m_size = 0;
  std::size_t m_records = 0;
  std::size_t m_payload_bytes = 0;
  std::size_t m_last_header = npos;
  std::uint64_t m_last_end = 0;
};

class line_sink {
 public:
  virtual ~line_sink() = default;
  /// Delivers `message` to `target` (a rank of the cache's communicator) and leaves it empty
  /// (possibly holding another buffer). Messages to one target are applied in the order sent.
  virtual void send(int target, line_message& message) = 0;
  /// True once every message sent so far has completed on this side. Never blocks.
  [[nodiscard]] virtual bool test_sent() = 0;
  /// Applies messages that have arrived for this rank (no-op where senders write directly).
  virtual void progress() = 0;
};

}  // namespace cachecomm::detail
