#include "tune/tuning_choice.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace cachecomm::bench {

namespace {

using times = std::vector<std::pair<std::string, double>>;

double fastest(const times& modes) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [name, microseconds] : modes) best = std::min(best, microseconds);
  return best;
}

const double* time_of(const times& modes, const std::string& name) {
  for (const auto& [candidate, microseconds] : modes) {
    if (candidate == name) return &microseconds;
  }
  return nullptr;
}

std::string candidate_of(const json& row) {
  return row.at("impl").get<std::string>() == "mpi" ? "mpi"
                                                    : row.at("algorithm").get<std::string>();
}

/// The candidate's worse ratio to the fastest of each buffer mode (infinite when a mode lacks it).
double worst_ratio(const detail::tuning_entry& entry, const std::string& name) {
  const times* modes[] = {&entry.hot_us, &entry.cold_us};
  double worst = 0;
  for (const times* mode : modes) {
    if (mode->empty()) continue;
    const double* mine = time_of(*mode, name);
    if (mine == nullptr) return std::numeric_limits<double>::infinity();
    const double best = fastest(*mode);
    worst = std::max(worst, best > 0 ? *mine / best : (*mine > 0 ? 2.0 : 1.0));
  }
  return worst;
}

/// The candidate (other than `skip`) whose worse ratio to the fastest of each mode is smallest,
/// and that ratio; empty where none has a time in every mode.
std::pair<std::string, double> most_robust(const detail::tuning_entry& entry,
                                           const std::string& skip = {}) {
  const times& names = entry.hot_us.empty() ? entry.cold_us : entry.hot_us;
  std::pair<std::string, double> chosen{{}, std::numeric_limits<double>::infinity()};
  for (const auto& [name, unused] : names) {
    if (name == skip) continue;
    const double worst = worst_ratio(entry, name);
    if (worst < chosen.second) chosen = {name, worst};
  }
  return chosen;
}

}  // namespace

std::string robust_choice(const detail::tuning_entry& entry) {
  return most_robust(entry).first;
}

std::string choice_keeping_built_in(const detail::tuning_entry& entry, const std::string& built_in,
                                    double tolerance) {
  const std::string chosen = robust_choice(entry);
  if (chosen.empty() || built_in.empty()) return chosen;
  return worst_ratio(entry, built_in) <= tolerance * worst_ratio(entry, chosen) ? built_in : chosen;
}

std::string choice_preferring_own(const detail::tuning_entry& entry, const std::string& chosen,
                                  double margin) {
  if (chosen != "mpi") return chosen;
  const auto [own, own_ratio] = most_robust(entry, "mpi");
  return !own.empty() && own_ratio <= margin * worst_ratio(entry, chosen) ? own : chosen;
}

detail::tuning_table table_from_rows(const json& rows, const detail::tuning_key& key,
                                     const std::string& created) {
  detail::tuning_table table;
  table.key = key;
  table.created = created;
  // op -> bytes -> entry
  std::array<std::map<std::size_t, detail::tuning_entry>, detail::tuned_op_count> measured;
  // op -> bytes -> the built-in rules' candidate (the auto row's, or the barrier's default)
  std::array<std::map<std::size_t, std::string>, detail::tuned_op_count> built_in;
  for (const json& row : rows) {
    const std::string op = row.value("op", "");
    const std::string algorithm = row.value("algorithm", "");
    if (row.value("timing", "per-call") != "per-call") continue;
    std::size_t index = detail::tuned_op_count;
    for (std::size_t i = 0; i < detail::tuned_op_count; ++i) {
      if (op == detail::to_string(static_cast<detail::tuned_op>(i))) index = i;
    }
    if (index == detail::tuned_op_count) continue;
    const auto bytes = row.at("bytes").get<std::size_t>();
    if (algorithm.starts_with("auto:")) {
      built_in[index][bytes] = algorithm.substr(5);
      continue;
    }
    if (row.value("default", false)) built_in[index][bytes] = candidate_of(row);
    detail::tuning_entry& entry = measured[index][bytes];
    entry.bytes = bytes;
    // The barrier has no buffers: its one time counts as hot.
    times& mode = row.value("buffers", "hot") == "cold" ? entry.cold_us : entry.hot_us;
    mode.emplace_back(candidate_of(row), row.at("median_us").get<double>());
  }
  for (std::size_t op = 0; op < detail::tuned_op_count; ++op) {
    for (auto& [bytes, entry] : measured[op]) {
      entry.choice = choice_preferring_own(
          entry,
          choice_keeping_built_in(entry, built_in[op][bytes],
                                  key.oversubscribed ? keep_built_in_tolerance_oversubscribed
                                                     : keep_built_in_tolerance),
          system_mpi_margin);
      if (!entry.choice.empty()) table.entries[op].push_back(std::move(entry));
    }
  }
  return table;
}

}  // namespace cachecomm::bench
