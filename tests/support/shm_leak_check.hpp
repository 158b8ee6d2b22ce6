// Finds shared-memory segments and descriptors the library left behind.
#pragma once

#include <set>
#include <string>

namespace cachecomm::testing {

/// True when a /proc/self/fd link target or a /proc/self/maps line refers to one of our segments:
/// a memfd ("/memfd:cachecomm-segment (deleted)") or a /dev/shm object of the fallback path.
[[nodiscard]] bool names_a_segment(const std::string& text);
/// Names of /dev/shm entries that look like ours.
[[nodiscard]] std::set<std::string> cachecomm_segments();
/// Open descriptors of this process that point at one of our segments.
[[nodiscard]] int open_segment_descriptors();
/// Mappings of this process of one of our segments (segments have no name, or lose it at once, so
/// a segment that was never unmapped shows only here, as a "(deleted)" line of /proc/self/maps).
[[nodiscard]] int mapped_segment_regions();
/// Entries in `after` but not in `before` that are still there after a short grace period
/// (segments of concurrently running jobs are named only while they are being created).
[[nodiscard]] std::set<std::string> leaked_segments(const std::set<std::string>& before);

}  // namespace cachecomm::testing
