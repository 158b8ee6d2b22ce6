// cachecomm-bench: one subcommand per suite; every suite writes the JSON of the contract.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "cachecomm/error.hpp"
#include "common/suite.hpp"

namespace cachecomm::bench {

namespace {
std::vector<std::unique_ptr<suite>>& suites() {
  static std::vector<std::unique_ptr<suite>> all;
  return all;
}
}  // namespace

void register_suite(std::unique_ptr<suite> entry) {
  suites().push_back(std::move(entry));
}

std::vector<suite*> registered_suites() {
  std::vector<suite*> all;
  for (auto& entry : suites()) all.push_back(entry.get());
  std::sort(all.begin(), all.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
  return all;
}

}  // namespace cachecomm::bench

int main(int argc, char** argv) {
  using namespace cachecomm::bench;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  CLI::App app{"cachecomm-bench: measure cachecomm beside the system MPI (run under mpirun)"};
  app.require_subcommand(1);
  app.get_formatter()->column_width(40);
  common_options options;
  std::vector<std::pair<CLI::App*, suite*>> commands;
  for (suite* entry : registered_suites()) {
    CLI::App* command = app.add_subcommand(entry->name(), entry->description());
    command->add_option("--json", options.json_path, "Write the results as JSON to this file");
    command->add_flag("--quick", options.quick, "Tiny sizes and few iterations (smoke test)");
    command->add_flag("--quiet", options.quiet, "Do not print the table");
    entry->add_options(*command);
    commands.emplace_back(command, entry);
  }
  int code = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    code = rank == 0 ? app.exit(error) : (error.get_exit_code());
    MPI_Finalize();
    return code;
  }
  try {
    for (auto& [command, entry] : commands) {
      if (command->parsed()) code = entry->run(options);
    }
  } catch (const cachecomm::error& failure) {
    std::fprintf(stderr, "cachecomm-bench (rank %d): %s\n", rank, failure.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return code;
}
