// One registry per collective: every algorithm is one entry {id, name, description, function,
// applicability}. Setting parsing, the public lists and names, `cachecomm-info`, the benchmark's
// candidates and the tests all read these tables, so a new algorithm is one entry in
// algorithm_registry.cpp (plus its id in the public enum and its body in its own file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachecomm/barrier.hpp"
#include "cachecomm/collectives.hpp"
#include "cachecomm/config.hpp"

namespace cachecomm::detail {

class coll_engine;
class node_barrier;

/// What decides whether an algorithm runs as itself on a node.
struct node_shape {
  int node_size = 1;
  bool oversubscribed = false;
  bool single_copy = false;       ///< process_vm_readv works between the node's ranks
  bool single_copy_push = false;  ///< process_vm_writev too (the root may push)
};

template <typename Id, typename Function>
struct algorithm_entry {
  Id id;
  std::string_view name;  ///< what settings, listings and reports use
  std::string_view description;
  /// Node-local run; ranks are node ranks.
  Function run;
  /// True when the algorithm runs as itself on this node; otherwise `run` takes the fallback its
  /// description names, so every entry may always be called.
  bool (*applicable)(const node_shape& shape);
};

using broadcast_function = void (*)(coll_engine& engine, void* buffer, std::size_t bytes, int root);
/// root < 0: every rank receives (allreduce).
using reduce_function = void (*)(coll_engine& engine, const void* input, void* output,
                                 std::size_t count, datatype type, reduce_op op, int root);
using allgather_function = void (*)(coll_engine& engine, const void* input, void* output,
                                    std::size_t block_bytes);
/// A barrier's two phases over the node's flags: gather (`arrive`), then release (`depart`).
struct barrier_function {
  void (*arrive)(node_barrier& barrier);
  void (*depart)(node_barrier& barrier);
  /// The gather alone is a complete barrier (dissemination): a single-node barrier skips `depart`.
  bool gather_is_complete = false;
};
/// gather and scatter: `root` is a node rank; alltoall ignores it.
using block_function = void (*)(coll_engine& engine, const void* input, void* output,
                                std::size_t block_bytes, int root);

/// One reduce_scatter_block or reduce_scatter call on a node: node rank r's result is elements
/// [offset_of(r), offset_of(r) + count_of(r)) of every rank's input (`total` elements) combined in
/// rank order. `counts` and `offsets` (elements, one per node rank, offsets the running sum of the
/// counts) are null for reduce_scatter_block, whose blocks all have `count` elements. `own` is
/// where this rank's own block is read from (the input's, or a copy where an in-place result would
/// partly overwrite it before it is read).
struct reduce_scatter_call {
  const void* input = nullptr;
  const void* own = nullptr;
  void* output = nullptr;
  const std::size_t* counts = nullptr;
  const std::size_t* offsets = nullptr;
  std::size_t count = 0;    ///< elements of every block when `counts` is null
  std::size_t total = 0;    ///< elements of one rank's input
  std::size_t largest = 0;  ///< elements of the largest block
  datatype type = datatype::byte;
  reduce_op op = reduce_op::sum;
  [[nodiscard]] std::size_t count_of(std::size_t rank) const {
    return counts == nullptr ? count : counts[rank];
  }
  [[nodiscard]] std::size_t offset_of(std::size_t rank) const {
    return counts == nullptr ? rank * count : offsets[rank];
  }
};
using reduce_scatter_function = void (*)(coll_engine& engine, const reduce_scatter_call& call);
/// One allgatherv, gatherv or scatterv call on a node: byte counts and offsets into `output`
/// (scatterv: into `input`) per node rank (on a non-root of gatherv or scatterv both are null;
/// `root` < 0 for allgatherv; scatterv's `own_bytes` is what this rank receives).
struct vector_call {
  const void* input = nullptr;
  std::size_t own_bytes = 0;
  void* output = nullptr;
  const std::size_t* bytes = nullptr;
  const std::size_t* offsets = nullptr;
  int root = -1;
};
using vector_function = void (*)(coll_engine& engine, const vector_call& call);
/// One alltoallv call on a node: per node rank, the bytes this rank sends it and their offset in
/// `input`, and the bytes it receives from it and their offset in `output`. `input` may equal
/// `output` (in place, same offsets and counts) only where this rank's blocks fit in its slot
/// (coll_engine::alltoallv_inline_bytes): the caller stages larger ones.
struct exchange_call {
  const void* input = nullptr;
  const std::size_t* send_bytes = nullptr;
  const std::size_t* send_offsets = nullptr;
  void* output = nullptr;
  const std::size_t* receive_bytes = nullptr;
  const std::size_t* receive_offsets = nullptr;
};
using exchange_function = void (*)(coll_engine& engine, const exchange_call& call);
/// An automatic choice taken inside the call, where no size is known to every rank before it
/// (alltoallv, gatherv): once the call's first step has shown the ranks what they need, the engine
/// calls choose() on every rank with the same values (alltoallv: the largest block that did not
/// fit in the slots; gatherv: the non-root's block; and whether every rank can hand the call to
/// the system MPI, from each rank's system_possible(), posted in that step). It returns an
/// algorithm id of the operation's registry, or tuning_choices::system_mpi (never where
/// `system_allowed` is false): then the engine ends the first step and calls system_call(), which
/// must carry out the whole call.
class in_call_planner {
 public:
  /// This rank can pass the call to MPI: not in place where the first step writes the buffer MPI
  /// would send from, and every count and offset fits MPI's int.
  [[nodiscard]] virtual bool system_possible() const = 0;
  virtual std::int8_t choose(std::size_t bytes, bool system_allowed) = 0;
  /// `incoming`: null, or (alltoallv, where this rank's receive counts disagree with what the
  /// others send it) the bytes each rank sends this rank, which MPI's call must receive in full
  /// (the engine then keeps the smaller part and reports the disagreement).
  virtual void system_call(const std::size_t* incoming) = 0;

