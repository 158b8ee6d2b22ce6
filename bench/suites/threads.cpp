// `cachecomm-bench threads`: OpenMP construct overhead by thread count (EPCC syncbench/arraybench
// method: a reference loop of delays, the same delays inside the construct, overhead = difference
// per repetition, with a 95% confidence interval), and an N-body kernel's time by thread count.
#include <omp.h>

#include <array>
#include <cmath>
#include <numeric>
#include <vector>

#include "common/node_suite.hpp"
#include "common/statistics.hpp"

namespace cachecomm::bench {
namespace {

// EPCC's delay: a dependent chain the compiler cannot remove.
[[gnu::noinline]] void delay(int length) {
  volatile double sink = 0;
  double value = 0;
  for (int step = 0; step < length; ++step) value += static_cast<double>(step) * 0.5;
  sink = value;
  (void)sink;
}

template <std::size_t N>
struct payload {
  std::array<double, N> values{};
};

struct overhead_plan {
  int inner = 0;
  int outer = 0;
  int delay_length = 0;
};

// Overhead samples (µs per construct) of `test` against `reference`, each running `inner`
// constructs.
template <typename Test, typename Reference>
std::vector<double> overheads(const overhead_plan& plan, Test&& test, Reference&& reference) {
  std::vector<double> samples;
  test();  // warm the thread pool
  for (int repetition = 0; repetition < plan.outer; ++repetition) {
    double start = now_seconds();
    reference();
    double reference_time = now_seconds() - start;
    start = now_seconds();
    test();
    double test_time = now_seconds() - start;
    samples.push_back((test_time - reference_time) * 1e6 / plan.inner);
  }
  return samples;
}

void add_overhead(node_run& run, const std::string& construct, int threads, std::size_t elements,
                  std::vector<double> samples) {
  const double count = static_cast<double>(samples.size());
  const double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / count;
  double variance = 0;
  for (double value : samples) variance += (value - mean) * (value - mean);
  variance /= std::max(1.0, count - 1);
  summary summary_us = summarize(samples);
  json fields{{"op", "omp_" + construct},
              {"impl", "openmp"},
              {"algorithm", "epcc"},
              {"threads", threads},
              {"bytes", elements * sizeof(double)},
              {"mean_us", mean},
              {"ci95_us", 1.96 * std::sqrt(variance / count)},
              {"iters", samples.size()}};
  if (construct == "firstprivate") fields["array_elements"] = elements;
  run.results.add(std::move(fields), summary_us);
}

template <std::size_t N>
void measure_firstprivate(node_run& run, const overhead_plan& plan, int threads) {
  payload<N> data;
  auto reference = [&] {
    for (int j = 0; j < plan.inner; ++j) delay(plan.delay_length);
  };
  auto test = [&] {
    for (int j = 0; j < plan.inner; ++j) {
#pragma omp parallel firstprivate(data) num_threads(threads)
      {
        delay(plan.delay_length);
        if (data.values[0] < 0) data.values[0] = 1;  // use the copy
      }
    }
  };
  add_overhead(run, "firstprivate", threads, N, overheads(plan, test, reference));
}

void measure_constructs(node_run& run, const overhead_plan& plan, int threads) {
  auto reference = [&] {
    for (int j = 0; j < plan.inner; ++j) delay(plan.delay_length);
  };
  add_overhead(run, "parallel", threads, 0,
               overheads(
                   plan,
                   [&] {
                     for (int j = 0; j < plan.inner; ++j) {
#pragma omp parallel num_threads(threads)
                       delay(plan.delay_length);
                     }
                   },
                   reference));
  add_overhead(run, "barrier", threads, 0,
               overheads(
                   plan,
                   [&] {
#pragma omp parallel num_threads(threads)
                     for (int j = 0; j < plan.inner; ++j) {
                       delay(plan.delay_length);
#pragma omp barrier
                     }
                   },
                   [&] {
                     // Each thread runs the delays in parallel: the reference is one thread's
                     // share.
                     for (int j = 0; j < plan.inner; ++j) delay(plan.delay_length);
                   }));
  add_overhead(run, "reduction", threads, 0,
               overheads(
                   plan,
                   [&] {
                     int total = 0;
                     for (int j = 0; j < plan.inner; ++j) {
#pragma omp parallel reduction(+ : total) num_threads(threads)
                       {
                         delay(plan.delay_length);
                         total += 1;
                       }
                     }
                     if (total < 0) std::abort();
                   },
                   reference));
  measure_firstprivate<1>(run, plan, threads);
  measure_firstprivate<27>(run, plan, threads);
  measure_firstprivate<729>(run, plan, threads);
  measure_firstprivate<19683>(run, plan, threads);
}

// All-pairs gravitational N-body step: the seed's thread-scaling kernel.
double nbody_step_seconds(int bodies, int threads, int steps) {
  std::vector<double> x(bodies), y(bodies), z(bodies), vx(bodies), vy(bodies), vz(bodies),
      mass(bodies, 1.0);
  for (int body = 0; body < bodies; ++body) {
    x[body] = std::sin(body * 0.7);
    y[body] = std::cos(body * 1.3);
    z[body] = std::sin(body * 2.1 + 0.3);
  }
  double start = now_seconds();
  for (int step = 0; step < steps; ++step) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int body = 0; body < bodies; ++body) {
      double ax = 0, ay = 0, az = 0;
      for (int other = 0; other < bodies; ++other) {
        double dx = x[other] - x[body], dy = y[other] - y[body], dz = z[other] - z[body];
        double inverse = 1.0 / std::sqrt(dx * dx + dy * dy + dz * dz + 1e-9);
        double strength = mass[other] * inverse * inverse * inverse;
        ax += dx * strength;
        ay += dy * strength;
        az += dz * strength;
      }
      vx[body] += 1e-4 * ax;
      vy[body] += 1e-4 * ay;
      vz[body] += 1e-4 * az;
    }
    for (int body = 0; body < bodies; ++body) {
      x[body] += 1e-4 * vx[body];
      y[body] += 1e-4 * vy[body];
      z[body] += 1e-4 * vz[body];
    }
  }
  return (now_seconds() - start) / steps;
}

