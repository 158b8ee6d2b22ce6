// cachecomm-info: what cachecomm sees on this node and what it would choose, with the reasons.
// Run it under mpirun with the job's rank count to see the choices that job would get.
#include <mpi.h>

#include <cstdio>

#include "cachecomm/cachecomm.hpp"
#include "topo/machine.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  try {
    cachecomm::comm comm(MPI_COMM_WORLD);
    if (comm.rank() == 0) {
      const auto& machine = cachecomm::detail::this_machine();
      const auto& topology = comm.topology();
      std::printf("cachecomm %s\n", cachecomm::version);
      std::printf("machine: %s, %s, %d cores, %d processing units\n", machine.host.c_str(),
                  machine.cpu_model.empty() ? "unknown CPU" : machine.cpu_model.c_str(), machine.cores,
                  machine.processing_units);
      std::printf("job: %d ranks on %d node(s)%s; this node: %d ranks%s\n", comm.size(), topology.node_count,
                  topology.forced_split ? " (forced by CACHECOMM_RANKS_PER_NODE)" : "", topology.node_size,
                  topology.oversubscribed ? ", OVERSUBSCRIBED (ranks outnumber processing units)" : "");
      std::printf("cores of node ranks:");
      for (int core : topology.core_of_node_rank) std::printf(" %d", core);
      std::printf("\n");
      const auto& policy = comm.waiting();
      std::printf("waiting: %s -> spin %u polls, yield %u times, then sleep on a futex; timeout %.0f s\n",
                  std::string(cachecomm::to_string(policy.mode)).c_str(), policy.spin_iterations,
                  policy.yield_iterations, policy.timeout_seconds);
      std::printf("barrier: %s (%s)\n", std::string(cachecomm::to_string(comm.default_barrier())).c_str(),
                  comm.default_barrier_reason().c_str());
      std::printf("\nsettings (CACHECOMM_*):\n");
      for (const auto& setting : cachecomm::declared_settings()) {
        std::printf("  %-28s = %-10s %s%s\n", setting.name.c_str(), comm.settings().get(setting.name).c_str(),
                    comm.settings().is_explicit(setting.name) ? "[set] " : "", setting.description.c_str());
      }
      for (const auto& unknown : comm.settings().unknown_names()) {
        std::printf("warning: %s is set but no setting has that name\n", unknown.c_str());
      }
    }
  } catch (const cachecomm::error& failure) {
    std::fprintf(stderr, "cachecomm-info: %s\n", failure.what());
    code = 1;
  }
  MPI_Finalize();
  return code;
}
