// Node characterization suites (pingpong, bandwidth, limits, threads, io): each is a step that
// `all` can also run in sequence at a medium effort, with a progress display.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cachecomm/comm.hpp"
#include "common/report.hpp"
#include "common/suite.hpp"

namespace cachecomm::bench {

/// How much a step measures: quick (CTest smoke), brief (inside `all`: about two minutes in
/// total on two cores), full (the step's own subcommand).
enum class effort { quick, brief, full };

struct node_run {
  cachecomm::comm& comm;
  report& results;
  effort level = effort::full;
  bool print = false;  ///< rank 0 prints tables
  std::function<void(double)> progress = [](double) {
  };  ///< fraction of this step done (rank 0 shows it)
  std::vector<std::size_t> sizes =
      {};  ///< --sizes: message sizes instead of the step's own (steps with sizes)
  /// Picks by effort.
  template <typename T>
  [[nodiscard]] T pick(T quick, T brief, T full) const {
    return level == effort::quick ? quick : (level == effort::brief ? brief : full);
  }
};

struct node_step {
  std::string name;
  std::string description;
  int order = 0;  ///< position in `all`
  std::function<void(node_run&)> run;
  std::vector<std::string> table_columns;
};

void register_node_step(node_step step);
[[nodiscard]] std::vector<node_step> node_steps();  ///< sorted by order

/// Registers the step and a `cachecomm-bench NAME` subcommand for it.
struct node_step_registration {
  explicit node_step_registration(node_step step);
};

/// Prints the results added since `first` with `columns`.
void print_results_since(const report& results, std::size_t first,
                         const std::vector<std::string>& columns);

}  // namespace cachecomm::bench

namespace cachecomm::bench {
/// Runs `work` on rank 0 while the other ranks wait without using a core (MPI's own barrier
/// would poll and steal the cores rank 0 measures with).
void on_rank_zero_alone(MPI_Comm comm, const std::function<void()>& work);
}  // namespace cachecomm::bench
