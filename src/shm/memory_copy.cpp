#include "shm/memory_copy.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cachecomm::detail {

void copy_by_vectors(void* to, const void* from, std::size_t bytes) {
  auto* out = static_cast<unsigned char*>(to);
  const auto* in = static_cast<const unsigned char*>(from);
#if defined(__AVX2__)
  using vector = __m256i;
  auto load = [](const unsigned char* p) {
    return _mm256_loadu_si256(reinterpret_cast<const vector*>(p));
  };
  auto store = [](unsigned char* p, vector v) {
    _mm256_storeu_si256(reinterpret_cast<vector*>(p), v);
  };
#elif defined(__SSE2__)
  using vector = __m128i;
  auto load = [](const unsigned char* p) {
    return _mm_loadu_si128(reinterpret_cast<const vector*>(p));
  };
  auto store = [](unsigned char* p, vector v) {
    _mm_storeu_si128(reinterpret_cast<vector*>(p), v);
  };
#endif
#if defined(__AVX2__) || defined(__SSE2__)
  // Four loads before four stores: the stores of one block never wait on its own loads.
  constexpr std::size_t width = sizeof(vector);
  while (bytes >= 4 * width) {
    const vector a = load(in);
    const vector b = load(in + width);
    const vector c = load(in + 2 * width);
    const vector d = load(in + 3 * width);
    store(out, a);
    store(out + width, b);
    store(out + 2 * width, c);
    store(out + 3 * width, d);
    in += 4 * width;
    out += 4 * width;
    bytes -= 4 * width;
  }
#endif
  std::memcpy(out, in, bytes);  // the tail: below glibc's `rep movsb` sizes
}

}  // namespace cachecomm::detail
