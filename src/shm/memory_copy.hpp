// memcpy for the copies between a program's buffers and shared memory, without glibc's `rep movsb`
// trap. glibc (2.36, Debian 12) copies 4 KiB up to its non-temporal threshold (512 KiB on a 2-core
// AMD EPYC VM) with `rep movsb` where the CPU has ERMS/FSRM, and on that VM (Zen 3) `rep movsb`
// ran at 2.1-3.0 GB/s instead of 34-80 when the destination lay 1-31 bytes past the source modulo
// 4 KiB. That is exactly where a malloc'd buffer (its data 16 bytes into a page) meets page-aligned
// shared memory: a 128 KiB broadcast through the shared region took 79-86 us instead of 7.6, a
// 1 MiB double-buffer broadcast 370-590 us instead of 60 (`cachecomm-bench coll`, 2 ranks).
// There this copies with vector loads and stores (27-40 GB/s at the same distance).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cachecomm::detail {

/// From this size glibc may copy with `rep movsb` (its threshold with AVX2 vectors is 4 KiB).
inline constexpr std::size_t rep_movsb_min_bytes = 4096;

/// Copies with vector loads and stores only (the distance and size are the caller's concern).
void copy_by_vectors(void* to, const void* from, std::size_t bytes);

/// memcpy (the same contract: no overlap), except where glibc's `rep movsb` would hit the short
/// distance modulo a page: there by vectors.
inline void copy_memory(void* to, const void* from, std::size_t bytes) {
  const std::uintptr_t distance =
      (reinterpret_cast<std::uintptr_t>(to) - reinterpret_cast<std::uintptr_t>(from)) & 4095U;
  if (bytes >= rep_movsb_min_bytes && distance != 0 && distance < 64) {
    copy_by_vectors(to, from, bytes);
    return;
  }
  std::memcpy(to, from, bytes);
}

}  // namespace cachecomm::detail
