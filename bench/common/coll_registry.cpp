// The collective operations of `cachecomm-bench coll` (each suites/coll_*.cpp registers its own);
// cachecomm-tune runs the same ones. Also what they share before timing.
#include "cachecomm/collectives.hpp"
#include "suites/coll_ops.hpp"

namespace cachecomm::bench {

namespace {
std::vector<coll_op>& registered() {
  static std::vector<coll_op> all;
  return all;
}
}  // namespace

void register_coll_op(coll_op op) {
  registered().push_back(std::move(op));
}
const std::vector<coll_op>& coll_ops() {
  return registered();
}

config settling_settings() {
  config settings = config::from_environment();
  if (!settings.is_explicit("CACHECOMM_ONLINE_BUDGET"))
    settings.set("CACHECOMM_ONLINE_BUDGET", "0");
  return settings;
}

void settle_automatic(comm& c, const std::vector<candidate>& candidates) {
  for (const candidate& entry : candidates) {
    if (entry.algorithm != "auto") continue;
    for (int call = 0; call < online_selection_trial_calls; ++call) {
      c.barrier();
      entry.operation();
    }
  }
}

}  // namespace cachecomm::bench
