#include "common/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <numeric>

namespace cachecomm::bench {

namespace {
// Linear interpolation between closest ranks.
double quantile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  double position = fraction * static_cast<double>(sorted.size() - 1);
  auto lower = static_cast<std::size_t>(std::floor(position));
  auto upper = std::min(lower + 1, sorted.size() - 1);
  double weight = position - static_cast<double>(lower);
  return sorted[lower] * (1 - weight) + sorted[upper] * weight;
}
}  // namespace

summary summarize(std::vector<double> samples) {
  summary result;
  if (samples.empty()) return result;
  std::sort(samples.begin(), samples.end());
  result.samples = samples.size();
  result.min = samples.front();
  result.max = samples.back();
  result.median = quantile(samples, 0.5);
  result.p25 = quantile(samples, 0.25);
  result.p75 = quantile(samples, 0.75);
  result.mean =
      std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  return result;
}

double now_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace cachecomm::bench
