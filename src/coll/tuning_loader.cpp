// Node rank 0 reads the tuning file; the choices travel to the node's other ranks as bytes.
#include "coll/tuning_loader.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "cachecomm/config.hpp"
#include "core/comm_impl.hpp"
#include "core/mpi_check.hpp"
#include "preload/mpi_identity.hpp"
#include "topo/machine.hpp"

namespace cachecomm::detail {

namespace {

const setting_declaration tuning_setting{
    "CACHECOMM_TUNING", "auto",
    "Tuning file written by cachecomm-tune: measured algorithm choices per operation and size "
    "(auto: the default location cachecomm-info names, used when present; off: the built-in "
    "rules only). A file for another node, rank count or MPI is ignored with a warning."};

/// One line on stderr per distinct problem and process (every comm of a run would repeat it).
void warn_once(const std::string& text) {
  static std::mutex mutex;
  static std::set<std::string> said;
  const std::lock_guard lock(mutex);
  if (!said.insert(text).second) return;
  std::fprintf(stderr, "cachecomm: warning: %s; using the built-in rules\n", text.c_str());
}

/// Node rank 0's decision: the choices, or none and why (a warning when the user should know).
node_tuning read_tuning(const comm_impl& impl) {
  node_tuning result;
  const std::string setting = impl.settings().get("CACHECOMM_TUNING");
  if (setting == "off" || setting == "0") {
    result.status = "off (CACHECOMM_TUNING=off): built-in rules";
    return result;
  }
  if (impl.topology().node_size == 1) {
    result.status = "one rank on this node: nothing to choose between";
    return result;
  }
  const bool by_default = setting == "auto" || setting.empty();
  const std::string path = by_default ? default_tuning_path() : setting;
  std::ifstream file(path);
  if (!file) {
    result.status = "no tuning file at " + (path.empty() ? "(no home)" : path) + ": built-in rules";
    if (!by_default) warn_once("tuning file " + path + " cannot be read");
    return result;
  }
  std::ostringstream text;
  text << file.rdbuf();
  try {
    const std::vector<tuning_table> tables = parse_tuning_file(text.str());
    const tuning_key key =
        key_of_this_node(impl.topology().node_size, impl.topology().oversubscribed);
    std::string why_not;
    const tuning_table* table = matching_table(tables, key, why_not);
    if (table == nullptr) {
      result.status = path + " is for another node: " + why_not + ": built-in rules";
      warn_once("tuning file " + path + " was not measured on this node: " + why_not);
      return result;
    }
    result.choices = choices_of(*table);
    result.status = path + " (measured " + table->created + ")";
  } catch (const tuning_file_error& failure) {
    result.status = path + " is not usable (" + failure.what() + "): built-in rules";
    warn_once("tuning file " + path + " is not usable: " + failure.what());
  }
  return result;
}

}  // namespace

std::string default_tuning_path() {
  if (const char* config_home = std::getenv("XDG_CONFIG_HOME");
      config_home != nullptr && *config_home != '\0') {
    return std::string(config_home) + "/cachecomm/tuning.json";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.config/cachecomm/tuning.json";
  }
  return {};
}

tuning_key key_of_this_node(int ranks_per_node, bool oversubscribed) {
  const machine_description& machine = this_machine();
  tuning_key key;
  key.cpu_model = machine.cpu_model;
  key.cores = machine.cores;
  key.caches = machine.caches;
  key.ranks_per_node = ranks_per_node;
  key.oversubscribed = oversubscribed;
  key.mpi_library = preload::running_mpi().name();
  return key;
}

node_tuning load_node_tuning(comm_impl& impl) {
  node_tuning result;
  // Only node rank 0 looks at the file: ranks may see different files (or environments), and a
  // decision that differed between ranks would deadlock the collectives.
  if (impl.topology().node_rank == 0) result = read_tuning(impl);
  if (impl.topology().node_size > 1) {
    CACHECOMM_MPI(MPI_Bcast(result.choices.choice.data(),
                            static_cast<int>(sizeof(result.choices.choice)), MPI_BYTE, 0,
                            impl.node()));
  }
  if (impl.topology().node_rank != 0) result.status = "as node rank 0 decided";
  return result;
}

}  // namespace cachecomm::detail
