// The transport under the communication cache: delivers one message of line runs to one target.
// Small on purpose, so that a sink over cachecomm::window can replace the shared-memory one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace cachecomm::detail {

/// `length` bytes at `offset` of the target's window; a message's runs carry their bytes back to
/// back in one payload, in the order of the runs.
struct line_run {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

class line_sink {
 public:
  virtual ~line_sink() = default;
  /// Delivers one message to `target` (a rank of the cache's communicator). Messages to one
  /// target are applied in the order they were sent. The caller may reuse both spans on return.
  virtual void send(int target, std::span<const line_run> runs, std::span<const std::byte> payload) = 0;
  /// True once every message sent so far has completed on this side. Never blocks.
  [[nodiscard]] virtual bool test_sent() = 0;
  /// Applies messages that have arrived for this rank (no-op where senders write directly).
  virtual void progress() = 0;
};

}  // namespace cachecomm::detail
