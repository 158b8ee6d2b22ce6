// Line sink within a node: runs are copied straight into the target's region of a node segment.
#pragma once

#include <cstring>
#include <vector>

#include "coalesce/line_sink.hpp"

namespace cachecomm::detail {

class shm_line_sink final : public line_sink {
 public:
  /// `window_of_rank[r]` is rank r's window in this process's mapping (null for ranks off this node).
  explicit shm_line_sink(std::vector<std::byte*> window_of_rank) : m_window_of_rank(std::move(window_of_rank)) {}

  void send(int target, std::span<const line_run> runs, std::span<const std::byte> payload) override {
    std::byte* window = m_window_of_rank[static_cast<std::size_t>(target)];
    const std::byte* source = payload.data();
    for (const line_run& run : runs) {
      std::memcpy(window + run.offset, source, run.length);
      source += run.length;
    }
  }
  [[nodiscard]] bool test_sent() override { return true; }  // the copies are done on return
  void progress() override {}

 private:
  std::vector<std::byte*> m_window_of_rank;
};

}  // namespace cachecomm::detail
