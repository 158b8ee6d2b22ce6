#include "p2p/copy.hpp"
#include "shm/memory_copy.hpp"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace cachecomm::detail {

void copy_bytes(void* target, const void* source, std::size_t bytes, bool nontemporal) {
#if defined(__AVX2__)
  if (nontemporal && bytes >= 4096) {
    auto* out = static_cast<std::byte*>(target);
    const auto* in = static_cast<const std::byte*>(source);
    // Align the stores to a cache line; loads may stay unaligned.
    std::size_t head = (64 - reinterpret_cast<std::uintptr_t>(out) % 64) % 64;
    copy_memory(out, in, head);
    out += head;
    in += head;
    bytes -= head;
    std::size_t lines = bytes / 64;
    for (std::size_t line = 0; line < lines; ++line) {
      __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
      __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 32));
      _mm256_stream_si256(reinterpret_cast<__m256i*>(out), low);
      _mm256_stream_si256(reinterpret_cast<__m256i*>(out + 32), high);
      in += 64;
      out += 64;
    }
    copy_memory(out, in, bytes % 64);
    _mm_sfence();  // streaming stores are weakly ordered: drain them before any flag is published
    return;
  }
#endif
  (void)nontemporal;
  if (bytes != 0) copy_memory(target, source, bytes);
}

}  // namespace cachecomm::detail
