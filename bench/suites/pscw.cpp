// PSCW: the seed's synchronization microbenchmark (1 origin, k targets, START/COMPLETE/POST/WAIT
// timed separately, no data moved) for cachecomm windows beside the system MPI's PSCW on an
// MPI_Win_allocate_shared window, interleaved in the same job; then put latency and bandwidth by
// message size under fence and under PSCW, again beside MPI.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>

#include "cachecomm/comm.hpp"
#include "cachecomm/window.hpp"
#include "common/interleaved.hpp"
#include "common/report.hpp"
#include "common/statistics.hpp"
#include "common/suite.hpp"

namespace cachecomm::bench {

namespace {

/// MPI's side: a shared-memory window and the groups of the microbenchmark.
class mpi_shared_window {
 public:
  /// MPI_Win_allocate_shared (the baseline the issue names; Open MPI's osc/sm) or, with
  /// `created`, MPI_Win_create on ordinary memory (what most applications use; osc/rdma).
  mpi_shared_window(MPI_Comm comm, std::size_t bytes, bool created = false) {
    if (created) {
      m_owned.resize(std::max<std::size_t>(bytes, 1));
      m_base = m_owned.data();
      MPI_Win_create(m_base, static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm, &m_window);
    } else {
      MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm, &m_base,
                              &m_window);
    }
    MPI_Comm_group(comm, &m_group);
  }
  ~mpi_shared_window() {
    MPI_Win_free(&m_window);
    MPI_Group_free(&m_group);
  }
  mpi_shared_window(const mpi_shared_window&) = delete;
  mpi_shared_window& operator=(const mpi_shared_window&) = delete;
  [[nodiscard]] MPI_Win get() const { return m_window; }
  /// The MPI group of `ranks` (freed by the caller with MPI_Group_free).
  [[nodiscard]] MPI_Group group_of(const std::vector<int>& ranks) const {
    MPI_Group subset = MPI_GROUP_NULL;
    MPI_Group_incl(m_group, static_cast<int>(ranks.size()), ranks.data(), &subset);
    return subset;
  }

 private:
  std::vector<std::byte> m_owned;
  void* m_base = nullptr;
  MPI_Win m_window = MPI_WIN_NULL;
  MPI_Group m_group = MPI_GROUP_NULL;
};

struct phase_samples {
  std::vector<double> first;   ///< start (origin) or post (target), microseconds
  std::vector<double> second;  ///< complete (origin) or wait (target)
};

// Collects every rank's samples on rank 0 (targets contribute theirs, others nothing).
std::vector<double> gather_samples(const std::vector<double>& mine, MPI_Comm comm) {
  int size = 1;
  int rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size));
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  std::vector<double> all;
  if (rank == 0) {
    std::partial_sum(counts.begin(), counts.end() - 1, offsets.begin() + 1);
    all.resize(static_cast<std::size_t>(offsets.back() + counts.back()));
  }
  MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE,
              0, comm);
  return all;
}

std::vector<double> pairwise_sum(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> sum(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) sum[i] = a[i] + b[i];
  return sum;
}

class pscw_suite final : public suite {
 public:
  [[nodiscard]] std::string name() const override { return "pscw"; }
  [[nodiscard]] std::string description() const override {
    return "One-sided windows: PSCW synchronization (seed microbenchmark) and put "
           "latency/bandwidth, beside MPI";
  }
  void add_options(CLI::App& command) override {
    command.add_option("--reps", m_repetitions, "Synchronization sequences per k (the seed: 1001)")
        ->capture_default_str();
    command.add_option("--batch", m_batch, "Sequences per interleaved batch")
        ->capture_default_str();
    command.add_option("--max-targets", m_max_targets,
                       "Largest k (default: every rank but the origin)");
    command.add_option("--sizes", m_sizes, "Put sizes in bytes (default: 8 B .. 4 MiB)")
        ->delimiter(',');
    command.add_flag("--no-put", m_skip_put, "Only the synchronization microbenchmark");
  }
  int run(const common_options& options) override;

 private:
  void run_synchronization(int targets, bool quick);
  void run_put(std::size_t bytes, bool quick);

  int m_repetitions = 1001;
  int m_batch = 91;
  int m_max_targets = 0;
  bool m_skip_put = false;
  std::vector<std::size_t> m_sizes;

  // Per run.
  cachecomm::comm* m_comm = nullptr;
  cachecomm::window* m_window = nullptr;
  mpi_shared_window* m_mpi = nullptr;
  mpi_shared_window* m_mpi_created = nullptr;
  report* m_results = nullptr;
  int m_rank = 0;
};

