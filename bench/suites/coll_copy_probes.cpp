// The seed's memory-subsystem probes beyond one cache line: every reader copying the same larger
// block from the root at once (fig. 4), and neighbour patterns (fig. 3) where rank i copies from
// (i+1) mod P, from (i+2) mod P, or within interleaved groups of four.
#include <mpi.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "coll/barrier.hpp"
#include "core/comm_impl.hpp"
#include "shm/segment.hpp"
#include "suites/coll_ops.hpp"

namespace cachecomm::bench {

namespace {

/// Whom node rank `rank` copies from under `pattern`.
int source_of(const std::string& pattern, int rank, int size) {
  if (pattern == "same-block") return 0;
  if (pattern == "next") return (rank + 1) % size;
  if (pattern == "next-but-one") return (rank + 2) % size;
  // Groups of four, interleaved: rank i pairs with the member two places on within its group.
  const int group = rank / 4 * 4;
  const int members = std::min(4, size - group);
  return group + (rank - group + 2) % members;
}

void run_copy_probes(coll_context& context) {
  auto& impl = context.comm.impl();
  const int size = impl.topology().node_size;
  const int rank = impl.topology().node_rank;
  const std::vector<std::size_t> blocks = context.options.quick
                                              ? std::vector<std::size_t>{4096}
                                              : std::vector<std::size_t>{64, 4096, 65536};
  const int accesses = context.options.quick ? 20 : 300;
  for (std::size_t block : blocks) {
    detail::shm_segment segment(impl.node(), block * static_cast<std::size_t>(size));
    auto* blocks_base = static_cast<std::byte*>(segment.data());
    std::vector<std::byte> copy(block);
    for (const char* pattern : {"same-block", "next", "next-but-one", "groups-of-4"}) {
      std::vector<double> samples_us;
      for (int access = 0; access < accesses; ++access) {
        // Each rank rewrites its own block, so every copy below is a transfer from another cache.
        std::memset(blocks_base + static_cast<std::size_t>(rank) * block, access & 0xFF, block);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        cachecomm::detail::node_aware_barrier(impl);
        const int source = source_of(pattern, rank, size);
        double elapsed = 0;
        if (source != rank) {
          const double start = now_seconds();
          std::memcpy(copy.data(), blocks_base + static_cast<std::size_t>(source) * block, block);
          std::atomic_signal_fence(std::memory_order_seq_cst);
          elapsed = now_seconds() - start;
        }
        double slowest = 0;
        MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, impl.node());
        samples_us.push_back(slowest * 1e6);
        cachecomm::detail::node_aware_barrier(impl);  // nobody rewrites a block still being read
      }
      const auto times = summarize(samples_us);
      const double seconds = times.median * 1e-6;
      context.results.add(
          {{"op", "copy-probe"},
           {"impl", "probe"},
           {"algorithm", pattern},
           {"bytes", block},
           {"ranks", size},
           {"iters", accesses},
           {"gbps", seconds > 0 ? static_cast<double>(block) / seconds * 1e-9 : 0.0}},
          times);
    }
  }
}

const coll_op_registration copy_probe_registration{
    {"copy-probe",
     "seed fig. 3/4: all ranks copy one block from the root at once; neighbour copies (i+1, i+2, "
     "groups of 4)",
     run_copy_probes,
     {"algorithm", "bytes", "ranks", "median_us", "p25_us", "p75_us", "gbps"}}};

}  // namespace

}  // namespace cachecomm::bench
