// Per-destination buffering as message-aggregation libraries (YGM, Conveyors) do it: every write
// becomes an (offset, bytes) record appended to its target's buffer, which leaves as one message
// when the next record would not fit. No merging of repeated writes: the baseline the
// communication cache is measured against, over the same line sinks and message format.
#pragma once

#include <cstddef>
#include <vector>

#include "coalesce/line_sink.hpp"

namespace cachecomm::detail {

class record_aggregator {
 public:
  /// `sink_of_target[r]` carries rank r's records; a buffer holds up to `buffer_bytes` of records.
  record_aggregator(std::vector<line_sink*> sink_of_target, std::size_t buffer_bytes)
      : m_sink_of_target(std::move(sink_of_target)),
        m_buffer_bytes(buffer_bytes),
        m_buffers(m_sink_of_target.size()) {}

  void write(int target, std::uint64_t offset, const std::byte* data, std::size_t bytes) {
    line_message& destination = m_buffers[static_cast<std::size_t>(target)];
    if (!destination.empty() &&
        destination.bytes().size() + line_message::record_header + bytes > m_buffer_bytes) {
      send(target);
    }
    destination.append(offset, data, bytes);
  }
  void flush() {
    for (std::size_t target = 0; target < m_buffers.size(); ++target) {
      if (!m_buffers[target].empty()) send(static_cast<int>(target));
    }
  }
  [[nodiscard]] std::size_t messages() const { return m_messages; }
  [[nodiscard]] std::size_t payload_bytes() const { return m_payload_bytes; }

 private:
  void send(int target) {
    line_message& destination = m_buffers[static_cast<std::size_t>(target)];
    ++m_messages;
    m_payload_bytes += destination.payload_bytes();
    m_sink_of_target[static_cast<std::size_t>(target)]->send(target, destination);
  }

  std::vector<line_sink*> m_sink_of_target;
  std::size_t m_buffer_bytes;
  std::vector<line_message> m_buffers;
  std::size_t m_messages = 0;
  std::size_t m_payload_bytes = 0;
};

}  // namespace cachecomm::detail
