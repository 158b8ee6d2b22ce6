#include "common/interleaved.hpp"

#include <algorithm>

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

double referenced_times::corrected_median(std::size_t index) const {
  return std::max(0.0, candidates.at(index).median - reference.median);
}

referenced_times measure_interleaved_with_reference(MPI_Comm comm,
                                                    std::vector<candidate> candidates,
                                                    const timing_plan& plan) {
  // The reference runs last in each round, with the first candidate's prepare (they all share it).
  std::function<void(long)> prepare =
      candidates.empty() ? std::function<void(long)>{} : candidates.front().prepare;
  candidates.push_back({"reference", "empty", [] {}, std::move(prepare)});
  std::vector<summary> times = measure_interleaved(comm, candidates, plan);
  referenced_times result;
  result.reference = times.back();
  times.pop_back();
  result.candidates = std::move(times);
  return result;
}

}  // namespace cachecomm::bench
