// A benchmark suite: a name, its options, and what it runs. Suites register themselves.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cachecomm::bench {

/// Options every suite has.
struct common_options {
  std::string json_path;  ///< --json FILE (written by rank 0)
  bool quick = false;     ///< --quick: tiny sizes and few iterations (CTest smoke runs)
  bool quiet = false;     ///< --quiet: no table
};

class suite {
 public:
  virtual ~suite() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual std::string description() const = 0;
  /// Adds the suite's own options to its subcommand.
  virtual void add_options(CLI::App& command) = 0;
  /// Runs under MPI (already initialized); returns a process exit code.
  virtual int run(const common_options& options) = 0;
};

/// Called from a static object in each suite's file.
void register_suite(std::unique_ptr<suite> entry);
[[nodiscard]] std::vector<suite*> registered_suites();

template <typename Suite>
struct suite_registration {
  suite_registration() { register_suite(std::make_unique<Suite>()); }
};

}  // namespace cachecomm::bench
