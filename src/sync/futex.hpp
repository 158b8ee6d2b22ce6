// Process-shared futex calls on a 32-bit word in shared memory.
#pragma once

#include <cstdint>

namespace cachecomm::detail {

/// Sleeps while `*word == expected`, at most `timeout_ns`. Spurious returns are fine: callers
/// re-check.
void futex_wait(const std::uint32_t* word, std::uint32_t expected, long timeout_ns) noexcept;
/// Wakes every process sleeping on `word`.
void futex_wake_all(const std::uint32_t* word) noexcept;

}  // namespace cachecomm::detail
