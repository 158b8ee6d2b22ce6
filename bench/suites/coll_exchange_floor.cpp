// The floor of any shared-memory allreduce: every rank only exchanges its input with a partner
// (stages it in pipeline chunks, reads the partner's chunks into a small scratch buffer that stays
// in cache), with no reduction and no output. Each byte of another rank's input must reach a rank
// once, through its cache from the other core, and each rank must write its input once where the
// others can read it, so no allreduce through shared memory can beat this. It runs interleaved with
// MPI_Allreduce and cachecomm's automatic allreduce of the same size, so vs_mpi of the exchange is
// the lowest vs_mpi an allreduce could reach on this node.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "common/coll_modes.hpp"
#include "core/comm_impl.hpp"
#include "shm/cache_line.hpp"
#include "shm/segment.hpp"

namespace cachecomm::bench {

namespace {

/// Rank r stages into its ring and reads the ring of rank r + 1 (its partner at 2 ranks).
class exchange_probe {
 public:
  static constexpr std::size_t chunk = 64U << 10;
  static constexpr std::uint32_t depth = 4;  // chunks in each rank's ring

  explicit exchange_probe(detail::comm_impl& impl)
      : m_impl(impl),
        m_size(impl.topology().node_size),
        m_rank(impl.topology().node_rank),
        m_segment(impl.node(), flags_bytes() + static_cast<std::size_t>(m_size) * depth * chunk),
        m_scratch(chunk) {}

  void exchange(const std::byte* input, std::size_t bytes) {
    if (m_size == 1) return;
    const int source = (m_rank + 1) % m_size;
    const int reader = (m_rank + m_size - 1) % m_size;
    const std::size_t chunks = (bytes + chunk - 1) / chunk;
    const std::uint32_t first = m_sequence + 1;
    auto stage = [&](std::size_t index) {
      const std::uint32_t step = first + static_cast<std::uint32_t>(index);
      if (step > depth) {
        m_impl.wait().wait_reach(flag(m_size + reader), step - depth, reader,
                                 "exchange probe (reader's ring slot)");
      }
      std::memcpy(slot(m_rank, step), input + index * chunk,
                  std::min(chunk, bytes - index * chunk));
      m_impl.wait().publish(flag(m_rank), step);
    };
    // Stage one chunk ahead, so the partner reads chunk i while this rank writes chunk i + 1.
    stage(0);
    for (std::size_t index = 0; index < chunks; ++index) {
      if (index + 1 < chunks) stage(index + 1);
      const std::uint32_t step = first + static_cast<std::uint32_t>(index);
      m_impl.wait().wait_reach(flag(source), step, source, "exchange probe (partner's chunk)");
      std::memcpy(m_scratch.data(), slot(source, step), std::min(chunk, bytes - index * chunk));
      m_impl.wait().publish(flag(m_size + m_rank), step);
    }
    m_sequence = first + static_cast<std::uint32_t>(chunks) - 1;
  }

 private:
  [[nodiscard]] std::size_t flags_bytes() const {
    return detail::round_up(2 * static_cast<std::size_t>(m_size) * detail::cache_line_size, 4096);
  }
  // Lines 0..P-1: the step each rank has staged; lines P..2P-1: the step each rank has read.
  [[nodiscard]] std::atomic<std::uint32_t>& flag(int line) const {
    return *reinterpret_cast<std::atomic<std::uint32_t>*>(m_segment.bytes_at(
        static_cast<std::size_t>(line) * detail::cache_line_size, sizeof(std::uint32_t)));
  }
  [[nodiscard]] std::byte* slot(int rank, std::uint32_t step) const {
    const std::size_t index = static_cast<std::size_t>(rank) * depth + (step - 1) % depth;
    return m_segment.bytes_at(flags_bytes() + index * chunk, chunk);
  }

  detail::comm_impl& m_impl;
  int m_size;
  int m_rank;
  detail::shm_segment m_segment;
  std::vector<std::byte> m_scratch;
  std::uint32_t m_sequence = 0;
};

void run_exchange_floor(coll_context& context) {
  comm& c = context.comm;
  MPI_Comm mpi = c.mpi_comm();
  const int rank = c.rank();
  exchange_probe probe(c.impl());
  for (std::size_t requested : context.sizes) {
    const std::size_t count = std::max<std::size_t>(1, (requested + 7) / 8);
    const std::size_t bytes = count * 8;
    std::vector<double> send(count, 1.0);
    std::vector<double> receive(count, 0.0);
    auto prepare = [&send, rank](long iteration) { scribble(std::span(send), iteration, rank); };
    std::vector<candidate> candidates;
    candidates.push_back({"mpi", "allreduce",
                          [&] {
                            MPI_Allreduce(send.data(), receive.data(), static_cast<int>(count),
                                          MPI_DOUBLE, MPI_SUM, mpi);
                          },
                          prepare});
    candidates.push_back({"cachecomm", "allreduce:" + explain_allreduce(c, bytes).algorithm,
                          [&] {
                            allreduce(c, send.data(), receive.data(), count, datatype::float64,
                                      reduce_op::sum);
                          },
                          prepare});
    candidates.push_back(
        {"probe", "exchange-only",
         [&] { probe.exchange(reinterpret_cast<const std::byte*>(send.data()), bytes); }, prepare});
    timing_plan plan = context.plan;
    plan.iterations_per_batch = std::max(
        2, plan.iterations_per_batch / static_cast<int>(std::max<std::size_t>(1, bytes / 8192)));
    plan.warmup_iterations =
        std::max(2, std::min(plan.warmup_iterations, plan.iterations_per_batch));
    const referenced_times measured = measure_interleaved_with_reference(mpi, candidates, plan);
    const double mpi_corrected = measured.corrected_median(0);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const double corrected = measured.corrected_median(i);
      context.results.add({{"op", "exchange-floor"},
                           {"impl", candidates[i].impl},
                           {"algorithm", candidates[i].algorithm},
                           {"bytes", bytes},
                           {"ranks", c.size()},
                           {"overhead_us", measured.reference.median},
                           {"corrected_median_us", corrected},
                           {"vs_mpi", mpi_corrected > 0 ? corrected / mpi_corrected : 0.0}},
                          measured.candidates[i]);
    }
  }
}

const coll_op_registration exchange_floor_registration{
    {"exchange-floor",
     "lower bound of a shared-memory allreduce: ranks only exchange their inputs through a "
     "pipelined ring (no reduction, no output), beside MPI_Allreduce and cachecomm's allreduce",
     run_exchange_floor,
     {"impl", "algorithm", "bytes", "ranks", "median_us", "corrected_median_us", "vs_mpi"}}};

}  // namespace

}  // namespace cachecomm::bench
