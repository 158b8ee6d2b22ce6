// The JSON document every suite writes (see shared/conventions/benchmarks.md) and its table.
#pragma once

#include <mpi.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/statistics.hpp"

namespace cachecomm::bench {

using json = nlohmann::ordered_json;

class report {
 public:
  /// Collective over `comm` (gathers how many ranks share each machine).
  report(std::string suite, MPI_Comm comm);

  /// Adds one result; the time fields come from `times_us` (per-iteration microseconds).
  json& add(json fields, const summary& times_us);
  /// Adds a result whose fields are all given by the caller.
  json& add(json fields);

  [[nodiscard]] const json& document() const { return m_document; }
  [[nodiscard]] json& document() { return m_document; }
  [[nodiscard]] bool oversubscribed() const { return m_document["oversubscribed"].get<bool>(); }
  /// Writes the document to `path` (rank 0 only should call it).
  void write(const std::string& path) const;
  /// Prints a note line under the table.
  void note(const std::string& text) { m_document["notes"].push_back(text); }

 private:
  json m_document;
};

/// Prints `rows` as an aligned table: `columns` are result keys, missing ones shown blank.
void print_table(const json& results, const std::vector<std::string>& columns);

/// Name and version of the MPI library, e.g. "Open MPI v4.1.4".
[[nodiscard]] std::string mpi_library_name();

}  // namespace cachecomm::bench
