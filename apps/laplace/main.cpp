// cachecomm-laplace: the seed's streaming Laplacian solver on a decomposed grid, with the
// compute / communicate / synchronize breakdown, GLUP/s, bandwidth against STREAM triad measured in
// the same run, and halo bandwidth; as a table and as JSON (shared/conventions/benchmarks.md).
#include <mpi.h>
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <numeric>
#include <sstream>

#include "cachecomm/comm.hpp"
#include "cachecomm/grid.hpp"
#include "cachecomm/halo.hpp"
#include "common/report.hpp"
#include "common/statistics.hpp"
#include "common/stream.hpp"
#include "solver.hpp"

namespace {

using namespace cachecomm;
using bench::json;

struct cli_options {
  std::vector<long> size;        // global
  std::vector<long> local_size;  // per rank (alternative to size)
  int dims = 2;
  std::vector<int> ranks_per_dim;
  int iterations = 100;
  int ghost = 1;
  std::string layout = "row-major";
  std::string boundary_kind = "fixed";
  std::string shape = "faces";
  bool no_overlap = false;
  std::vector<std::string> transports{"shm"};
  int model_ranks = 2;
  int threads = 0;
  bool checked = false;
  bool verify = false;
  bool quick = false;
  bool no_stream = false;
  long stream_elements = 20'000'000;
  std::string json_path;
  double coefficient = 0.1;
  std::uint64_t seed = 42;
};

// What one rank measured in one run, reduced to what the report needs.
struct rank_figures {
  std::vector<double> compute, communicate, synchronize, total;  // per-iteration seconds
  double cells = 0, halo_bytes = 0, mismatches = 0;
};

grid_spec make_spec(const cli_options& options, int ranks) {
  grid_spec spec;
  spec.ghost_width = options.ghost;
  spec.ranks_per_dim = options.ranks_per_dim;
  spec.layout = options.layout == "tiled" ? grid_layout::tiled : grid_layout::row_major;
  spec.shape = options.shape == "full" ? halo_shape::full : halo_shape::faces;
  spec.checked = options.checked;
  if (!options.local_size.empty()) {
    std::vector<long> local = options.local_size;
    if (local.size() == 1) local.assign(static_cast<std::size_t>(options.dims), local.front());
    // Factorize the ranks as for a grid of equal subdomains, then scale the subdomain up.
    grid_spec probe = spec;
    probe.global_size.clear();
    for (long cells : local) probe.global_size.push_back(cells * ranks);
    probe.ghost_width = 1;
    decomposition shape(probe, ranks);
    const int first = grid_max_dims - static_cast<int>(local.size());
    for (std::size_t d = 0; d < local.size(); ++d) {
      spec.global_size.push_back(local[d] *
                                 shape.ranks_per_dim()[static_cast<std::size_t>(first) + d]);
    }
    if (spec.ranks_per_dim.empty()) {
      for (std::size_t d = 0; d < local.size(); ++d)
        spec.ranks_per_dim.push_back(shape.ranks_per_dim()[static_cast<std::size_t>(first) + d]);
    }
  } else {
    spec.global_size = options.size;
    if (spec.global_size.size() == 1)
      spec.global_size.assign(static_cast<std::size_t>(options.dims), options.size.front());
  }
  spec.boundaries.assign(spec.global_size.size(), options.boundary_kind == "periodic"
                                                      ? boundary::periodic
                                                      : boundary::fixed);
  return spec;
}

laplace::run_options make_run(const cli_options& options) {
  laplace::run_options run;
  run.iterations = options.iterations;
  run.overlap = !options.no_overlap;
  run.physics.coefficient = options.coefficient;
  run.physics.seed = options.seed;
  return run;
}

// One solver on one transport, kept alive so that runs over several transports can alternate.
struct prepared_run {
  std::unique_ptr<grid_transport> transport;
  std::unique_ptr<grid<double>> g;
  std::unique_ptr<halo_exchange> exchange;
  std::unique_ptr<laplace::jacobi> solver;
  laplace::phase_samples samples;
};

// Collective: builds the grid and the pattern, runs two untimed iterations (page faults, thread
// start-up) and goes back to the initial X.
void prepare(prepared_run& run, grid_transport& transport, const grid_spec& spec,
             const cli_options& options) {
  run.g = std::make_unique<grid<double>>(transport, spec, 2);
  run.exchange = std::make_unique<halo_exchange>(*run.g, std::vector<int>{0});
  run.solver = std::make_unique<laplace::jacobi>(*run.g, *run.exchange, make_run(options));
  laplace::phase_samples warm;
  for (int i = 0; i < std::min(2, options.iterations); ++i) run.solver->step(warm);
  run.solver->restart();
}

rank_figures finish(prepared_run& run, const grid_spec& spec, const cli_options& options) {
  rank_figures figures;
  figures.compute = run.samples.compute;
  figures.communicate = run.samples.communicate;
  figures.synchronize = run.samples.synchronize;
  figures.total = run.samples.total;
  const auto& size = run.g->local_size();
  figures.cells = static_cast<double>(size[0] * size[1] * size[2]);
  figures.halo_bytes = static_cast<double>(run.exchange->bytes_per_exchange());
  if (options.verify) {
    auto reference = laplace::serial_reference(spec, make_run(options).physics, options.iterations);
    auto result = laplace::compare_with_reference(*run.g, 0, reference);
    figures.mismatches = static_cast<double>(result.mismatches);
    if (result.mismatches > 0)
      std::cerr << "verify: " << result.mismatches << " cells differ; first: " << result.first
                << "\n";
  }
  return figures;
}

double median_of(std::vector<double> values) {
  return bench::summarize(std::move(values)).median;
}

bench::summary microseconds(const std::vector<double>& seconds) {
  std::vector<double> us(seconds);
  for (auto& value : us) value *= 1e6;
  return bench::summarize(us);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  int status = 0;
  try {
    cli_options options;
    CLI::App app{
        "cachecomm-laplace: distributed streaming Laplacian (Jacobi) with a per-phase breakdown"};
    app.add_option("--size", options.size,
                   "global grid size, slowest dimension first (one value: same in every dimension)")
        ->delimiter(',');
    app.add_option("--local-size", options.local_size,
                   "cells per rank instead of --size (one value or one per dimension)")
        ->delimiter(',');
    app.add_option("--dims", options.dims, "2 or 3 (when a size has a single value)")
        ->check(CLI::IsMember({2, 3}));
    app.add_option("--ranks-per-dim", options.ranks_per_dim, "decomposition (default: automatic)")
        ->delimiter(',');
    app.add_option("--iterations", options.iterations, "Jacobi iterations")
        ->check(CLI::Range(1, 1 << 30));
    app.add_option("--ghost", options.ghost, "ghost width");
    app.add_option("--layout", options.layout, "field layout")
        ->check(CLI::IsMember({"row-major", "tiled"}));
    app.add_option("--boundary", options.boundary_kind, "fixed or periodic")
        ->check(CLI::IsMember({"fixed", "periodic"}));
    app.add_option("--shape", options.shape, "halo shape: faces or full (edges and corners too)")
        ->check(CLI::IsMember({"faces", "full"}));
    app.add_flag("--no-overlap", options.no_overlap,
                 "exchange, then compute (default: interior while halos travel)");
    app.add_option("--transport", options.transports,
                   "shm, mpi (plain MPI point-to-point) or model; several run one after another")
        ->delimiter(',')
        ->check(CLI::IsMember({"shm", "mpi", "model"}));
    app.add_option("--model-ranks", options.model_ranks, "ranks (threads) of the model transport");
    app.add_option("--threads", options.threads,
                   "OpenMP threads per rank (default: cores / ranks)");
    app.add_flag("--checked", options.checked,
                 "checked halos: verify the origin of every halo value");
    app.add_flag("--verify", options.verify, "compare the result bit for bit with a serial run");
    app.add_flag("--quick", options.quick, "small grid and few iterations (smoke test)");
    app.add_flag("--no-stream", options.no_stream, "skip the STREAM triad reference");
    app.add_option("--stream-elements", options.stream_elements, "STREAM array length per rank");
    app.add_option("--coefficient", options.coefficient, "c in X += c*Y");
    app.add_option("--seed", options.seed, "seed of the initial values");
    app.add_option("--json", options.json_path, "write the JSON report here");
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
      int code = world_rank == 0 ? app.exit(error) : (error.get_exit_code());
      MPI_Finalize();
      return code;
    }
    if (options.quick) {
      if (options.size.empty() && options.local_size.empty()) options.local_size = {128};
      options.iterations = std::min(options.iterations, 10);
      options.stream_elements = std::min(options.stream_elements, 2'000'000L);
    }
    if (options.size.empty() && options.local_size.empty()) options.local_size = {1024};
    if (options.threads <= 0) {
      // Cores of this machine shared by the ranks on it.
      MPI_Comm node = MPI_COMM_NULL;
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
      int node_size = 1;
      MPI_Comm_size(node, &node_size);
      MPI_Comm_free(&node);
      options.threads = std::max(1, omp_get_num_procs() / node_size);
    }
    omp_set_num_threads(options.threads);

    comm communicator(MPI_COMM_WORLD);
    bench::report report("laplace", MPI_COMM_WORLD);

    // STREAM on the same cores, all ranks at once: the limit the compute phase is held to. It runs
    // once before and then between the blocks of solver iterations, so that both see the same
    // machine (other jobs come and go); the limit is the best round, as STREAM reports.
    std::map<std::string, std::vector<double>>
        stream_rounds;  // kernel -> GB/s summed over ranks, per round
    auto measure_stream = [&] {
      if (options.no_stream) return;
      MPI_Barrier(MPI_COMM_WORLD);
      bench::stream_options stream;
      stream.elements = static_cast<std::size_t>(options.stream_elements);
      stream.threads = options.threads;
      stream.repetitions = 3;
      for (const auto& result : bench::run_stream(stream)) {
        double sum = 0;
        MPI_Allreduce(&result.best_gbps, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        stream_rounds[result.kernel].push_back(sum);
      }
    };
    measure_stream();

    // MPI-launched transports run side by side: a block of iterations on each in turn, so that
    // the machine's drift (other jobs, frequency) favours none of them.
    std::map<std::string, std::vector<rank_figures>> mpi_figures;
    {
      std::vector<std::string> names;
      for (const auto& name : options.transports) {
        if (name != "model" && std::find(names.begin(), names.end(), name) == names.end())
          names.push_back(name);
      }
      const grid_spec spec = make_spec(options, world_size);
      std::vector<prepared_run> runs(names.size());
      for (std::size_t t = 0; t < names.size(); ++t) {
        runs[t].transport =
            names[t] == "shm" ? make_shm_transport(communicator) : make_mpi_transport(communicator);
        prepare(runs[t], *runs[t].transport, spec, options);
      }
      const int block = std::max(1, options.iterations / 10);
      for (int done = 0; done < options.iterations; done += block) {
        for (auto& run : runs) {
          for (int i = done; i < std::min(options.iterations, done + block); ++i)
            run.solver->step(run.samples);
        }
        measure_stream();
      }
      for (std::size_t t = 0; t < names.size(); ++t) {
        rank_figures mine = finish(runs[t], spec, options);
        std::vector<double> flat;
        for (auto* series : {&mine.compute, &mine.communicate, &mine.synchronize, &mine.total}) {
          flat.insert(flat.end(), series->begin(), series->end());
        }
        flat.push_back(mine.cells);
        flat.push_back(mine.halo_bytes);
        flat.push_back(mine.mismatches);
        auto all = runs[t].transport->allgather(flat);
        const std::size_t n = static_cast<std::size_t>(options.iterations);
        auto& ranks = mpi_figures[names[t]];
        for (int r = 0; r < world_size; ++r) {
          const double* base = all.data() + static_cast<std::size_t>(r) * flat.size();
          rank_figures figures;
          figures.compute.assign(base, base + n);
          figures.communicate.assign(base + n, base + 2 * n);
          figures.synchronize.assign(base + 2 * n, base + 3 * n);
          figures.total.assign(base + 3 * n, base + 4 * n);
          figures.cells = base[4 * n];
          figures.halo_bytes = base[4 * n + 1];
          figures.mismatches = base[4 * n + 2];
          ranks.push_back(std::move(figures));
        }
      }
      // Grids (and their segments) go before their transports.
      for (auto& run : runs) {
        run.solver.reset();
        run.exchange.reset();
        run.g.reset();
      }
    }

    // The limit is the median round: each round sums the ranks' concurrent bests, and the compute
    // bandwidth it is compared with is a median too (a best round on a shared machine is often one
    // in which a rank had the memory to itself). The best round is reported beside it.
    double triad_gbps = 0, triad_best_gbps = 0;
    for (const auto& [kernel, rounds] : stream_rounds) {
      const double best = *std::max_element(rounds.begin(), rounds.end());
      if (kernel == "triad") {
        triad_gbps = median_of(rounds);
        triad_best_gbps = best;
      }
      report.add({{"op", "stream-" + kernel},
                  {"impl", "stream"},
                  {"ranks", world_size},
                  {"threads_per_rank", options.threads},
                  {"rounds", rounds.size()},
                  {"gbps", best},
                  {"median_gbps", median_of(rounds)}});
    }

    long total_mismatches = 0;
    std::vector<std::pair<std::string, double>> glups_by_transport;
    for (const std::string& transport_name : options.transports) {
      std::vector<rank_figures> ranks;
      int rank_count = world_size;
      grid_spec spec;
      if (transport_name == "model") {
        if (world_size != 1)
          throw usage_error(
              "--transport model runs its ranks as threads: start it as one MPI process");
        rank_count = options.model_ranks;
        spec = make_spec(options, rank_count);
        ranks.resize(static_cast<std::size_t>(rank_count));
        run_model_ranks(rank_count, [&](grid_transport& transport) {
          omp_set_num_threads(1);  // the ranks are already the threads
          prepared_run run;
          prepare(run, transport, spec, options);
          for (int i = 0; i < options.iterations; ++i) run.solver->step(run.samples);
          ranks[static_cast<std::size_t>(transport.rank())] = finish(run, spec, options);
        });
      } else {
        spec = make_spec(options, world_size);
        ranks = std::move(mpi_figures.at(transport_name));
      }
      const std::string impl = transport_name == "mpi" ? "mpi" : "cachecomm";
      json common{{"op", "laplace"},
                  {"impl", impl},
                  {"transport", transport_name},
                  {"dims", spec.global_size.size()},
                  {"global_size", spec.global_size},
                  {"ghost", spec.ghost_width},
                  {"layout", to_string(spec.layout)},
                  {"overlap", !options.no_overlap},
                  {"checked", options.checked},
                  {"ranks", rank_count},
                  {"iters", options.iterations}};
      // Aggregate per iteration: the slowest rank's total sets the pace; phases are averaged over
      // ranks.
      std::vector<double> phase_sum[4];
      double compute_gbps = 0, halo_gbps = 0, cells = 0, slowest_total = 0;
      for (int r = 0; r < rank_count; ++r) {
        const auto& figures = ranks[static_cast<std::size_t>(r)];
        const std::vector<double>* series[4] = {&figures.compute, &figures.communicate,
                                                &figures.synchronize, &figures.total};
        const char* names[4] = {"compute", "communicate", "synchronize", "total"};
        for (int p = 0; p < 4; ++p) {
          json row = common;
          row["phase"] = names[p];
          row["rank"] = r;
          report.add(row, microseconds(*series[p]));
          phase_sum[p].resize(series[p]->size(), 0.0);
          for (std::size_t i = 0; i < series[p]->size(); ++i)
            phase_sum[p][i] += (*series[p])[i] / rank_count;
        }
        compute_gbps +=
            figures.cells * laplace::bytes_per_update / median_of(figures.compute) / 1e9;
        const double halo_time = median_of(figures.communicate) + median_of(figures.synchronize);
        if (halo_time > 0) halo_gbps += figures.halo_bytes / halo_time / 1e9;
        cells += figures.cells;
        slowest_total = std::max(slowest_total,
                                 std::accumulate(figures.total.begin(), figures.total.end(), 0.0));
        total_mismatches += static_cast<long>(figures.mismatches);
      }
      const char* names[4] = {"compute", "communicate", "synchronize", "total"};
      for (int p = 0; p < 4; ++p) {
        json row = common;
        row["phase"] = names[p];
        row["rank"] = "all";
        report.add(row, microseconds(phase_sum[p]));
      }
      // Share of the whole run (not of the median iteration): a stalled iteration counts in full.
      auto sum_of = [](const std::vector<double>& values) {
        return std::accumulate(values.begin(), values.end(), 0.0);
      };
      const double overhead = (sum_of(phase_sum[1]) + sum_of(phase_sum[2])) / sum_of(phase_sum[3]);
      const double glups = cells * options.iterations / slowest_total / 1e9;
      json summary = common;
      summary["op"] = "laplace-summary";
      summary["glups"] = glups;
      summary["gbps"] = compute_gbps;
      summary["bytes_per_update"] = laplace::bytes_per_update;
      if (triad_gbps > 0) {
        summary["fraction_of_limit"] = compute_gbps / triad_gbps;
        summary["fraction_of_best_triad"] = compute_gbps / triad_best_gbps;
        summary["limit"] = "stream-triad median round";
        summary["limit_gbps"] = triad_gbps;
      }
      summary["halo_gbps"] = halo_gbps;
      summary["halo_bytes_per_rank"] = ranks.front().halo_bytes;
      summary["comm_sync_fraction"] = overhead;
      if (options.verify) summary["bit_identical"] = total_mismatches == 0;
      report.add(summary);
      glups_by_transport.emplace_back(transport_name, glups);
    }
    if (glups_by_transport.size() > 1) {
      std::ostringstream note;
      for (const auto& [name, glups] : glups_by_transport) {
        note << name << " " << glups / glups_by_transport.front().second << "x  ";
      }
      report.note("GLUP/s relative to " + glups_by_transport.front().first + ": " + note.str());
    }
    if (report.oversubscribed())
      report.note("ranks outnumber cores: timings include waiting for a core");
    if (world_rank == 0) {
      const auto& results = report.document()["results"];
      json phases = json::array(), summaries = json::array();
      for (const auto& row : results) {
        if (row["op"] == "laplace")
          phases.push_back(row);
        else
          summaries.push_back(row);
      }
      bench::print_table(phases, {"transport", "rank", "phase", "median_us", "p25_us", "p75_us"});
      std::printf("\n");
      bench::print_table(summaries, {"op", "transport", "ranks", "glups", "gbps", "median_gbps",
                                     "fraction_of_limit", "fraction_of_best_triad", "halo_gbps",
                                     "comm_sync_fraction", "bit_identical"});
      for (const auto& note : report.document()["notes"])
        std::printf("note: %s\n", note.get<std::string>().c_str());
      if (!options.json_path.empty()) report.write(options.json_path);
    }
    if (options.verify && total_mismatches > 0) status = 3;
  } catch (const cachecomm::invalid_argument& error) {
    // Bad sizes or decomposition: every rank finds the same problem, so all can stop cleanly.
    if (world_rank == 0) std::fprintf(stderr, "cachecomm-laplace: %s\n", error.what());
    status = 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cachecomm-laplace (rank %d): %s\n", world_rank, error.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return status;
}
