// Copies into the collectives' shared buffers.
#pragma once

#include <cstddef>

namespace cachecomm::detail {

/// Copies `bytes` into shared memory that other ranks read after this rank publishes it; with
/// `streaming`, by non-temporal stores from `streaming_copy_min_bytes` on. A shared buffer is
/// rewritten while the ranks that read it last still hold its lines in their caches; an ordinary
/// store must first take each line from them (one invalidation round trip per line, few in flight),
/// which on a 2-core AMD EPYC VM held a copy into such lines to 2.2-2.5 GB/s, against 24-40 GB/s
/// with streaming stores, which invalidate without waiting. The readers then read from memory (9-12
/// GB/s there, about what reading from the writer's cache gave). The streaming path ends with a
/// store fence, so a release store after it publishes the data.
void copy_to_shared(void* destination, const void* source, std::size_t bytes, bool streaming);

/// Streaming stores of any size, without the closing store fence: for a writer that streams many
/// pieces (each straight after computing it, while it is in L1) and fences once before publishing.
void stream_to_shared(void* destination, const void* source, std::size_t bytes);

/// Whether the CPU is an AMD one (CPUID's vendor: a few built-in rules were measured only on the
/// AMD EPYC VM). Read once: CPUID traps to the hypervisor in a VM.
[[nodiscard]] bool cpu_is_amd();

/// CACHECOMM_STREAMING_STORES=auto (when not oversubscribed): whether gather-reduce's allreduce
/// staging measures streaming against ordinary stores per call (store_mode.hpp). AMD, where the
/// faster of the two changed with the vCPU placement; not Intel, where a Sapphire Rapids VM took
/// lines the other core held at ~22 GB/s and readers would lose its cache-to-cache reads. Every
/// other copy uses ordinary stores unless CACHECOMM_STREAMING_STORES=1.
[[nodiscard]] bool store_modes_adapt_by_default();

/// Below this size the copy is an ordinary memcpy (a few lines: the latency of the invalidations
/// overlaps, and the readers find the data in the writer's cache). At 8 KiB that was still the
/// faster copy on the EPYC VM: a double-buffer broadcast at 2 ranks took 0.67-0.75 us per call
/// with ordinary stores against 1.02-1.17 with streaming ones (OSU, 4 interleaved rounds); at 16
/// KiB streaming won (1.5-1.7 against 2.0-2.5).
inline constexpr std::size_t streaming_copy_min_bytes = 16384;

}  // namespace cachecomm::detail
