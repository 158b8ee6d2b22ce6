#include "common/interleaved.hpp"

#include <algorithm>
#include <numeric>
#include <random>

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
  // Each round runs the candidates in a new order (the same on every rank: a fixed seed), so what a
  // batch leaves behind (an MPI that spun, ranks the scheduler now treats unevenly, lines in
  // another core's cache) falls on every candidate in turn, not always on the one after it. With a
  // fixed order the candidate after MPI's ran up to 1.8x slower than the same algorithm elsewhere
  // in the round (4 ranks on 2 cores), and rotating the order keeps that neighbour.
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 shuffler(20261124U);
  for (int batch = 0; batch < plan.batches; ++batch) {
    std::shuffle(order.begin(), order.end(), shuffler);
    for (const std::size_t index : order) {
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
