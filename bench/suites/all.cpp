// `cachecomm-bench all`: every node characterization step (limits, pingpong, bandwidth, threads,
// io) at a medium effort, about two minutes on two cores, with a progress line on the terminal.
// Each result carries the step it came from in "suite"; the whole run is one JSON document.
#include <unistd.h>

#include <cstdio>

#include "common/node_suite.hpp"
#include "common/statistics.hpp"

namespace cachecomm::bench {
namespace {

class all_suite final : public suite {
 public:
  [[nodiscard]] std::string name() const override { return "all"; }
  [[nodiscard]] std::string description() const override {
    return "Everything that characterizes the node (limits, pingpong, bandwidth, threads, io), "
           "about two minutes";
  }
  void add_options(CLI::App& command) override {
    command.add_option("--skip", m_skip, "Steps to leave out (comma-separated)")->delimiter(',');
    command.add_flag("--full", m_full, "Each step at its full size (much longer)");
  }
  int run(const common_options& options) override {
    cachecomm::comm comm(MPI_COMM_WORLD);
    report results("all", comm.mpi_comm());
    const bool show = comm.rank() == 0 && !options.quiet;
    const bool terminal = show && ::isatty(STDERR_FILENO) != 0;
    std::vector<node_step> steps;
    for (auto& step : node_steps()) {
      if (std::find(m_skip.begin(), m_skip.end(), step.name) == m_skip.end()) steps.push_back(step);
    }
    if (show) {
      std::fprintf(stderr, "cachecomm-bench all: %d ranks, %d processing units%s; %zu steps\n",
                   comm.size(), comm.topology().cores_available,
                   results.oversubscribed() ? ", OVERSUBSCRIBED" : "", steps.size());
    }
    const double begin = now_seconds();
    for (std::size_t index = 0; index < steps.size(); ++index) {
      const node_step& step = steps[index];
      const double started = now_seconds();
      double last_shown = -1;
      auto show_progress = [&, index](double fraction) {
        if (!show) return;
        // On a terminal the line is redrawn in place; in a log, only every quarter gets a line.
        if (!terminal && fraction - last_shown < 0.25 && fraction < 1.0) return;
        last_shown = fraction;
        const int width = 30;
        int filled = static_cast<int>(fraction * width + 0.5);
        std::fprintf(stderr, "%s[%zu/%zu] %-10s [%s%s] %3.0f%%  %5.1f s%s", terminal ? "\r" : "",
                     index + 1, steps.size(), step.name.c_str(),
                     std::string(static_cast<std::size_t>(filled), '#').c_str(),
                     std::string(static_cast<std::size_t>(width - filled), '.').c_str(),
                     100 * fraction, now_seconds() - begin, terminal ? "" : "\n");
        std::fflush(stderr);
      };
      node_run context{comm, results,
                       options.quick ? effort::quick : (m_full ? effort::full : effort::brief),
                       false, show_progress};
      std::size_t first = results.document()["results"].size();
      show_progress(0);
      step.run(context);
      for (std::size_t result = first; result < results.document()["results"].size(); ++result) {
        results.document()["results"][result]["suite"] = step.name;
      }
      if (show) {
        std::fprintf(stderr, "%s[%zu/%zu] %-10s done in %.1f s%40s\n", terminal ? "\r" : "",
                     index + 1, steps.size(), step.name.c_str(), now_seconds() - started, "");
      }
      if (show && !options.quiet) {
        std::printf("\n== %s ==\n", step.name.c_str());
        print_results_since(results, first, step.table_columns);
        std::fflush(stdout);
      }
    }
    if (show)
      std::fprintf(stderr, "cachecomm-bench all: finished in %.1f s\n", now_seconds() - begin);
    if (comm.rank() == 0 && !options.json_path.empty()) {
      results.write(options.json_path);
      if (show)
        std::fprintf(stderr, "results: %s (plots: cachecomm-report %s -o DIR)\n",
                     options.json_path.c_str(), options.json_path.c_str());
    }
    return 0;
  }

 private:
  std::vector<std::string> m_skip;
  bool m_full = false;
};

const suite_registration<all_suite> registration;

}  // namespace
}  // namespace cachecomm::bench
