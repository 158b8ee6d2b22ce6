#include <cstdio>
#include <sstream>

#include "suites/coll_ops.hpp"

namespace cachecomm::bench {

namespace {
const std::vector<coll_op>& ops() {
  return coll_ops();
}

// Powers of 4 from 8 B to 4 MiB plus odd sizes that straddle protocol switches.
std::vector<std::size_t> default_sizes(bool quick) {
  if (quick) return {8, 100, 4096};
  std::vector<std::size_t> sizes;
  for (std::size_t size = 8; size <= (4U << 20); size *= 4) sizes.push_back(size);
  // 8 * 4^k stops at 2 MiB; 1 MiB and 4 MiB are the sizes the goals name.
  for (std::size_t odd : {13U, 1000U, 65537U, 1U << 20, (1U << 20) + 3U, 4U << 20})
    sizes.push_back(odd);
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

class coll_suite final : public suite {
 public:
  [[nodiscard]] std::string name() const override { return "coll"; }
  [[nodiscard]] std::string description() const override {
    return "Collectives and cache probes: every cachecomm algorithm beside the system MPI";
  }
  void add_options(CLI::App& command) override {
    std::string names;
    for (const auto& op : ops()) names += (names.empty() ? "" : ", ") + op.name;
    command.add_option("--op", m_ops, "Operations to measure (" + names + "); default: all")
        ->delimiter(',');
    command.add_option("--sizes", m_sizes, "Message sizes in bytes (default: 8 B .. 4 MiB)")
        ->delimiter(',');
    command
        .add_option("--buffers", m_buffers,
                    "Data collectives: buffer modes, hot (the same buffers every call, as OSU) "
                    "and/or cold (rewritten before every call)")
        ->delimiter(',')
        ->check(CLI::IsMember({"hot", "cold"}));
    command
        .add_option("--timing", m_timings,
                    "Data collectives: per-call (each call timed alone, ranks aligned before it) "
                    "and/or back-to-back (a batch of calls timed as a whole; hot buffers only)")
        ->delimiter(',')
        ->check(CLI::IsMember({"per-call", "back-to-back"}));
    command.add_option("--batches", m_plan.batches, "Samples per candidate")->capture_default_str();
    command.add_option("--iters", m_plan.iterations_per_batch, "Calls per sample")
        ->capture_default_str();
  }
  int run(const common_options& options) override {
    cachecomm::comm comm(MPI_COMM_WORLD, settling_settings());
    report results("coll", comm.mpi_comm());
    timing_plan plan = m_plan;
    if (options.quick) plan = timing_plan{5, 3, 10};
    coll_context context{options, comm, results, plan,
                         m_sizes.empty() ? default_sizes(options.quick) : m_sizes};
    if (!m_buffers.empty()) context.buffers = m_buffers;
    if (!m_timings.empty()) context.timings = m_timings;
    std::vector<std::string> wanted = m_ops;
    if (wanted.empty()) {
      for (const auto& op : ops()) wanted.push_back(op.name);
    }
    const bool print = comm.rank() == 0 && !options.quiet;
    if (print) {
      std::printf(
          "cachecomm-bench coll: %d ranks on %d node(s), %d processing units%s; barrier default: "
          "%s (%s)\n",
          comm.size(), comm.topology().node_count, comm.topology().cores_available,
          comm.topology().oversubscribed ? ", OVERSUBSCRIBED" : "",
          std::string(to_string(comm.default_barrier())).c_str(),
          comm.default_barrier_reason().c_str());
    }
    for (const auto& name : wanted) {
      auto found =
          std::find_if(ops().begin(), ops().end(), [&](const auto& op) { return op.name == name; });
      if (found == ops().end()) {
        if (comm.rank() == 0)
          std::fprintf(stderr, "cachecomm-bench coll: unknown --op %s\n", name.c_str());
        return 2;
      }
      std::size_t first = results.document()["results"].size();
      found->run(context);
      if (print) {
        std::printf("\n== %s ==\n", found->name.c_str());
        json slice = json::array();
        for (std::size_t i = first; i < results.document()["results"].size(); ++i) {
          slice.push_back(results.document()["results"][i]);
        }
        print_table(slice, found->table_columns);
      }
    }
    if (print) {
      for (const auto& note : results.document()["notes"])
        std::printf("note: %s\n", note.get<std::string>().c_str());
    }
    if (comm.rank() == 0 && !options.json_path.empty()) results.write(options.json_path);
    return 0;
  }

 private:
  std::vector<std::string> m_ops;
  std::vector<std::size_t> m_sizes;
  std::vector<std::string> m_buffers;
  std::vector<std::string> m_timings;
  timing_plan m_plan{200, 40, 200};
};

const suite_registration<coll_suite> registration;

}  // namespace

}  // namespace cachecomm::bench
