// Bulk copies for the channel: plain memcpy, or non-temporal stores for copies far larger than
// the caches (they skip the read-for-ownership of the target and do not evict the ring).
#pragma once

#include <cstddef>

namespace cachecomm::detail {

/// Copies with streaming stores when `nontemporal` (falls back to memcpy for small or odd sizes).
void copy_bytes(void* target, const void* source, std::size_t bytes, bool nontemporal);

}  // namespace cachecomm::detail
