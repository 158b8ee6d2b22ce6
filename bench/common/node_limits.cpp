#include "common/node_limits.hpp"

#include <immintrin.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "p2p/copy.hpp"
#include "shm/cache_line.hpp"
#include "shm/segment.hpp"

namespace cachecomm::bench {

summary time_memcpy(std::size_t bytes, int repetitions, bool nontemporal) {
  std::vector<std::byte> source(bytes + 64, std::byte{1});
  std::vector<std::byte> target(bytes + 64, std::byte{0});
  // Enough copies per sample that the clock's resolution does not matter.
  const int inner =
      static_cast<int>(std::max<std::size_t>(1, (1U << 20) / std::max<std::size_t>(bytes, 1)));
  std::vector<double> samples;
  for (int warm = 0; warm < 2; ++warm)
    detail::copy_bytes(target.data(), source.data(), bytes, nontemporal);
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    double start = now_seconds();
    for (int copy = 0; copy < inner; ++copy) {
      detail::copy_bytes(target.data(), source.data(), bytes, nontemporal);
      asm volatile("" : : "r"(target.data()) : "memory");
    }
    samples.push_back((now_seconds() - start) * 1e6 / inner);
  }
  return summarize(std::move(samples));
}

double memcpy_limit_gbps(std::size_t bytes, int repetitions) {
  if (bytes == 0) return 0;
  double plain = time_memcpy(bytes, repetitions, false).median;
  double streaming = bytes >= 4096 ? time_memcpy(bytes, repetitions, true).median : plain;
  return static_cast<double>(bytes) / (std::min(plain, streaming) * 1e3);
}

summary time_cache_line_pingpong(MPI_Comm comm, int first, int second, bool one_line,
                                 int round_trips, int batches) {
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Both ranks must share memory: split by node, and only proceed if they landed together.
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  std::vector<double> samples;
  {
    detail::shm_segment segment(node, 2 * detail::cache_line_size);
    auto* lines = segment.at<detail::padded_flag>(0, 2);
    std::atomic<std::uint32_t>& mine = lines[one_line ? 0 : (rank == first ? 0 : 1)].value;
    std::atomic<std::uint32_t>& theirs = lines[one_line ? 0 : (rank == first ? 1 : 0)].value;
    if (rank == first || rank == second) {
      mine.store(0);
    }
    MPI_Barrier(comm);
    std::uint32_t value = 0;
    const bool starter = rank == first;
    auto exchange = [&] {
      // first writes odd values, second answers with the next even one
      if (starter) {
        mine.store(value + 1, std::memory_order_release);
        while (theirs.load(std::memory_order_acquire) != value + 2) _mm_pause();
      } else {
        while (theirs.load(std::memory_order_acquire) != value + 1) _mm_pause();
        mine.store(value + 2, std::memory_order_release);
      }
      value += 2;
    };
    for (int batch = -1; batch < batches; ++batch) {
      MPI_Barrier(comm);
      double start = now_seconds();
      if (rank == first || rank == second) {
        for (int trip = 0; trip < round_trips; ++trip) exchange();
      }
      double elapsed = now_seconds() - start;
      double slowest = 0;
      MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
      if (batch >= 0) samples.push_back(slowest * 1e6 / round_trips / 2);
    }
    MPI_Barrier(comm);
  }
  MPI_Comm_free(&node);
  return summarize(std::move(samples));
}

}  // namespace cachecomm::bench
