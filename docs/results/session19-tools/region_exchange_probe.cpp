// 2-process exchange microbenchmark (session 19): each side copies n bytes into its area of a ring
// of `ring` positions in shared memory, publishes it, and copies the peer's n bytes out; a barrier
// between calls. Variants: glibc/vector/streaming copy-in, prefetching or flushing copy-out, whole
// or in chunks. Build: g++ -O2 -march=native -std=c++20 region_exchange_probe.cpp -o xchg
// Run: ./xchg BYTES ITERATIONS RING_POSITIONS (e.g. ./xchg 32768 2000 64)
#include <immintrin.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr int max_chunks = 64;
constexpr std::size_t max_bytes = 256 << 10;
int ring = 4;
struct alignas(64) flag {
  std::atomic<std::uint64_t> v;
  char pad[56];
};
struct shared_state {
  flag bar[2];
  flag ready[2][max_chunks];
  alignas(4096) char area[2][64][max_bytes];
};

static void nt_copy(void* d, const void* s, std::size_t n) {
  auto* o = static_cast<char*>(d);
  auto* i = static_cast<const char*>(s);
  for (std::size_t k = 0; k < n; k += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(o + k), _mm512_loadu_si512(i + k));
  _mm_sfence();
}
static void vec_copy(void* d, const void* s, std::size_t n) {
  auto* o = static_cast<char*>(d);
  auto* i = static_cast<const char*>(s);
  for (std::size_t k = 0; k < n; k += 256) {
    __m512i a = _mm512_loadu_si512(i + k), b = _mm512_loadu_si512(i + k + 64),
            c = _mm512_loadu_si512(i + k + 128), e = _mm512_loadu_si512(i + k + 192);
    _mm512_storeu_si512(o + k, a);
    _mm512_storeu_si512(o + k + 64, b);
    _mm512_storeu_si512(o + k + 128, c);
    _mm512_storeu_si512(o + k + 192, e);
  }
}
static void pf_copy(void* d, const void* s, std::size_t n) {  // reader with prefetch ahead
  auto* o = static_cast<char*>(d);
  auto* i = static_cast<const char*>(s);
  for (std::size_t k = 0; k < std::min<std::size_t>(n, 2048); k += 64)
    _mm_prefetch(i + k, _MM_HINT_T0);
  for (std::size_t k = 0; k < n; k += 256) {
    for (int p = 0; p < 4; ++p) _mm_prefetch(i + k + 2048 + p * 64, _MM_HINT_T0);
    __m512i a = _mm512_loadu_si512(i + k), b = _mm512_loadu_si512(i + k + 64),
            c = _mm512_loadu_si512(i + k + 128), e = _mm512_loadu_si512(i + k + 192);
    _mm512_storeu_si512(o + k, a);
    _mm512_storeu_si512(o + k + 64, b);
    _mm512_storeu_si512(o + k + 128, c);
    _mm512_storeu_si512(o + k + 192, e);
  }
}
static void flush_copy(void* d, const void* s, std::size_t n) {
  vec_copy(d, s, n);
  auto* i = static_cast<const char*>(s);
  for (std::size_t k = 0; k < n; k += 64) _mm_clflushopt(const_cast<char*>(i + k));
}
static void nta_copy(void* d, const void* s, std::size_t n) {
  auto* o = static_cast<char*>(d);
  auto* i = static_cast<const char*>(s);
  for (std::size_t k = 0; k < std::min<std::size_t>(n, 2048); k += 64)
    _mm_prefetch(i + k, _MM_HINT_NTA);
  for (std::size_t k = 0; k < n; k += 256) {
    for (int p = 0; p < 4; ++p) _mm_prefetch(i + k + 2048 + p * 64, _MM_HINT_NTA);
    __m512i a = _mm512_loadu_si512(i + k), b = _mm512_loadu_si512(i + k + 64),
            c = _mm512_loadu_si512(i + k + 128), e = _mm512_loadu_si512(i + k + 192);
    _mm512_storeu_si512(o + k, a);
    _mm512_storeu_si512(o + k + 64, b);
    _mm512_storeu_si512(o + k + 128, c);
    _mm512_storeu_si512(o + k + 192, e);
  }
}
using copy_fn = void (*)(void*, const void*, std::size_t);
static void libc_copy(void* d, const void* s, std::size_t n) {
  std::memcpy(d, s, n);
}

