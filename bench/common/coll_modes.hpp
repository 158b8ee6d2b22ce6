// What the data collectives of `cachecomm-bench coll` share: the buffer and timing modes, the
// plan per message size, and the rows each mode writes.
// - cold, per-call: inputs rewritten before every call (untimed), so neither side is flattered by
//   data the previous call left in its cache;
// - hot, per-call: the same buffers every call, as OSU, IMB and iterative codes use them;
// - hot, back-to-back: a batch of calls timed as a whole (consecutive calls may overlap, as in a
//   solver's loop). Cold buffers cannot be back to back: the rewrite sits between the calls.
// Per call, ranks are aligned (cachecomm barrier, untimed) before each call, as OSU's barrier after
// each call does; the EPCC reference (the same preparation, an empty operation) measures what a
// sample holds besides the call, and vs_mpi compares medians less it.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "common/interleaved.hpp"
#include "common/report.hpp"
#include "suites/coll_ops.hpp"

namespace cachecomm::bench {

/// Large messages get fewer calls per sample, so a full run stays short.
[[nodiscard]] timing_plan plan_for_size(const timing_plan& base, std::size_t bytes);

/// Writes one element per cache line (and the last), so the next call reads fresh lines. Doubles
/// get small whole values (no denormals to slow a reduction down).
template <typename T>
void scribble(std::span<T> buffer, long iteration, int rank) {
  T value{};
  if constexpr (std::is_same_v<T, std::byte>)
    value = static_cast<std::byte>(iteration + rank);
  else
    value = static_cast<T>(iteration % 1000) + static_cast<T>(0.25 * rank);
  constexpr std::size_t per_line = 64 / sizeof(T);
  for (std::size_t i = 0; i < buffer.size(); i += per_line) buffer[i] = value;
  if (!buffer.empty()) buffer.back() = value;
}

struct timing_mode {
  const char* buffers;  ///< "hot" or "cold"
  const char* timing;   ///< "per-call" or "back-to-back"
  [[nodiscard]] bool cold() const;
  [[nodiscard]] bool per_call() const;
};

/// The modes the context asks for, cold per-call first.
[[nodiscard]] std::vector<timing_mode> modes_of(const coll_context& context);

/// What every row of one operation and size says besides its times.
struct mode_rows {
  const char* op;
  std::size_t bytes;
  std::string chosen;  ///< the automatic choice: a candidate named "auto" is shown "auto:<chosen>"
  json extra = json::object();  ///< fields added to every row
};

/// Times `candidates` (MPI's own call first: vs_mpi divides by it) in every mode of `modes`, and
/// adds one row per candidate and mode. Per call, `rewrite(iteration)` runs before each call in
/// cold mode, then a barrier aligns the ranks; back to back nothing runs between the calls.
void measure_modes(coll_context& context, std::vector<candidate>& candidates,
                   const std::vector<timing_mode>& modes, const std::function<void(long)>& rewrite,
                   const mode_rows& rows);

/// The columns a data collective's table shows.
[[nodiscard]] const std::vector<std::string>& mode_columns();

}  // namespace cachecomm::bench
