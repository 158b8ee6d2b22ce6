// Loads the tuning file for a communicator's node, so that every node rank takes the same
// decisions: node rank 0 reads and checks the file, the node agrees through a broadcast.
#pragma once

#include <string>

#include "coll/tuning_table.hpp"

namespace cachecomm::detail {

class comm_impl;

struct node_tuning {
  tuning_choices choices;  ///< empty: the built-in rules decide
  /// Node rank 0: where the choices come from, or why none are used (for cachecomm-info).
  std::string status;
};

/// Collective over the node communicator of `impl`. Reads CACHECOMM_TUNING (default: the
/// file default_tuning_path() names, silently skipped when absent). A file that is missing (when
/// named), unreadable, corrupt, partial or tuned for another node or rank count gives one warning
/// line on stderr (once per process and file) and empty choices, never an error.
[[nodiscard]] node_tuning load_node_tuning(comm_impl& impl);

/// The default location: $XDG_CONFIG_HOME/cachecomm/tuning.json, else
/// $HOME/.config/cachecomm/tuning.json (empty when neither variable is set).
[[nodiscard]] std::string default_tuning_path();

/// The key of this node for `ranks_per_node` ranks (CPU, cores and caches from hwloc, the MPI this
/// process runs on).
[[nodiscard]] tuning_key key_of_this_node(int ranks_per_node, bool oversubscribed);

}  // namespace cachecomm::detail
