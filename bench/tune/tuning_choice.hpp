// From the benchmark's rows of one tuning run to the tuning file's table: per operation and size,
// the medians of every candidate (hot and cold) and the choice.
#pragma once

#include <string>

#include "coll/tuning_table.hpp"
#include "common/report.hpp"

namespace cachecomm::bench {

/// The candidate to choose from one size's medians: the one whose worse ratio to the fastest
/// candidate of each buffer mode (hot, cold) is smallest, so that neither mode is given away.
/// Modes without times are skipped. Empty when no candidate has a time in every mode.
[[nodiscard]] std::string robust_choice(const detail::tuning_entry& entry);

/// The built-in rules' candidate where it is within `tolerance` of the robust choice (the same
/// measure), else the robust choice: timing noise alone does not move a file away from the rules.
/// Oversubscribed runs are far noisier (the scheduler decides who runs): a wider margin.
inline constexpr double keep_built_in_tolerance = 1.05;
inline constexpr double keep_built_in_tolerance_oversubscribed = 1.25;
[[nodiscard]] std::string choice_keeping_built_in(const detail::tuning_entry& entry,
                                                  const std::string& built_in, double tolerance);

/// The system MPI's call replaces cachecomm's fastest algorithm only where it is faster by more
/// than this factor (the same measure as robust_choice). The tuner times MPI's call warm, in a loop
/// of its own, while a program meets it cold wherever cachecomm serves the smaller sizes of the
/// operation: Intel MPI 2021 runs the first ~550 calls of an operation 2-3x slower, and a tuning
/// file that chose its allgather at 64-512 KiB (10-20 % faster than central, warm) ran OSU's
/// allgather of 16-128 KiB at 0.44-0.66x plain Intel MPI, preloaded (session 26). Its reductions
/// also give up the rank-order bits for the margin.
inline constexpr double system_mpi_margin = 1.25;
/// `chosen`, or cachecomm's fastest algorithm where `chosen` is the system MPI's call and not
/// faster than it by more than `margin`.
[[nodiscard]] std::string choice_preferring_own(const detail::tuning_entry& entry,
                                                const std::string& chosen, double margin);

/// The table of `key` from the rows of `cachecomm-bench coll` ops (barrier, bcast, reduce,
/// allreduce, allgather; per-call timing). Rows of the automatic choice ("auto:...") are left out:
/// they are the rules being tuned, not a candidate.
[[nodiscard]] detail::tuning_table table_from_rows(const json& rows, const detail::tuning_key& key,
                                                   const std::string& created);

}  // namespace cachecomm::bench
