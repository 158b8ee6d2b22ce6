#include "coll/shared_copy.hpp"
#include "shm/memory_copy.hpp"

#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace cachecomm::detail {

bool cpu_is_amd() {
  static const bool amd = [] {
    unsigned int highest = 0;
    unsigned int vendor[3] = {0, 0, 0};
    if (__get_cpuid(0, &highest, &vendor[0], &vendor[2], &vendor[1]) == 0) return false;
    char name[13] = {};
    copy_memory(name, vendor, sizeof vendor);
    return std::strcmp(name, "AuthenticAMD") == 0;
  }();
  return amd;
}

bool store_modes_adapt_by_default() {
  return cpu_is_amd();
}

void stream_to_shared(void* destination, const void* source, std::size_t bytes) {
  auto* out = static_cast<std::byte*>(destination);
  const auto* in = static_cast<const std::byte*>(source);
  // Streaming stores need an aligned destination: the head up to the next line goes by memcpy.
  const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(out) % 64;
  const std::size_t head = std::min(bytes, misalignment == 0 ? 0 : 64 - misalignment);
  copy_memory(out, in, head);
  std::size_t done = head;
  for (; done + 64 <= bytes; done += 64) {
#if defined(__AVX512F__)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + done),
                        _mm512_loadu_si512(reinterpret_cast<const void*>(in + done)));
#elif defined(__AVX__)
    const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + done));
    const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + done + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(out + done), low);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(out + done + 32), high);
#else
    for (std::size_t part = 0; part < 64; part += 16) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(out + done + part),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + done + part)));
    }
#endif
  }
  copy_memory(out + done, in + done, bytes - done);
}

void copy_to_shared(void* destination, const void* source, std::size_t bytes, bool streaming) {
  if (!streaming || bytes < streaming_copy_min_bytes) {
    copy_memory(destination, source, bytes);
    return;
  }
  stream_to_shared(destination, source, bytes);
  // Streaming stores are weakly ordered: they must be visible before the flag that publishes them.
  _mm_sfence();
}

}  // namespace cachecomm::detail