 protected:
  ~in_call_planner() = default;
};

using broadcast_entry = algorithm_entry<broadcast_algorithm, broadcast_function>;
using reduce_entry = algorithm_entry<reduce_algorithm, reduce_function>;
using allgather_entry = algorithm_entry<allgather_algorithm, allgather_function>;
using barrier_entry = algorithm_entry<barrier_algorithm, barrier_function>;
using gather_entry = algorithm_entry<gather_algorithm, block_function>;
using scatter_entry = algorithm_entry<scatter_algorithm, block_function>;
using alltoall_entry = algorithm_entry<alltoall_algorithm, block_function>;
using reduce_scatter_entry = algorithm_entry<reduce_scatter_algorithm, reduce_scatter_function>;
using allgatherv_entry = algorithm_entry<allgatherv_algorithm, vector_function>;
using gatherv_entry = algorithm_entry<gatherv_algorithm, vector_function>;
using scatterv_entry = algorithm_entry<scatterv_algorithm, vector_function>;
using alltoallv_entry = algorithm_entry<alltoallv_algorithm, exchange_function>;
/// scan and exscan (`exclusive`); `input` may equal `output`.
using scan_function = void (*)(coll_engine& engine, const void* input, void* output,
                               std::size_t count, datatype type, reduce_op op, bool exclusive);
using scan_entry = algorithm_entry<scan_algorithm, scan_function>;

/// Every concrete algorithm of each collective, in enum order (entry i has id i + 1).
[[nodiscard]] std::span<const broadcast_entry> broadcast_registry();
[[nodiscard]] std::span<const reduce_entry> reduce_registry();  ///< reduce and allreduce
[[nodiscard]] std::span<const allgather_entry> allgather_registry();
[[nodiscard]] std::span<const barrier_entry> barrier_registry();
[[nodiscard]] std::span<const gather_entry> gather_registry();
[[nodiscard]] std::span<const scatter_entry> scatter_registry();
[[nodiscard]] std::span<const alltoall_entry> alltoall_registry();
[[nodiscard]] std::span<const reduce_scatter_entry> reduce_scatter_registry();
[[nodiscard]] std::span<const allgatherv_entry> allgatherv_registry();
[[nodiscard]] std::span<const gatherv_entry> gatherv_registry();
[[nodiscard]] std::span<const scatterv_entry> scatterv_registry();
[[nodiscard]] std::span<const alltoallv_entry> alltoallv_registry();
[[nodiscard]] std::span<const scan_entry> scan_registry();  ///< scan and exscan

/// The entry of a concrete algorithm; throws usage_error for `automatic` or an unknown value.
[[nodiscard]] const broadcast_entry& entry_of(broadcast_algorithm id);
[[nodiscard]] const reduce_entry& entry_of(reduce_algorithm id);
[[nodiscard]] const allgather_entry& entry_of(allgather_algorithm id);
[[nodiscard]] const barrier_entry& entry_of(barrier_algorithm id);
[[nodiscard]] const gather_entry& entry_of(gather_algorithm id);
[[nodiscard]] const scatter_entry& entry_of(scatter_algorithm id);
[[nodiscard]] const alltoall_entry& entry_of(alltoall_algorithm id);
[[nodiscard]] const reduce_scatter_entry& entry_of(reduce_scatter_algorithm id);
[[nodiscard]] const allgatherv_entry& entry_of(allgatherv_algorithm id);
[[nodiscard]] const gatherv_entry& entry_of(gatherv_algorithm id);
[[nodiscard]] const scatterv_entry& entry_of(scatterv_algorithm id);
[[nodiscard]] const alltoallv_entry& entry_of(alltoallv_algorithm id);
[[nodiscard]] const scan_entry& entry_of(scan_algorithm id);

/// "auto, name1, name2, ..." for a setting's description and a parse error.
template <typename Entry>
[[nodiscard]] std::string choices_of(std::span<const Entry> registry) {
  std::string names = "auto";
  for (const Entry& entry : registry) names += ", " + std::string(entry.name);
  return names;
}

/// The words an algorithm variable accepts: auto and every entry's name.
template <typename Entry>
[[nodiscard]] auto algorithm_choices(std::span<const Entry> registry) {
  using id = decltype(Entry::id);
  std::vector<typename setting<id>::choice> choices{{"auto", id::automatic}};
  for (const Entry& entry : registry) choices.push_back({entry.name, entry.id});
  return choices;
}

/// The setting text of an algorithm variable: "<what> algorithm: auto, name1, ...".
template <typename Entry>
[[nodiscard]] std::string algorithm_setting_text(const char* what,
                                                 std::span<const Entry> registry) {
  return std::string(what) + " algorithm: " + choices_of(registry) + ".";
}

}  // namespace cachecomm::detail