int pscw_suite::run(const common_options& options) {
  cachecomm::comm comm(MPI_COMM_WORLD);
  report results("pscw", comm.mpi_comm());
  const int np = comm.size();
  m_rank = comm.rank();
  std::vector<std::size_t> sizes = m_sizes;
  if (sizes.empty()) {
    sizes = options.quick
                ? std::vector<std::size_t>{8, 4096}
                : std::vector<std::size_t>{8, 64, 512, 4096, 32768, 262144, 1U << 20, 4U << 20};
  }
  const std::size_t window_bytes = *std::max_element(sizes.begin(), sizes.end());

  // The MPI baseline needs one shared-memory communicator holding every rank.
  MPI_Comm shared = MPI_COMM_NULL;
  MPI_Comm_split_type(comm.mpi_comm(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
  int shared_size = 0;
  MPI_Comm_size(shared, &shared_size);
  int everywhere = 0;
  MPI_Allreduce(&shared_size, &everywhere, 1, MPI_INT, MPI_MIN, comm.mpi_comm());
  if (everywhere != np) {
    if (m_rank == 0)
      std::fprintf(stderr,
                   "cachecomm-bench pscw: needs every rank on one machine (MPI shared window)\n");
    MPI_Comm_free(&shared);
    return 2;
  }
  {
    cachecomm::window win(comm, window_bytes, 1);
    mpi_shared_window mpi(shared, window_bytes);
    mpi_shared_window mpi_created(shared, 64, true);
    m_mpi_created = &mpi_created;
    m_comm = &comm;
    m_window = &win;
    m_mpi = &mpi;
    m_results = &results;
    const bool print = m_rank == 0 && !options.quiet;
    if (print) {
      std::printf("cachecomm-bench pscw: %d ranks on %d node(s), %d processing units%s; MPI: %s\n",
                  np, comm.topology().node_count, comm.topology().cores_available,
                  results.oversubscribed() ? ", OVERSUBSCRIBED" : "", mpi_library_name().c_str());
    }
    const int max_targets = m_max_targets > 0 ? std::min(m_max_targets, np - 1) : np - 1;
    for (int k = 1; k <= max_targets; ++k) run_synchronization(k, options.quick);
    if (print) {
      std::printf("\n== PSCW synchronization (1 origin, k targets; medians of every sample) ==\n");
      print_table(results.document()["results"],
                  {"impl", "algorithm", "targets", "phase", "median_us", "p25_us", "p75_us",
                   "vs_mpi", "vs_mpi_created"});
    }
    const std::size_t first_put = results.document()["results"].size();
    if (!m_skip_put && np >= 2) {
      for (std::size_t bytes : sizes) run_put(bytes, options.quick);
    }
    if (print && !m_skip_put) {
      std::printf("\n== put by size (origin 0 -> target 1) ==\n");
      json slice = json::array();
      for (std::size_t i = first_put; i < results.document()["results"].size(); ++i) {
        slice.push_back(results.document()["results"][i]);
      }
      print_table(slice, {"impl", "algorithm", "bytes", "median_us", "p25_us", "p75_us", "gbps",
                          "fraction_of_limit", "vs_mpi"});
    }
    if (results.oversubscribed())
      results.note("ranks outnumber processing units: timings include scheduling");
  }
  MPI_Comm_free(&shared);
  if (m_rank == 0 && !options.json_path.empty()) results.write(options.json_path);
  return 0;
}

// Algorithm 3 of the seed, for every implementation in alternating batches. No barrier inside a
// batch: after one sequence origin and targets are synchronized anyway.
void pscw_suite::run_synchronization(int targets, bool quick) {
  const int repetitions = quick ? 30 : m_repetitions;
  const int batch = quick ? 10 : std::max(1, m_batch);
  const bool origin = m_rank == 0;
  const bool target = m_rank >= 1 && m_rank <= targets;
  rank_group target_group(static_cast<std::size_t>(targets));
  std::iota(target_group.begin(), target_group.end(), 1);
  const rank_group origin_group{0};
  MPI_Group mpi_targets = m_mpi->group_of(target_group);
  MPI_Group mpi_origin = m_mpi->group_of(origin_group);

  // Times two consecutive calls (START then COMPLETE, or POST then WAIT) as one sample per phase.
  auto time_phases = [](phase_samples& samples, auto&& first, auto&& second) {
    const double t0 = now_seconds();
    first();
    const double t1 = now_seconds();
    second();
    const double t2 = now_seconds();
    samples.first.push_back((t1 - t0) * 1e6);
    samples.second.push_back((t2 - t1) * 1e6);
  };
  auto ours = [&](phase_samples& samples, int count) {
    for (int i = 0; i < count; ++i) {
      if (origin) {
        time_phases(
            samples, [&] { m_window->start(target_group); }, [&] { m_window->complete(); });
      } else if (target) {
        time_phases(
            samples, [&] { m_window->post(origin_group); }, [&] { m_window->wait(); });
      }
    }
  };
  auto theirs = [&](MPI_Win mpi_window, phase_samples& samples, int count) {
    for (int i = 0; i < count; ++i) {
      if (origin) {
        time_phases(
            samples, [&] { MPI_Win_start(mpi_targets, 0, mpi_window); },
            [&] { MPI_Win_complete(mpi_window); });
      } else if (target) {
        time_phases(
            samples, [&] { MPI_Win_post(mpi_origin, 0, mpi_window); },
            [&] { MPI_Win_wait(mpi_window); });
      }
    }
  };
  struct series {
    const char* impl;
    const char* algorithm;
    std::function<void(phase_samples&, int)> run;
    phase_samples samples;
  };
  // The first MPI entry (shared window) is the baseline of vs_mpi.
  std::vector<series> all{
      {"cachecomm", "trigger-only", ours, {}},
      {"mpi", "shared-window", [&](phase_samples& s, int n) { theirs(m_mpi->get(), s, n); }, {}},
      {"mpi",
       "created-window",
       [&](phase_samples& s, int n) { theirs(m_mpi_created->get(), s, n); },
       {}}};
  for (auto& entry : all) {
    phase_samples warm;
    MPI_Barrier(MPI_COMM_WORLD);
    entry.run(warm, batch);
  }
  for (int done = 0; done < repetitions; done += batch) {
    const int count = std::min(batch, repetitions - done);
    for (auto& entry : all) {
      MPI_Barrier(MPI_COMM_WORLD);
      entry.run(entry.samples, count);
    }
  }
  MPI_Group_free(&mpi_targets);
  MPI_Group_free(&mpi_origin);

  // Rank 0 holds the origin's samples; the targets' are gathered (k * repetitions samples).
  struct result_row {
    std::string impl, algorithm, phase;
    summary times;
    double sum_of_medians = -1;
  };
  std::vector<result_row> rows;
  for (auto& entry : all) {
    std::vector<double> none;
    auto posts = gather_samples(target ? entry.samples.first : none, MPI_COMM_WORLD);
    auto waits = gather_samples(target ? entry.samples.second : none, MPI_COMM_WORLD);
    if (!origin) continue;
    const auto& starts = entry.samples.first;
    const auto& completes = entry.samples.second;
    auto start_times = summarize(starts);
    auto complete_times = summarize(completes);
    auto post_times = summarize(posts);
    auto wait_times = summarize(waits);
    rows.push_back({entry.impl, entry.algorithm, "start", start_times});
    rows.push_back({entry.impl, entry.algorithm, "complete", complete_times});
    rows.push_back({entry.impl, entry.algorithm, "post", post_times});
    rows.push_back({entry.impl, entry.algorithm, "wait", wait_times});
    // The seed's t_o and t_t: the origin's START + COMPLETE and a target's POST + WAIT per
    // sequence (median of the per-sequence sums; the seed's sum of medians kept beside it).
    rows.push_back({entry.impl, entry.algorithm, "origin",
                    summarize(pairwise_sum(starts, completes)),
                    start_times.median + complete_times.median});
    rows.push_back({entry.impl, entry.algorithm, "target", summarize(pairwise_sum(posts, waits)),
                    post_times.median + wait_times.median});
  }
  if (!origin) return;
  const std::size_t per_impl = 6;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const summary& shared_times = rows[(i % per_impl) + per_impl].times;
    const summary& created_times = rows[(i % per_impl) + 2 * per_impl].times;
    json& row = m_results->add(
        {{"op", "pscw"},
         {"impl", rows[i].impl},
         {"algorithm", rows[i].algorithm},
         {"phase", rows[i].phase},
         {"targets", targets},
         {"bytes", 0},
         {"iters", rows[i].times.samples},
         {"vs_mpi", shared_times.median > 0 ? rows[i].times.median / shared_times.median : 0.0},
         {"vs_mpi_created",
          created_times.median > 0 ? rows[i].times.median / created_times.median : 0.0}},
        rows[i].times);
    if (rows[i].sum_of_medians >= 0) row["sum_of_medians_us"] = rows[i].sum_of_medians;
  }
}

// Put of `bytes` from rank 0 to rank 1: under fence (all ranks fence) and under PSCW (0 starts,
// 1 posts), each beside the same sequence on the MPI shared window.
void pscw_suite::run_put(std::size_t bytes, bool quick) {
  std::vector<std::byte> source(bytes, std::byte{0x5A});
  const bool origin = m_rank == 0;
  const bool target = m_rank == 1;
  MPI_Win mpi_window = m_mpi->get();
  const int count = static_cast<int>(bytes);
  timing_plan plan =
      quick ? timing_plan{5, 3, 10}
            : timing_plan{20, 21, bytes >= (1U << 20) ? 10 : (bytes >= 65536 ? 50 : 200)};

  // Fence epochs.
  m_window->fence();
  MPI_Win_fence(0, mpi_window);
  std::vector<candidate> fence_candidates{{"cachecomm", "fence",
                                           [&] {
                                             if (origin) m_window->put(source.data(), bytes, 1, 0);
                                             m_window->fence();
                                           }},
                                          {"mpi", "fence", [&] {
                                             if (origin)
                                               MPI_Put(source.data(), count, MPI_BYTE, 1, 0, count,
                                                       MPI_BYTE, mpi_window);
                                             MPI_Win_fence(0, mpi_window);
                                           }}};
  auto fence_times = measure_interleaved(MPI_COMM_WORLD, fence_candidates, plan);
  m_window->fence(fence_flag::last);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, mpi_window);

  // PSCW epochs.
  MPI_Group mpi_target = m_mpi->group_of({1});
  MPI_Group mpi_origin = m_mpi->group_of({0});
  std::vector<candidate> pscw_candidates{{"cachecomm", "pscw",
                                          [&] {
                                            if (origin) {
                                              m_window->start({1});
                                              m_window->put(source.data(), bytes, 1, 0);
                                              m_window->complete();
                                            } else if (target) {
                                              m_window->post({0});
                                              m_window->wait();
                                            }
                                          }},
                                         {"mpi", "pscw", [&] {
                                            if (origin) {
                                              MPI_Win_start(mpi_target, 0, mpi_window);
                                              MPI_Put(source.data(), count, MPI_BYTE, 1, 0, count,
                                                      MPI_BYTE, mpi_window);
                                              MPI_Win_complete(mpi_window);
                                            } else if (target) {
                                              MPI_Win_post(mpi_origin, 0, mpi_window);
                                              MPI_Win_wait(mpi_window);
                                            }
                                          }}};
  auto pscw_times = measure_interleaved(MPI_COMM_WORLD, pscw_candidates, plan);
  MPI_Group_free(&mpi_target);
  MPI_Group_free(&mpi_origin);

  // The limit: a plain memcpy of the same size on rank 0.
  double limit_gbps = 0;
  if (origin) {
    std::vector<std::byte> destination(bytes);
    std::vector<double> samples;
    const int repeat = std::max(1, static_cast<int>((1U << 22) / std::max<std::size_t>(bytes, 1)));
    for (int sample = 0; sample < (quick ? 3 : 15); ++sample) {
      double t0 = now_seconds();
      for (int i = 0; i < repeat; ++i) {
        std::memcpy(destination.data(), source.data(), bytes);
        asm volatile("" : : "r"(destination.data()) : "memory");
      }
      samples.push_back((now_seconds() - t0) / repeat);
    }
    limit_gbps = static_cast<double>(bytes) / summarize(samples).median / 1e9;
  }
  if (!origin) return;
  for (auto* set : {&fence_times, &pscw_times}) {
    const auto& candidates = set == &fence_times ? fence_candidates : pscw_candidates;
    for (std::size_t i = 0; i < set->size(); ++i) {
      const summary& times = (*set)[i];
      const double gbps =
          times.median > 0 ? static_cast<double>(bytes) / (times.median * 1e-6) / 1e9 : 0.0;
      m_results->add({{"op", "put"},
                      {"impl", candidates[i].impl},
                      {"algorithm", candidates[i].algorithm},
                      {"bytes", bytes},
                      {"iters", plan.batches * plan.iterations_per_batch},
                      {"gbps", gbps},
                      {"fraction_of_limit", limit_gbps > 0 ? gbps / limit_gbps : 0.0},
                      {"limit", "memcpy on rank 0"},
                      {"vs_mpi", (*set)[1].median > 0 ? times.median / (*set)[1].median : 0.0}},
                     times);
    }
  }
}

const suite_registration<pscw_suite> registration;

}  // namespace

}  // namespace cachecomm::bench
