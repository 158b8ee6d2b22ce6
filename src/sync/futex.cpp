#include "sync/futex.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace cachecomm::detail {

// Not FUTEX_PRIVATE_FLAG: the word lives in memory mapped by several processes.
void futex_wait(const std::uint32_t* word, std::uint32_t expected, long timeout_ns) noexcept {
  timespec timeout{timeout_ns / 1'000'000'000L, timeout_ns % 1'000'000'000L};
  ::syscall(SYS_futex, word, FUTEX_WAIT, expected, &timeout, nullptr, 0);
}

void futex_wake_all(const std::uint32_t* word) noexcept {
  ::syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace cachecomm::detail
