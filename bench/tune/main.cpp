// cachecomm-tune: measures, on this node and at this job's rank count, every algorithm of every
// tuned collective beside the system MPI's own call (the `cachecomm-bench coll` measurements, per
// size, hot and cold buffers) and writes the tuning file the library loads (CACHECOMM_TUNING).
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cachecomm/comm.hpp"
#include "cachecomm/config.hpp"
#include "cachecomm/error.hpp"
#include "coll/tuning_loader.hpp"
#include "suites/coll_ops.hpp"
#include "tune/tuning_choice.hpp"

namespace cachecomm::bench {

namespace {

struct tune_options {
  std::string output;     ///< the tuning file (default: the library's default location)
  std::string json_path;  ///< the benchmark rows as well (cachecomm-report can plot them)
  std::size_t step = 2;   ///< size ratio between measured sizes
  std::size_t max_bytes = 16U << 20;  ///< larger messages take the largest measured size
  std::vector<std::string> ops = {"barrier", "bcast",   "reduce",   "allreduce", "allgather",
                                  "gather",  "scatter", "alltoall", "allgatherv"};
  timing_plan plan{2, 7, 16};  // large sizes: 2 calls per sample (coll_data's plan_for)
  bool quick = false;          ///< CTest: 8 B .. 4 KiB, few samples
};

std::vector<std::size_t> sizes_of(const tune_options& options) {
  std::vector<std::size_t> sizes;
  const std::size_t top = options.quick ? 4096 : options.max_bytes;
  for (std::size_t size = 8; size <= top; size *= options.step) sizes.push_back(size);
  if (sizes.back() != top) sizes.push_back(top);  // the largest size is always measured
  return sizes;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

/// The tables of the file at `path` other than the one for `key` (re-tuning replaces it), so one
/// file can hold several rank counts. A file that cannot be parsed is replaced, with a note.
std::vector<detail::tuning_table> other_tables(const std::string& path,
                                               const detail::tuning_key& key) {
  std::ifstream file(path);
  if (!file) return {};
  std::ostringstream text;
  text << file.rdbuf();
  try {
    std::vector<detail::tuning_table> tables = detail::parse_tuning_file(text.str());
    std::erase_if(tables, [&](const detail::tuning_table& table) { return table.key == key; });
    return tables;
  } catch (const detail::tuning_file_error& failure) {
    std::fprintf(stderr, "cachecomm-tune: replacing %s (%s)\n", path.c_str(), failure.what());
    return {};
  }
}

void write_file(const std::string& path, const std::vector<detail::tuning_table>& tables) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  // Written beside and renamed: a job reading the file meanwhile sees the old or the new one.
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    if (!out) throw std::runtime_error("cannot write " + temporary);
    out << detail::tuning_file_text(tables);
    if (!out.flush()) throw std::runtime_error("cannot write " + temporary);
  }
  std::filesystem::rename(temporary, path);
}

/// One line per operation and size: the choice, the built-in rule's choice and its ratio to the
/// best candidate in each mode (the same run).
void print_choices(const detail::tuning_table& table, const json& rows) {
  std::printf("%-9s %9s  %-14s %-22s %s\n", "op", "bytes", "choice", "built-in auto",
              "auto/best hot, cold");
  for (std::size_t op = 0; op < detail::tuned_op_count; ++op) {
    const std::string name(detail::to_string(static_cast<detail::tuned_op>(op)));
    for (const detail::tuning_entry& entry : table.entries[op]) {
      std::string automatic;
      std::string ratios;
      for (const char* mode : {"hot", "cold"}) {
        double best = 0;
        double chosen_by_rules = 0;
        for (const json& row : rows) {
          if (row.value("op", "") != name || row.value("bytes", std::size_t{0}) != entry.bytes ||
              row.value("buffers", "hot") != mode)
            continue;
          const double median = row.at("median_us").get<double>();
          // The barrier marks its automatic choice with "default" instead of an auto row.
          if (row.value("algorithm", "").starts_with("auto") || row.value("default", false)) {
            chosen_by_rules = median;
            automatic = row.value("algorithm", "");
          }
          if (!row.value("algorithm", "").starts_with("auto") && (best == 0 || median < best))
            best = median;
        }
        if (chosen_by_rules > 0 && best > 0) {
          char text[32];
          std::snprintf(text, sizeof text, "%s%.2f", ratios.empty() ? "" : ", ",
                        chosen_by_rules / best);
          ratios += text;
        }
      }
      std::printf("%-9s %9zu  %-14s %-22s %s\n", name.c_str(), entry.bytes, entry.choice.c_str(),
                  automatic.c_str(), ratios.c_str());
    }
  }
}

int tune(const tune_options& options) {
  // The automatic rows must show the built-in rules, not a tuning file from an earlier run.
  config settings = config::from_environment();
  settings.set("CACHECOMM_TUNING", "off");
  comm c(MPI_COMM_WORLD, settings);
  const bool root = c.rank() == 0;
  if (c.topology().node_count != 1) {
    if (root) std::fprintf(stderr, "cachecomm-tune: run it on one node (the file is per node)\n");
    return 2;
  }
  const detail::tuning_key key =
      detail::key_of_this_node(c.topology().node_size, c.topology().oversubscribed);
  const std::string output =
      options.output.empty() ? detail::default_tuning_path() : options.output;
  if (output.empty()) {
    if (root) std::fprintf(stderr, "cachecomm-tune: no HOME: give --output\n");
    return 2;
  }
  if (root) {
    std::printf("cachecomm-tune: %d ranks on one node%s; %s, %d cores, %s; %s\n", c.size(),
                key.oversubscribed ? " (OVERSUBSCRIBED)" : "", key.cpu_model.c_str(), key.cores,
                key.caches.c_str(), key.mpi_library.c_str());
    std::fflush(stdout);
  }
  report results("tune", c.mpi_comm());
  common_options common;
  common.quick = options.quick;
  coll_context context{common, c, results, options.plan, {}};
  context.timings = {"per-call"};
  const std::vector<std::size_t> sizes = sizes_of(options);
  const std::size_t steps =
      options.ops.size() * sizes.size() -
      (std::find(options.ops.begin(), options.ops.end(), "barrier") != options.ops.end()
           ? sizes.size() - 1
           : 0);
  std::size_t step = 0;
  const double start = now_seconds();
  for (const std::string& name : options.ops) {
    const auto& ops = coll_ops();
    auto found =
        std::find_if(ops.begin(), ops.end(), [&](const coll_op& op) { return op.name == name; });
    if (found == ops.end()) {
      if (root) std::fprintf(stderr, "cachecomm-tune: unknown operation %s\n", name.c_str());
      return 2;
    }
    const bool sized = name != "barrier";
    for (std::size_t size : sized ? sizes : std::vector<std::size_t>{0}) {
      const double begun = now_seconds();
      context.sizes = {size};
      found->run(context);
      ++step;
      if (root) {
        std::fprintf(stderr, "cachecomm-tune: [%2zu/%zu] %-9s %9zu B  %5.1f s (%.0f s so far)\n",
                     step, steps, name.c_str(), size, now_seconds() - begun, now_seconds() - start);
      }
    }
  }
  const json& rows = results.document()["results"];
  if (root) {
    const detail::tuning_table table = table_from_rows(rows, key, utc_now());
    std::vector<detail::tuning_table> tables = other_tables(output, key);
    tables.push_back(table);
    write_file(output, tables);
    print_choices(table, rows);
    std::printf("cachecomm-tune: wrote %s (%zu table%s) in %.1f s\n", output.c_str(), tables.size(),
                tables.size() == 1 ? "" : "s", now_seconds() - start);
    if (!options.json_path.empty()) results.write(options.json_path);
  }
  return 0;
}

}  // namespace

}  // namespace cachecomm::bench