static void wait_at_least(flag& f, std::uint64_t v) {
  while (f.v.load(std::memory_order_acquire) < v) _mm_pause();
}

int main(int argc, char** argv) {
  std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 0) : 32768;
  int iters = argc > 2 ? std::atoi(argv[2]) : 2000;
  ring = argc > 3 ? std::atoi(argv[3]) : 4;
  auto* st = static_cast<shared_state*>(mmap(nullptr, sizeof(shared_state), PROT_READ | PROT_WRITE,
                                             MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  std::memset(static_cast<void*>(st), 0, sizeof(shared_state));
  pid_t child = fork();
  int me = child == 0 ? 1 : 0, peer = 1 - me;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(me, &set);
  sched_setaffinity(0, sizeof set, &set);
  std::vector<char> src(n + 64), dst(n + 64);
  char* in = src.data() + 16;
  char* out = dst.data() + 16;  // malloc-like offsets
  std::memset(src.data(), me + 1, src.size());
  struct variant {
    const char* name;
    copy_fn cin, cout;
    int chunks;
    bool interleave;
  };
  variant vs[] = {
      {"whole vec/vec", vec_copy, vec_copy, 1, false},
      {"whole nt/vec", nt_copy, vec_copy, 1, false},
      {"whole vec/flush", vec_copy, flush_copy, 1, false},
      {"whole vec/nta", vec_copy, nta_copy, 1, false},
      {"4chunk inter vec/vec", vec_copy, vec_copy, 4, true},
      {"4chunk inter vec/flush", vec_copy, flush_copy, 4, true},
      {"4chunk inter nt/vec", nt_copy, vec_copy, 4, true},
      {"8chunk inter vec/nta", vec_copy, nta_copy, 8, true},
  };
  std::uint64_t epoch = 0;
  auto barrier = [&] {
    ++epoch;
    st->bar[me].v.store(epoch, std::memory_order_release);
    wait_at_least(st->bar[peer], epoch);
  };
  for (int round = 0; round < 1; ++round)
    for (auto& v : vs) {
      std::vector<double> t, tin;
      for (int it = 0; it < iters; ++it) {
        barrier();
        std::uint64_t tag = epoch;
        int pos = it % ring;
        char* mine = st->area[me][pos];
        char* theirs = st->area[peer][pos];
        std::size_t c = n / v.chunks;
        auto t0 = std::chrono::steady_clock::now();
        if (!v.interleave) {
          for (int k = 0; k < v.chunks; ++k) {
            v.cin(mine + k * c, in + k * c, c);
            st->ready[me][k].v.store(tag, std::memory_order_release);
          }
          tin.push_back(
              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                  .count());
          for (int k = 0; k < v.chunks; ++k) {
            wait_at_least(st->ready[peer][k], tag);
            v.cout(out + k * c, theirs + k * c, c);
          }
        } else {
          v.cin(mine, in, c);
          st->ready[me][0].v.store(tag, std::memory_order_release);
          for (int k = 1; k < v.chunks; ++k) {
            v.cin(mine + k * c, in + k * c, c);
            st->ready[me][k].v.store(tag, std::memory_order_release);
            wait_at_least(st->ready[peer][k - 1], tag);
            v.cout(out + (k - 1) * c, theirs + (k - 1) * c, c);
          }
          wait_at_least(st->ready[peer][v.chunks - 1], tag);
          v.cout(out + (v.chunks - 1) * c, theirs + (v.chunks - 1) * c, c);
        }
        auto t1 = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      }
      std::sort(t.begin(), t.end());
      std::sort(tin.begin(), tin.end());
      if (me == 0)
        std::printf("ring%d r%d %-24s n=%zu median %.2f p25 %.2f us copy-in %.2f\n", ring, round,
                    v.name, n, t[t.size() / 2], t[t.size() / 4],
                    tin.empty() ? 0.0 : tin[tin.size() / 2]);
      if (out[n - 1] != static_cast<char>(peer + 1)) {
        std::printf("BAD\n");
        return 1;
      }
    }
  if (child) waitpid(child, nullptr, 0);
}
