// STREAM (McCalpin) kernels with OpenMP, validated as STREAM validates: the reference every
// in-memory bandwidth figure is a fraction of.
#pragma once

#include <string>
#include <vector>

namespace cachecomm::bench {

struct stream_result {
  std::string kernel;    ///< copy, scale, add, triad
  double best_gbps = 0;  ///< best of the repetitions (STREAM reports the best)
  double median_gbps = 0;
  std::size_t bytes_per_iteration = 0;  ///< bytes STREAM counts as moved per pass
};

struct stream_options {
  std::size_t elements = 20'000'000;  ///< per array; STREAM wants 4x the last-level cache
  int repetitions = 10;
  int threads = 0;  ///< 0: OpenMP's default
};

/// Runs copy, scale, add and triad; throws cachecomm::error if the final values fail validation.
[[nodiscard]] std::vector<stream_result> run_stream(const stream_options& options);

}  // namespace cachecomm::bench