int main(int argc, char** argv) {
  using namespace cachecomm::bench;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CLI::App app{
      "cachecomm-tune: measure every collective algorithm and the system MPI on this node and "
      "write the tuning file (run under mpirun with the ranks per node of your jobs)"};
  tune_options options;
  app.add_option("--output,-o", options.output,
                 "Tuning file to write (default: " + cachecomm::detail::default_tuning_path() +
                     "); tables for other rank counts in it are kept");
  app.add_option("--json", options.json_path, "Also write the measured rows (benchmark JSON)");
  app.add_option("--step", options.step,
                 "Ratio between measured sizes (4: every other power of two, half the time)")
      ->check(CLI::Range(2, 16))
      ->capture_default_str();
  app.add_option("--max-bytes", options.max_bytes, "Largest size measured")
      ->check(CLI::Range(8, 1 << 28))
      ->capture_default_str();
  app.add_option(
         "--op", options.ops,
         "Operations (barrier, bcast, reduce, allreduce, allgather, gather, scatter, alltoall, "
         "allgatherv)")
      ->delimiter(',');
  app.add_option("--batches", options.plan.batches, "Samples per candidate")->capture_default_str();
  app.add_option("--iters", options.plan.iterations_per_batch, "Calls per sample (small sizes)")
      ->capture_default_str();
  app.add_flag("--quick", options.quick, "Sizes up to 4 KiB only (tests)");
  int code = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    code = rank == 0 ? app.exit(error) : error.get_exit_code();
    MPI_Finalize();
    return code;
  }
  try {
    code = tune(options);
  } catch (const std::exception& failure) {
    std::fprintf(stderr, "cachecomm-tune: %s\n", failure.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return code;
}
