// Test fixture: writes a tuning file for this node at N ranks per node whose every choice is the
// system MPI's own call (the preload test then expects every collective passed through as
// mpi-faster). Usage: write_mpi_table FILE RANKS_PER_NODE
#include <cstdio>
#include <fstream>
#include <string>

#include "coll/tuning_loader.hpp"
#include "coll/tuning_table.hpp"
#include "topo/machine.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: write_mpi_table FILE RANKS_PER_NODE\n");
    return 2;
  }
  namespace detail = cachecomm::detail;
  const int ranks = std::stoi(argv[2]);
  detail::tuning_table table;
  table.key = detail::key_of_this_node(ranks, ranks > detail::this_machine().processing_units);
  table.created = "test fixture";
  for (auto& entries : table.entries) entries = {{8, "mpi", {}, {}}};
  std::ofstream(argv[1]) << detail::tuning_file_text({table});
  std::printf("wrote %s for %d ranks per node\n", argv[1], ranks);
  return 0;
}
