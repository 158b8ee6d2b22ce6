#include "common/coll_modes.hpp"

#include <algorithm>
#include <string_view>

namespace cachecomm::bench {

timing_plan plan_for_size(const timing_plan& base, std::size_t bytes) {
  timing_plan plan = base;
  const std::size_t scale = std::max<std::size_t>(1, bytes / 8192);
  plan.iterations_per_batch =
      std::max(2, static_cast<int>(static_cast<std::size_t>(base.iterations_per_batch) / scale));
  plan.warmup_iterations = std::max(2, std::min(base.warmup_iterations, plan.iterations_per_batch));
  return plan;
}

bool timing_mode::cold() const {
  return std::string_view(buffers) == "cold";
}
bool timing_mode::per_call() const {
  return std::string_view(timing) == "per-call";
}

std::vector<timing_mode> modes_of(const coll_context& context) {
  auto wanted = [](const std::vector<std::string>& list, const char* name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  std::vector<timing_mode> modes;
  const bool per_call = wanted(context.timings, "per-call");
  if (wanted(context.buffers, "cold") && per_call) modes.push_back({"cold", "per-call"});
  if (wanted(context.buffers, "hot")) {
    if (per_call) modes.push_back({"hot", "per-call"});
    if (wanted(context.timings, "back-to-back")) modes.push_back({"hot", "back-to-back"});
  }
  return modes;
}

void measure_modes(coll_context& context, std::vector<candidate>& candidates,
                   const std::vector<timing_mode>& modes, const std::function<void(long)>& rewrite,
                   const mode_rows& rows) {
  comm& c = context.comm;
  const timing_plan plan = plan_for_size(context.plan, rows.bytes);
  for (const timing_mode& mode : modes) {
    std::function<void(long)> prepare;  // empty: back to back
    if (mode.per_call()) {
      const bool cold = mode.cold();
      prepare = [&c, &rewrite, cold](long iteration) {
        if (cold && rewrite) rewrite(iteration);
        c.barrier();
      };
    }
    for (auto& entry : candidates) entry.prepare = prepare;
    const referenced_times measured =
        measure_interleaved_with_reference(c.mpi_comm(), candidates, plan);
    const auto& times = measured.candidates;
    const double overhead = measured.reference.median;
    const double mpi_median = times.front().median;
    const double mpi_corrected = measured.corrected_median(0);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const double corrected = measured.corrected_median(i);
      // Bandwidth from the operation's own time (the raw one when the correction leaves nothing).
      const double seconds = (corrected > 0 ? corrected : times[i].median) * 1e-6;
      std::string algorithm = candidates[i].algorithm;
      if (algorithm == "auto") algorithm = "auto:" + rows.chosen;
      json row = {{"op", rows.op},
                  {"impl", candidates[i].impl},
                  {"algorithm", algorithm},
                  {"bytes", rows.bytes},
                  {"buffers", mode.buffers},
                  {"timing", mode.timing},
                  {"iters", plan.batches * plan.iterations_per_batch},
                  {"gbps", seconds > 0 ? static_cast<double>(rows.bytes) / seconds * 1e-9 : 0.0},
                  {"overhead_us", overhead},
                  {"corrected_median_us", corrected},
                  {"vs_mpi", mpi_corrected > 0 ? corrected / mpi_corrected : 0.0},
                  {"vs_mpi_raw", mpi_median > 0 ? times[i].median / mpi_median : 0.0}};
      for (const auto& [key, value] : rows.extra.items()) row[key] = value;
      context.results.add(row, times[i]);
    }
  }
}

const std::vector<std::string>& mode_columns() {
  static const std::vector<std::string> columns = {
      "buffers",   "timing",    "impl",        "algorithm",           "bytes",
      "median_us", "p25_us",    "overhead_us", "corrected_median_us", "gbps",
      "vs_mpi",    "vs_mpi_raw"};
  return columns;
}

}  // namespace cachecomm::bench
