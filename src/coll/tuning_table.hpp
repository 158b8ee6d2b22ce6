// Measured algorithm selection: the tuning file that cachecomm-tune writes, parsed into tables,
// and the compact per-(operation, size bucket) choices that the automatic selection reads.
// Pure: no MPI, no engine (the loader that agrees on one table per node is tuning_loader.hpp).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cachecomm::detail {

/// The collectives a tuning file and online selection decide, in the order of `tuning_choices`.
/// From gather on, the block collectives whose block size every rank knows (the choice must be the
/// same on every rank).
enum class tuned_op : std::uint8_t {
  barrier,
  broadcast,
  reduce,
  allreduce,
  allgather,
  gather,
  scatter,
  alltoall,
  allgatherv,
  /// Keyed by the largest block that leaves the slots, which every rank learns in the call's
  /// first step (alltoallv.cpp): planned inside the call.
  alltoallv,
  /// A pair's gatherv, keyed by the non-root's block, which both ranks know after the call's first
  /// step (gatherv.cpp): planned inside the call, from thresholds::pair_gatherv_planned_min_bytes.
  gatherv
};
inline constexpr std::size_t tuned_op_count = 11;
/// A tuning file must measure the first five; the later ones may be missing (files written before
/// they were tuned, or a run with --op): the built-in rules decide them.
inline constexpr std::size_t required_tuned_op_count = 5;
[[nodiscard]] std::string_view to_string(tuned_op op);  ///< "barrier", "bcast", ... (file keys)

/// The measured choice of each (operation, size bucket). Bucket b holds messages of 2^b to
/// 2^(b+1) - 1 bytes; the last bucket also every larger message. Same layout on every rank: the
/// loader broadcasts it as bytes.
struct tuning_choices {
  static constexpr std::size_t buckets = 25;     ///< 1 B .. 16 MiB
  static constexpr std::int8_t none = 0;         ///< not measured: the built-in rules decide
  static constexpr std::int8_t system_mpi = -1;  ///< the system MPI's own call
  /// none, system_mpi, or the algorithm's registry id (1, 2, ...).
  std::array<std::array<std::int8_t, buckets>, tuned_op_count> choice{};

  [[nodiscard]] static std::size_t bucket_of(std::size_t bytes) {
    const auto floor_log2 = bytes == 0 ? 0 : static_cast<std::size_t>(std::bit_width(bytes)) - 1;
    return floor_log2 < buckets ? floor_log2 : buckets - 1;
  }
  [[nodiscard]] std::int8_t at(tuned_op op, std::size_t bytes) const {
    return choice[static_cast<std::size_t>(op)][bucket_of(bytes)];
  }
  [[nodiscard]] bool empty() const {
    for (const auto& row : choice) {
      for (std::int8_t value : row) {
        if (value != none) return false;
      }
    }
    return true;
  }
};

/// What measured timings depend on; a table is used only on a node with an equal key.
struct tuning_key {
  std::string cpu_model;
  int cores = 0;
  std::string caches;  ///< e.g. "L1d 32K, L2 512K, L3 32M" (hwloc)
  int ranks_per_node = 0;
  bool oversubscribed = false;
  std::string mpi_library;  ///< e.g. "Open MPI 4.1.4"

  bool operator==(const tuning_key&) const = default;
  /// The fields that differ from `other`, e.g. "ranks_per_node 4 (file: 2)"; empty when equal.
  [[nodiscard]] std::string differences(const tuning_key& other) const;
};

/// One measured message size of one operation.
struct tuning_entry {
  std::size_t bytes = 0;
  std::string choice;  ///< an algorithm name of the operation's registry, or "mpi"
  /// Per-call medians in microseconds by candidate (informative: kept for the reader of the file).
  std::vector<std::pair<std::string, double>> hot_us;
  std::vector<std::pair<std::string, double>> cold_us;
};

struct tuning_table {
  tuning_key key;
  std::string created;                                            ///< UTC time of the tuning run
  std::array<std::vector<tuning_entry>, tuned_op_count> entries;  ///< sorted by bytes
};

/// A tuning file that cannot be used: the message says what is wrong (one line).
class tuning_file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int tuning_file_format = 1;

/// Every table of a tuning file (one per node shape it was tuned for). Throws tuning_file_error for
/// malformed JSON, a wrong format number, a missing field, an unknown operation or algorithm
/// name, or an operation that has no entries (a partial file).
[[nodiscard]] std::vector<tuning_table> parse_tuning_file(std::string_view text);
/// The JSON text of a tuning file holding `tables` (readable: indented, one size per entry).
[[nodiscard]] std::string tuning_file_text(const std::vector<tuning_table>& tables);

/// The table whose key equals `key`, or nullptr with `why_not` naming the closest mismatch.
[[nodiscard]] const tuning_table* matching_table(const std::vector<tuning_table>& tables,
                                                 const tuning_key& key, std::string& why_not);

/// The compact choices of `table`: each bucket takes the measured size nearest to it (in powers of
/// two; below the smallest and above the largest measured size, the nearest end).
[[nodiscard]] tuning_choices choices_of(const tuning_table& table);

/// The registry id of `name` for `op` (tuning_choices::system_mpi for "mpi"); throws
/// tuning_file_error for an unknown name.
[[nodiscard]] std::int8_t choice_id(tuned_op op, std::string_view name);
/// The name of a choice id of `op` ("mpi", an algorithm name).
[[nodiscard]] std::string_view choice_name(tuned_op op, std::int8_t id);

}  // namespace cachecomm::detail
