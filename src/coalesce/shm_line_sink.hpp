// Line sink within a node: records are copied straight into the target's region of a node segment.
#pragma once

#include <cstring>
#include <limits>
#include <vector>

#include "coalesce/line_sink.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

class shm_line_sink final : public line_sink {
 public:
  /// `window_of_rank[r]` is rank r's window in this process's mapping (null for ranks off this
  /// node).
  explicit shm_line_sink(std::vector<std::byte*> window_of_rank)
      : m_window_of_rank(std::move(window_of_rank)) {}

  void send(int target, line_message& message) override {
    std::byte* window = m_window_of_rank[static_cast<std::size_t>(target)];
    // The cache checked every range against the target's window before caching it.
    line_message::for_each_record(
        message.bytes(), std::numeric_limits<std::size_t>::max() / 2, target,
        [window](std::uint64_t offset, const std::byte* data, std::size_t length) {
          copy_memory(window + offset, data, length);
        });
    message.clear();
  }
  [[nodiscard]] bool test_sent() override { return true; }  // the copies are done on return
  void progress() override {}

 private:
  std::vector<std::byte*> m_window_of_rank;
};

}  // namespace cachecomm::detail
