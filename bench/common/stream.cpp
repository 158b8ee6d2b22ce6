#include "common/stream.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "cachecomm/error.hpp"
#include "common/statistics.hpp"

namespace cachecomm::bench {

namespace {
// Arrays touched first by the threads that use them (first-touch page placement).
struct aligned_free {
  void operator()(double* pointer) const { std::free(pointer); }
};
using array = std::unique_ptr<double[], aligned_free>;
array allocate(std::size_t elements) {
  void* memory = std::aligned_alloc(64, (elements * sizeof(double) + 63) / 64 * 64);
  if (memory == nullptr) throw cachecomm::error("STREAM: cannot allocate its arrays");
  return array(static_cast<double*>(memory));
}
}  // namespace

std::vector<stream_result> run_stream(const stream_options& options) {
  const std::size_t n = options.elements;
  if (n == 0 || options.repetitions < 1)
    throw cachecomm::invalid_argument("STREAM: elements and repetitions must be positive");
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  array a = allocate(n), b = allocate(n), c = allocate(n);
  const double scalar = 3.0;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::size_t j = 0; j < n; ++j) {
    a[j] = 1.0;
    b[j] = 2.0;
    c[j] = 0.0;
  }
  std::vector<std::vector<double>> seconds(4);
  for (int k = 0; k < options.repetitions; ++k) {
    double start = now_seconds();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t j = 0; j < n; ++j) c[j] = a[j];
    seconds[0].push_back(now_seconds() - start);
    start = now_seconds();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t j = 0; j < n; ++j) b[j] = scalar * c[j];
    seconds[1].push_back(now_seconds() - start);
    start = now_seconds();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t j = 0; j < n; ++j) c[j] = a[j] + b[j];
    seconds[2].push_back(now_seconds() - start);
    start = now_seconds();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t j = 0; j < n; ++j) a[j] = b[j] + scalar * c[j];
    seconds[3].push_back(now_seconds() - start);
  }
  // Validation as in stream.c: replay the recurrence on scalars and compare average values.
  double expected_a = 1.0, expected_b = 2.0, expected_c = 0.0;
  for (int k = 0; k < options.repetitions; ++k) {
    expected_c = expected_a;
    expected_b = scalar * expected_c;
    expected_c = expected_a + expected_b;
    expected_a = expected_b + scalar * expected_c;
  }
  double error_a = 0, error_b = 0, error_c = 0;
  for (std::size_t j = 0; j < n; ++j) {
    error_a += std::abs(a[j] - expected_a);
    error_b += std::abs(b[j] - expected_b);
    error_c += std::abs(c[j] - expected_c);
  }
  const double epsilon = 1e-13;
  const auto count = static_cast<double>(n);
  if (error_a / count / std::abs(expected_a) > epsilon ||
      error_b / count / std::abs(expected_b) > epsilon ||
      error_c / count / std::abs(expected_c) > epsilon) {
    throw cachecomm::error("STREAM: validation failed (results differ from the expected values)");
  }
  const char* names[4] = {"copy", "scale", "add", "triad"};
  const std::size_t words[4] = {2, 2, 3, 3};
  std::vector<stream_result> results;
  for (int kernel = 0; kernel < 4; ++kernel) {
    stream_result result;
    result.kernel = names[kernel];
    result.bytes_per_iteration = words[kernel] * sizeof(double) * n;
    auto& times = seconds[static_cast<std::size_t>(kernel)];
    if (times.size() > 1) times.erase(times.begin());  // STREAM skips the first pass
    const double bytes = static_cast<double>(result.bytes_per_iteration);
    result.best_gbps = bytes / *std::min_element(times.begin(), times.end()) / 1e9;
    result.median_gbps = bytes / summarize(times).median / 1e9;
    results.push_back(result);
  }
  return results;
}

}  // namespace cachecomm::bench
