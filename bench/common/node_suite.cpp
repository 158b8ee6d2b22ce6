#include "common/node_suite.hpp"

#include <algorithm>
#include <cstdio>

namespace cachecomm::bench {

namespace {
std::vector<node_step>& steps() {
  static std::vector<node_step> all;
  return all;
}

class node_step_suite final : public suite {
 public:
  explicit node_step_suite(node_step step) : m_step(std::move(step)) {}
  [[nodiscard]] std::string name() const override { return m_step.name; }
  [[nodiscard]] std::string description() const override { return m_step.description; }
  void add_options(CLI::App& command) override {
    command.add_flag("--brief", m_brief, "Medium effort (what `all` uses)");
    command.add_option("--sizes", m_sizes, "Message sizes in bytes (pingpong, bandwidth)")
        ->delimiter(',');
  }
  int run(const common_options& options) override {
    cachecomm::comm comm(MPI_COMM_WORLD);
    report results(m_step.name, comm.mpi_comm());
    node_run context{comm, results,
                     options.quick ? effort::quick : (m_brief ? effort::brief : effort::full),
                     comm.rank() == 0 && !options.quiet};
    context.sizes = m_sizes;
    if (context.print) {
      std::printf("cachecomm-bench %s: %d ranks, %d processing units%s\n", m_step.name.c_str(),
                  comm.size(), comm.topology().cores_available,
                  results.oversubscribed() ? ", OVERSUBSCRIBED (ranks outnumber cores)" : "");
    }
    m_step.run(context);
    if (context.print) print_results_since(results, 0, m_step.table_columns);
    if (comm.rank() == 0 && !options.json_path.empty()) results.write(options.json_path);
    return 0;
  }

 private:
  node_step m_step;
  bool m_brief = false;
  std::vector<std::size_t> m_sizes;
};
}  // namespace

void register_node_step(node_step step) {
  steps().push_back(std::move(step));
}

std::vector<node_step> node_steps() {
  std::vector<node_step> sorted = steps();
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.order < b.order; });
  return sorted;
}

node_step_registration::node_step_registration(node_step step) {
  register_suite(std::make_unique<node_step_suite>(step));
  register_node_step(std::move(step));
}

void print_results_since(const report& results, std::size_t first,
                         const std::vector<std::string>& columns) {
  json slice = json::array();
  const json& all = results.document()["results"];
  for (std::size_t index = first; index < all.size(); ++index) slice.push_back(all[index]);
  print_table(slice, columns);
  for (const auto& note : results.document()["notes"])
    std::printf("note: %s\n", note.get<std::string>().c_str());
}

}  // namespace cachecomm::bench

#include <unistd.h>

namespace cachecomm::bench {
void on_rank_zero_alone(MPI_Comm comm, const std::function<void()>& work) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) work();
  MPI_Request done = MPI_REQUEST_NULL;
  MPI_Ibarrier(comm, &done);
  int finished = 0;
  while (finished == 0) {
    MPI_Test(&done, &finished, MPI_STATUS_IGNORE);
    if (finished == 0 && rank != 0) ::usleep(500);
  }
}
}  // namespace cachecomm::bench
