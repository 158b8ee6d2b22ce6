// `cachecomm-bench coll --op NAME`: each collective operation registers itself here.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cachecomm/comm.hpp"
#include "common/interleaved.hpp"
#include "common/report.hpp"
#include "common/suite.hpp"

namespace cachecomm::bench {

struct coll_context {
  const common_options& options;
  cachecomm::comm& comm;
  report& results;
  timing_plan plan;                ///< batches / iterations chosen by the user (or --quick)
  std::vector<std::size_t> sizes;  ///< message sizes in bytes (ops without sizes ignore it)
  /// Data collectives: which buffer modes ("hot", "cold") and timings ("per-call",
  /// "back-to-back") to measure. Cold buffers are rewritten before every call, so they are
  /// timed per call only.
  std::vector<std::string> buffers = {"hot", "cold"};
  std::vector<std::string> timings = {"per-call", "back-to-back"};
};

struct coll_op {
  std::string name;
  std::string description;
  std::function<void(coll_context&)> run;
  std::vector<std::string> table_columns;  ///< what the table shows for this op
};

/// Calls the candidate named "auto" cachecomm::online_selection_trial_calls times, ranks aligned
/// before each call as in per-call timing, so that online selection has settled the size bucket
/// before anything is timed: its trial calls each run another candidate, and among the samples
/// they made the automatic row slower than the algorithm it settles on. Call it before
/// explain_*(), which then names the settled choice.
void settle_automatic(comm& c, const std::vector<candidate>& candidates);
/// The environment's settings, with online selection's trial unpaced (CACHECOMM_ONLINE_BUDGET=0)
/// unless the environment sets it: settle_automatic's online_selection_trial_calls then settle
/// every bucket, on the choice a paced trial reaches later.
[[nodiscard]] config settling_settings();

void register_coll_op(coll_op op);
[[nodiscard]] const std::vector<coll_op>& coll_ops();

struct coll_op_registration {
  explicit coll_op_registration(coll_op op) { register_coll_op(std::move(op)); }
};

}  // namespace cachecomm::bench
