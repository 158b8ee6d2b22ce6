// cachecomm-info: what cachecomm sees on this node and what it would choose, with the reasons.
// Run it under mpirun with the job's rank count to see the choices that job would get.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "cachecomm/cachecomm.hpp"
#include "coll/algorithm_registry.hpp"
#include "coll/barrier.hpp"
#include "coll/coll_engine.hpp"
#include "coll/tuning_loader.hpp"
#include "core/comm_impl.hpp"
#include "preload/mpi_identity.hpp"
#include "topo/machine.hpp"

namespace {

// The MPI this build is for, and the one this process runs on when they differ.
void print_mpi() {
  namespace preload = cachecomm::detail::preload;
  const auto built = preload::built_mpi();
  const auto running = preload::running_mpi();
  std::printf("MPI: built for %s (%s)\n", built.name().c_str(), built.library.c_str());
  if (!preload::compatible(built, running)) {
    std::printf(
        "MPI: running on %s (%s): NOT the MPI this build is for; the preload library would "
        "pass every call through\n",
        running.name().c_str(), running.library.c_str());
  }
}

// One line per registered algorithm, marked where it would fall back on this node.
template <typename Entry>
void print_algorithms(const char* operation, std::span<const Entry> registry,
                      const cachecomm::detail::node_shape& shape) {
  for (const Entry& entry : registry) {
    std::printf("  %-9s %-15s %s%s\n", operation, std::string(entry.name).c_str(),
                entry.applicable(shape) ? "" : "[falls back on this node] ",
                std::string(entry.description).c_str());
  }
}

/// --measure: enough calls of each listed operation and size for online selection to settle, so
/// that the rows below show what it measured and chose on this node.
void measure_online(cachecomm::comm& comm, const std::vector<std::size_t>& sizes) {
  constexpr int calls = cachecomm::online_selection_trial_calls;
  const auto ranks = static_cast<std::size_t>(comm.size());
  for (const std::size_t bytes : sizes) {
    const std::size_t count = (bytes + 7) / 8;
    std::vector<long long> input(count, comm.rank());
    std::vector<long long> output(count * ranks);
    for (int call = 0; call < calls; ++call) {
      cachecomm::broadcast(comm, input.data(), count, cachecomm::datatype::int64, 0);
      cachecomm::reduce(comm, input.data(), output.data(), count, cachecomm::datatype::int64,
                        cachecomm::reduce_op::sum, 0);
      cachecomm::allreduce(comm, input.data(), output.data(), count, cachecomm::datatype::int64,
                           cachecomm::reduce_op::sum);
      cachecomm::allgather(comm, input.data(), output.data(), count, cachecomm::datatype::int64);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool measure = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--measure") == 0) {
      measure = true;
      continue;
    }
    if (std::strcmp(argv[i], "--version") == 0) {
      std::printf("cachecomm %s\n", cachecomm::version);
      print_mpi();  // MPI_Get_library_version needs no MPI_Init
      return 0;
    }
    std::fprintf(
        stderr,
        "cachecomm-info: unknown argument '%s'\nusage: [mpirun -n N] cachecomm-info "
        "[--version] [--measure]\n  --measure: call the listed sizes until online selection "
        "settles, and show what it chose\n",
        argv[i]);
    return 2;
  }
  MPI_Init(&argc, &argv);
  int code = 0;
  try {
    // --measure settles every bucket within online_selection_trial_calls: the trial unpaced.
    cachecomm::config settings = cachecomm::config::from_environment();
    if (measure && !settings.is_explicit("CACHECOMM_ONLINE_BUDGET"))
      settings.set("CACHECOMM_ONLINE_BUDGET", "0");
    cachecomm::comm comm(MPI_COMM_WORLD, settings);
    // The collectives' state is built collectively on first use, so every rank asks.
    struct choice_row {
      const char* operation;
      std::size_t bytes;
      cachecomm::algorithm_choice choice;
    };
    std::vector<choice_row> choices;
    // Allgather: bytes of one rank's block.
    const std::vector<std::size_t> sizes = {8, 4096, 65536, std::size_t{1} << 20,
                                            std::size_t{4} << 20};
    if (measure) measure_online(comm, sizes);
    for (const std::size_t bytes : sizes) {
      choices.push_back({"broadcast", bytes, cachecomm::explain_broadcast(comm, bytes)});
      choices.push_back({"reduce", bytes, cachecomm::explain_reduce(comm, bytes)});
      choices.push_back({"allreduce", bytes, cachecomm::explain_allreduce(comm, bytes)});
      choices.push_back({"allgather", bytes, cachecomm::explain_allgather(comm, bytes)});
    }
    const bool single_copy = cachecomm::single_copy_available(comm);
    const cachecomm::detail::coll_engine& engine = cachecomm::detail::coll_engine::of(comm.impl());
    const cachecomm::detail::node_shape shape = engine.shape();
    if (comm.rank() == 0) {
      const auto& machine = cachecomm::detail::this_machine();
      const auto& topology = comm.topology();
      std::printf("cachecomm %s\n", cachecomm::version);
      print_mpi();
      std::printf("machine: %s, %s, %d cores, %d processing units\n", machine.host.c_str(),
                  machine.cpu_model.empty() ? "unknown CPU" : machine.cpu_model.c_str(),
                  machine.cores, machine.processing_units);
      std::printf(
          "caches: %s; collectives' data region: 2 halves of %zu KiB (the rings go through all "
          "of each, the pipelines chunk from its first %zu KiB)\n",
          machine.caches.empty() ? "unknown" : machine.caches.c_str(), engine.half_bytes() >> 10U,
          engine.tuning().region_bytes >> 10U);
      std::printf(
          "job: %d ranks on %d node(s)%s; this node: %d ranks; the machine: %d ranks may run on %d "
          "processing units%s\n",
          comm.size(), topology.node_count,
          topology.forced_split ? " (forced by CACHECOMM_RANKS_PER_NODE)" : "", topology.node_size,
          topology.ranks_sharing_memory, topology.cores_available,
          topology.oversubscribed
              ? ", OVERSUBSCRIBED (more ranks than processing units, or ranks pinned to share one)"
              : "");
      std::printf("cores of node ranks:");
      for (int core : topology.core_of_node_rank) std::printf(" %d", core);
      std::printf("\n");
      const auto& policy = comm.waiting();
      std::printf(
          "waiting: %s -> spin %u polls, yield %u times, then sleep on a futex; timeout %.0f s\n",
          std::string(cachecomm::to_string(policy.mode)).c_str(), policy.spin_iterations,
          policy.yield_iterations, policy.timeout_seconds);
      std::printf("barrier: %s (%s)\n",
                  std::string(cachecomm::to_string(comm.default_barrier())).c_str(),
                  comm.default_barrier_reason().c_str());
      std::printf(
          "shared segments: %s\n",
          comm.impl().control_sharing() == cachecomm::detail::segment_sharing::anonymous
              ? "memfd, opened by node peers through /proc/<pid>/fd (never named in /dev/shm)"
              : "named fallback (a rank could not open /proc/<pid>/fd): /dev/shm names live until "
                "every rank has opened them");
      std::printf("single copy (cross-memory attach): %s\n",
                  single_copy ? "available"
                              : "refused or disabled: large broadcasts copy through shared memory");
      const std::string default_path = cachecomm::detail::default_tuning_path();
      std::printf(
          "tuning file: %s\n  (CACHECOMM_TUNING; default location: %s; write it with "
          "mpirun -n <ranks per node> cachecomm-tune)\n",
          cachecomm::detail::tuning_of(comm.impl()).status.c_str(),
          default_path.empty() ? "none, HOME is not set" : default_path.c_str());
      const auto& selector = cachecomm::detail::coll_engine::of(comm.impl()).online();
      const auto online = selector.mode();
      using cachecomm::detail::online_mode;
      std::printf(
          "online selection: %s",
          online == online_mode::off
              ? "off (CACHECOMM_ONLINE_SELECTION=off): the tuning file or the built-in rules"
          : topology.node_count != 1 || topology.node_size < 2
              ? "on, but not on this communicator (it needs one node of several ranks)"
          : selector.automatic_off_here()
              ? "auto, off on this oversubscribed node (a trial costs more than it gains here): "
                "the tuning file or the built-in rules; CACHECOMM_ONLINE_SELECTION=on measures "
                "anyway"
          : online == online_mode::on
              ? "on: where no tuning file or CACHECOMM_<OP> decides, the first calls of each "
                "operation and power-of-two size try every candidate, 3 calls each, then the two "
                "closest 8 calls in a row each, and keep the fastest (run with --measure to see "
                "what it picks here)"
              : "auto: as on, for messages (one rank's block) from ");
      if (online == online_mode::automatic && !selector.automatic_off_here() &&
          topology.node_count == 1 && topology.node_size > 1) {
        std::printf(
            "%zu KiB; smaller ones take the built-in rules (run with --measure to see what "
            "it picks here)",
            cachecomm::detail::online_selector::automatic_min_bytes >> 10);
      }
      std::printf("\n");
      std::printf("collectives (node phase; across nodes leaders add an MPI step):\n");
      for (const auto& row : choices) {
        std::printf("  %-9s %8zu B: %-15s %s\n", row.operation, row.bytes,
                    row.choice.algorithm.c_str(), row.choice.reason.c_str());
      }
      std::printf(
          "algorithms (by name in CACHECOMM_BARRIER, _BCAST, _REDUCE, _ALLREDUCE, "
          "_ALLGATHER):\n");
      namespace detail = cachecomm::detail;
      print_algorithms("barrier", detail::barrier_registry(), shape);
      print_algorithms("broadcast", detail::broadcast_registry(), shape);
      print_algorithms("reduce", detail::reduce_registry(), shape);
      print_algorithms("allgather", detail::allgather_registry(), shape);
      std::printf("\nsettings (CACHECOMM_*):\n");
      for (const auto& setting : cachecomm::declared_settings()) {
        std::printf("  %-28s = %-10s %s%s\n", setting.name.c_str(),
                    comm.settings().get(setting.name).c_str(),
                    comm.settings().is_explicit(setting.name) ? "[set] " : "",
                    setting.description.c_str());
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
