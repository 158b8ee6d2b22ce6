// Finds shared-memory segments and descriptors the library left behind.
#pragma once

#include <set>
#include <string>

namespace cachecomm::testing {

/// Names of /dev/shm entries that look like ours.
[[nodiscard]] std::set<std::string> cachecomm_segments();
/// Open descriptors of this process that point at one of our segments.
[[nodiscard]] int open_segment_descriptors();
/// Mappings of this process of one of our segments (names are unlinked at once, so a segment that
/// was never unmapped shows only here, as a "(deleted)" line of /proc/self/maps).
[[nodiscard]] int mapped_segment_regions();
/// Entries in `after` but not in `before` that are still there after a short grace period
/// (segments of concurrently running jobs are named only while they are being created).
[[nodiscard]] std::set<std::string> leaked_segments(const std::set<std::string>& before);

}  // namespace cachecomm::testing
