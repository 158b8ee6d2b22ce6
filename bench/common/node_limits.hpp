// Physical references of a node that message bandwidth and latency are fractions of.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "common/statistics.hpp"

namespace cachecomm::bench {

/// Per-copy times (µs) of copying `bytes` between two private buffers; bytes/time is the limit
/// a message of that size can reach through memory. `nontemporal` uses streaming stores.
[[nodiscard]] summary time_memcpy(std::size_t bytes, int repetitions, bool nontemporal = false);

/// Best of plain and non-temporal copies, in 10^9 bytes per second (message bytes per second).
[[nodiscard]] double memcpy_limit_gbps(std::size_t bytes, int repetitions);

/// Half round trip (µs per one-way handoff) of a 32-bit value between ranks `first` and `second`
/// of `comm` through shared memory: `one_line` makes both write the same line, otherwise each
/// writes its own. Collective; ranks other than the two just wait. Raw spinning: a reference.
[[nodiscard]] summary time_cache_line_pingpong(MPI_Comm comm, int first, int second, bool one_line,
                                               int round_trips, int batches);

}  // namespace cachecomm::bench
