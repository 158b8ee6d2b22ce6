#include "common/report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "cachecomm/version.hpp"
#include "core/machine_sharing.hpp"
#include "topo/machine.hpp"

namespace cachecomm::bench {

std::string mpi_library_name() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string name(text, static_cast<std::size_t>(length));
  auto cut = name.find_first_of(",\n");
  if (cut != std::string::npos) name.resize(cut);
  while (!name.empty() && (name.back() == ' ' || name.back() == '\n')) name.pop_back();
  return name;
}

report::report(std::string suite, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  MPI_Comm shared = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
  // The library's own judgement (affinity masks included), on any of the job's machines.
  const int here = detail::share_machine(shared).oversubscribed ? 1 : 0;
  MPI_Comm_free(&shared);
  int anywhere = here;
  MPI_Allreduce(&here, &anywhere, 1, MPI_INT, MPI_MAX, comm);
  const auto& machine = detail::this_machine();
  m_document = json{{"tool", "cachecomm-bench"},
                    {"version", cachecomm::version},
                    {"suite", std::move(suite)},
                    {"machine",
                     {{"host", machine.host},
                      {"cpu", machine.cpu_model},
                      {"cores", machine.cores},
                      {"processing_units", machine.processing_units},
                      {"mpi", mpi_library_name()}}},
                    {"np", size},
                    {"oversubscribed", anywhere != 0},
                    {"results", json::array()},
                    {"notes", json::array()}};
}

json& report::add(json fields, const summary& times_us) {
  fields["median_us"] = times_us.median;
  fields["p25_us"] = times_us.p25;
  fields["p75_us"] = times_us.p75;
  fields["min_us"] = times_us.min;
  if (!fields.contains("iters")) fields["iters"] = times_us.samples;
  return add(std::move(fields));
}

json& report::add(json fields) {
  m_document["results"].push_back(std::move(fields));
  return m_document["results"].back();
}

void report::write(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << m_document.dump(2) << '\n';
}

namespace {
std::string cell_text(const json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    char buffer[32];
    double number = value.get<double>();
    std::snprintf(buffer, sizeof buffer, number >= 100 ? "%.1f" : (number >= 1 ? "%.3f" : "%.4f"),
                  number);
    return buffer;
  }
  return value.dump();
}
}  // namespace

void print_table(const json& results, const std::vector<std::string>& columns) {
  std::vector<std::size_t> widths;
  for (const auto& column : columns) widths.push_back(column.size());
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : results) {
    std::vector<std::string> line;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      line.push_back(row.contains(columns[i]) ? cell_text(row[columns[i]]) : "");
      widths[i] = std::max(widths[i], line.back().size());
    }
    cells.push_back(std::move(line));
  }
  for (std::size_t i = 0; i < columns.size(); ++i)
    std::printf("%-*s  ", static_cast<int>(widths[i]), columns[i].c_str());
  std::printf("\n");
  for (std::size_t i = 0; i < columns.size(); ++i)
    std::printf("%s  ", std::string(widths[i], '-').c_str());
  std::printf("\n");
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < columns.size(); ++i)
      std::printf("%-*s  ", static_cast<int>(widths[i]), line[i].c_str());
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace cachecomm::bench
