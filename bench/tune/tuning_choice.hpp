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

/// The table of `key` from the rows of `cachecomm-bench coll` ops (barrier, bcast, reduce,
/// allreduce, allgather; per-call timing). Rows of the automatic choice ("auto:...") are left out:
/// they are the rules being tuned, not a candidate.
[[nodiscard]] detail::tuning_table table_from_rows(const json& rows, const detail::tuning_key& key,
                                                   const std::string& created);

}  // namespace cachecomm::bench