void run_threads(node_run& run) {
  const int cores = run.comm.topology().cores_available;
  std::vector<int> counts{1};
  for (int threads = 2; threads <= std::max(2, 2 * cores); threads *= 2) counts.push_back(threads);
  if (run.level == effort::quick) counts = {1, 2};
  overhead_plan plan{run.pick(20, 200, 1000), run.pick(5, 30, 50), 200};
  const int bodies = run.pick(256, 2048, 4096);
  on_rank_zero_alone(run.comm.mpi_comm(), [&] {
    double single = 0;
    for (std::size_t index = 0; index < counts.size(); ++index) {
      const int threads = counts[index];
      measure_constructs(run, plan, threads);
      std::vector<double> steps;
      for (int sample = 0; sample < run.pick(2, 3, 5); ++sample)
        steps.push_back(nbody_step_seconds(bodies, threads, 2) * 1e6);
      summary step = summarize(steps);
      if (threads == 1) single = step.median;
      run.results.add({{"op", "nbody"},
                       {"impl", "openmp"},
                       {"algorithm", "all-pairs"},
                       {"threads", threads},
                       {"bodies", bodies},
                       {"bytes", 0},
                       {"speedup", single / step.median},
                       {"oversubscribed_threads", threads > cores}},
                      step);
      run.progress(static_cast<double>(index + 1) / static_cast<double>(counts.size()));
    }
  });
}

const node_step_registration registration{
    node_step{"threads",
              "OpenMP construct overhead by thread count (EPCC method) and N-body scaling",
              30,
              run_threads,
              {"op", "threads", "array_elements", "median_us", "ci95_us", "speedup"}}};

}  // namespace
}  // namespace cachecomm::bench
