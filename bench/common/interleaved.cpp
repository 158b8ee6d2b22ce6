#include "common/interleaved.hpp"

namespace cachecomm::bench {

std::vector<summary> measure_interleaved(MPI_Comm comm, const std::vector<candidate>& candidates,
                                         const timing_plan& plan) {
  std::vector<std::vector<double>> samples(candidates.size());
  long iteration = 0;
  for (const auto& entry : candidates) {
    for (int warm = 0; warm < plan.warmup_iterations; ++warm) {
      if (entry.prepare) entry.prepare(iteration);
      entry.operation();
      ++iteration;
    }
  }
  for (int batch = 0; batch < plan.batches; ++batch) {
    for (std::size_t index = 0; index < candidates.size(); ++index) {
      const auto& entry = candidates[index];
      MPI_Barrier(comm);
      double busy = 0;
      if (entry.prepare) {
        for (int i = 0; i < plan.iterations_per_batch; ++i, ++iteration) {
          entry.prepare(iteration);
          double start = now_seconds();
          entry.operation();
          busy += now_seconds() - start;
        }
      } else {
        double start = now_seconds();
        for (int i = 0; i < plan.iterations_per_batch; ++i) entry.operation();
        busy = now_seconds() - start;
      }
      double slowest = busy;
      MPI_Allreduce(&busy, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
      samples[index].push_back(slowest * 1e6 / plan.iterations_per_batch);
    }
  }
  std::vector<summary> summaries;
  summaries.reserve(candidates.size());
  for (auto& series : samples) summaries.push_back(summarize(std::move(series)));
  return summaries;
}

}  // namespace cachecomm::bench
