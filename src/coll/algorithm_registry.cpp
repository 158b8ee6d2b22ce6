// The algorithm tables and everything derived from them: names, parsing, the public lists.
#include "coll/algorithm_registry.hpp"

#include <array>
#include <vector>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/node_barrier.hpp"

namespace cachecomm {

namespace detail {

namespace {

constexpr bool always(const node_shape& /*shape*/) {
  return true;
}
constexpr bool with_single_copy(const node_shape& shape) {
  return shape.single_copy && shape.node_size > 1;
}

constexpr std::array broadcasts = {
    broadcast_entry{
        broadcast_algorithm::central, "central",
        "the root copies into one shared buffer and every rank copies out; each chunk of a large "
        "message fills the data region and waits for every reader (up to 4080 B: the slots)",
        [](coll_engine& engine, void* buffer, std::size_t bytes, int root) {
          if (bytes <= coll_engine::slot_payload)
            engine.broadcast_slots(buffer, bytes, root);
          else
            engine.broadcast_region(buffer, bytes, root, 1);
        },
        always},
    broadcast_entry{
        broadcast_algorithm::double_buffer, "double-buffer",
        "as central, but pipelined through the two halves of the data region: the root fills one "
        "while the others drain the other (up to 4080 B: the slots)",
        [](coll_engine& engine, void* buffer, std::size_t bytes, int root) {
          if (bytes <= coll_engine::slot_payload)
            engine.broadcast_slots(buffer, bytes, root);
          else
            engine.broadcast_region(buffer, bytes, root, 2);
        },
        always},
    broadcast_entry{broadcast_algorithm::tree, "tree",
                    "binomial tree of per-rank slots: a rank with children copies its parent's "
                    "slot into its own, so each line has few readers",
                    [](coll_engine& engine, void* buffer, std::size_t bytes, int root) {
                      engine.broadcast_tree(buffer, bytes, root);
                    },
                    always},
    broadcast_entry{
        broadcast_algorithm::single_copy, "single-copy",
        "readers pull from the root's buffer with cross-memory attach while the root pushes the "
        "tail into theirs (where the kernel refuses it: double-buffer)",
        [](coll_engine& engine, void* buffer, std::size_t bytes, int root) {
          if (engine.single_copy_available())
            engine.broadcast_single_copy(buffer, bytes, root);
          else
            engine.broadcast_region(buffer, bytes, root, 2);
        },
        with_single_copy},
    broadcast_entry{broadcast_algorithm::slots, "slots",
                    "the root's cache-line slots (data in the sequence number's line), read by "
                    "every rank; larger messages go slot by slot",
                    [](coll_engine& engine, void* buffer, std::size_t bytes, int root) {
                      engine.broadcast_slots(buffer, bytes, root);
                    },
                    always},
    broadcast_entry{
        broadcast_algorithm::ring, "ring",
        "the root copies chunk after chunk into a ring over the whole data region and leaves once "
        "the last is in, waiting for the readers only when it laps them; the others copy out "
        "behind it (up to 4080 B: the slots)",
        [](coll_engine& engine, void* buffer, std::size_t bytes, int root) {
          if (bytes <= coll_engine::slot_payload)
            engine.broadcast_slots(buffer, bytes, root);
          else
            engine.broadcast_ring(buffer, bytes, root);
        },
        always},
};

constexpr std::array reductions = {
    reduce_entry{
        reduce_algorithm::slots, "slots",
        "every rank publishes its input in its own slot; the reducers combine all slots "
        "in rank order",
        [](coll_engine& engine, const void* input, void* output, std::size_t count, datatype type,
           reduce_op op, int root) { engine.reduce_slots(input, output, count, type, op, root); },
        always},
    reduce_entry{
        reduce_algorithm::reduce_scatter, "reduce-scatter",
        "each rank reduces one slice of every input (pipelined), then the slices are "
        "gathered",
        [](coll_engine& engine, const void* input, void* output, std::size_t count, datatype type,
           reduce_op op, int root) { engine.reduce_scatter(input, output, count, type, op, root); },
        always},
    reduce_entry{
        reduce_algorithm::gather_reduce, "gather-reduce",
        "every rank stages its input in pipeline chunks and each receiver reduces all "
        "inputs itself, in one pass",
        [](coll_engine& engine, const void* input, void* output, std::size_t count, datatype type,
           reduce_op op, int root) { engine.reduce_gather(input, output, count, type, op, root); },
        always},
    reduce_entry{
        reduce_algorithm::split_pipeline, "split-pipeline",
        "reduce-scatter and allgather of every chunk in one pipeline: each rank reduces its slice "
        "of a chunk while the others read its staged slices of the next one, through every "
        "position of the data region",
        [](coll_engine& engine, const void* input, void* output, std::size_t count, datatype type,
           reduce_op op, int root) { engine.reduce_split(input, output, count, type, op, root); },
        always},
};

constexpr std::array allgathers = {
    allgather_entry{
        allgather_algorithm::central, "central",
        "each rank copies its block into shared memory, every rank copies all blocks "
        "out",
        [](coll_engine& engine, const void* input, void* output, std::size_t block_bytes) {
          engine.allgather_central(input, output, block_bytes);
        },
        always},
    allgather_entry{
        allgather_algorithm::single_copy, "single-copy",
        "every rank pulls the others' blocks straight from their buffers "
        "(cross-memory attach; where the kernel refuses it: central)",
        [](coll_engine& engine, const void* input, void* output, std::size_t block_bytes) {
          if (engine.node_size() > 1 && engine.single_copy_available())
            engine.allgather_single_copy(input, output, block_bytes);
          else
            engine.allgather_central(input, output, block_bytes);
        },
        with_single_copy},
    allgather_entry{
        allgather_algorithm::stage_or_pull, "stage-or-pull",
        "each rank copies its block into shared memory with ordinary stores while that copy runs "
        "near local-copy speed, and has the others pull it from its buffer (cross-memory attach) "
        "while it does not (where the kernel refuses cross-memory attach: central)",
        [](coll_engine& engine, const void* input, void* output, std::size_t block_bytes) {
          if (engine.node_size() > 1 && engine.single_copy_available())
            engine.allgather_stage_or_pull(input, output, block_bytes);
          else
            engine.allgather_central(input, output, block_bytes);
        },
        with_single_copy},
};

// The tree-shaped barriers share their phases; each walks its own trees.
template <barrier_algorithm id>
constexpr barrier_function tree_phases{[](node_barrier& barrier) { barrier.arrive_tree(id); },
                                       [](node_barrier& barrier) { barrier.depart_tree(id); },
                                       false};

constexpr std::array barriers = {
    barrier_entry{barrier_algorithm::central_byte,
                  "central-byte",
                  "Centralized-I: one byte flag per rank, set by the rank, reset by the root",
                  {[](node_barrier& barrier) { barrier.arrive_central_byte(); },
                   [](node_barrier& barrier) { barrier.depart_central_byte(); }, false},
                  always},
    barrier_entry{barrier_algorithm::central_line, "central-line",
                  "Centralized-II: one cache line per rank, released by the root",
                  tree_phases<barrier_algorithm::central_line>, always},
    barrier_entry{barrier_algorithm::dissemination,
                  "dissemination",
                  "ceil(log2 P) rounds of pairwise signals, no root",
                  {[](node_barrier& barrier) { barrier.dissemination(); },
                   [](node_barrier& barrier) { barrier.dissemination_release(); }, true},
                  always},
    barrier_entry{barrier_algorithm::tree, "tree",
                  "k-ary combining tree (k = CACHECOMM_TREE_DEGREE)",
                  tree_phases<barrier_algorithm::tree>, always},
    barrier_entry{barrier_algorithm::tournament, "tournament",
                  "pairwise rounds up to the root, release down a k-ary tree",
                  tree_phases<barrier_algorithm::tournament>, always},
    barrier_entry{barrier_algorithm::binomial, "binomial", "binomial spanning tree",
                  tree_phases<barrier_algorithm::binomial>, always},
    barrier_entry{barrier_algorithm::counter,
                  "counter",
                  "one shared counter: every rank adds one, the last to arrive releases all",
                  {[](node_barrier& barrier) { barrier.counter(); },
                   [](node_barrier& barrier) { barrier.counter(); }, true},
                  always},
};

// Gather, scatter, alltoall: central through slots or the region, or single copy (where the kernel
// refuses cross-memory attach: central).
constexpr std::array gathers = {
    gather_entry{gather_algorithm::central, "central",
                 "every rank copies its block into its shared slot (or its part of the data "
                 "region, pipelined) and the root copies all blocks out",
                 [](coll_engine& engine, const void* input, void* output, std::size_t block_bytes,
                    int root) { engine.gather_central(input, output, block_bytes, root); },
                 always},
    gather_entry{gather_algorithm::single_copy, "single-copy",
                 "the root pulls every block straight from its owner's buffer (cross-memory "
                 "attach; where the kernel refuses it: central)",
                 [](coll_engine& engine, const void* input, void* output, std::size_t block_bytes,
                    int root) {
                   if (engine.node_size() > 1 && engine.single_copy_available())
                     engine.gather_single_copy(input, output, block_bytes, root);
                   else
                     engine.gather_central(input, output, block_bytes, root);
                 },
                 with_single_copy},
};

constexpr std::array scatters = {
    scatter_entry{scatter_algorithm::central, "central",
                  "the root copies every block into its shared slot (or the data region, "
                  "pipelined) and each rank copies its own out",
                  [](coll_engine& engine, const void* input, void* output, std::size_t block_bytes,
                     int root) { engine.scatter_central(input, output, block_bytes, root); },
                  always},
    scatter_entry{scatter_algorithm::single_copy, "single-copy",
                  "every rank pulls its block straight from the root's buffer (cross-memory "
                  "attach; where the kernel refuses it: central)",
                  [](coll_engine& engine, const void* input, void* output, std::size_t block_bytes,
                     int root) {
                    if (engine.node_size() > 1 && engine.single_copy_available())
                      engine.scatter_single_copy(input, output, block_bytes, root);
                    else
                      engine.scatter_central(input, output, block_bytes, root);
                  },
                  with_single_copy},
};

constexpr std::array alltoalls = {
    alltoall_entry{alltoall_algorithm::central, "central",
                   "every rank copies its blocks into its shared slot (or its part of the data "
                   "region, pipelined) and each rank copies the blocks meant for it out",
                   [](coll_engine& engine, const void* input, void* output, std::size_t block_bytes,
                      int /*root*/) { engine.alltoall_central(input, output, block_bytes); },
                   always},
    alltoall_entry{alltoall_algorithm::single_copy, "single-copy",
                   "every rank pulls its block from each other rank's send buffer (cross-memory "
                   "attach; where the kernel refuses it: central)",
                   [](coll_engine& engine, const void* input, void* output, std::size_t block_bytes,
                      int /*root*/) {
                     if (engine.node_size() > 1 && engine.single_copy_available())
                       engine.alltoall_single_copy(input, output, block_bytes);
                     else
                       engine.alltoall_central(input, output, block_bytes);
                   },
                   with_single_copy},
};

// reduce_scatter_block, allgatherv, gatherv: central through slots or the region, or single copy
// (where the kernel refuses it: central).
constexpr std::array reduce_scatters = {
    reduce_scatter_entry{
        reduce_scatter_algorithm::central, "central",
        "every rank copies its input into its slot or its part of the data region (pipelined); "
        "rank r combines block r of every input in rank order",
        [](coll_engine& engine, const reduce_scatter_call& call) {
          engine.reduce_scatter_central(call);
        },
        always},
    reduce_scatter_entry{
        reduce_scatter_algorithm::single_copy, "single-copy",
        "rank r pulls block r of every other input straight from its owner's buffer in pipeline "
        "chunks and combines them in rank order (cross-memory attach; where the kernel refuses "
        "it: central)",
        [](coll_engine& engine, const reduce_scatter_call& call) {
          if (engine.single_copy_available())
            engine.reduce_scatter_single_copy(call);
          else
            engine.reduce_scatter_central(call);
        },
        with_single_copy},
};

constexpr std::array allgathervs = {
    allgatherv_entry{
        allgatherv_algorithm::central, "central",
        "each rank copies its block into its slot or its part of the data region, "
        "every rank copies all blocks out (as many steps as the largest block needs)",
        [](coll_engine& engine, const vector_call& call) { engine.allgatherv_central(call); },
        always},
    allgatherv_entry{allgatherv_algorithm::single_copy, "single-copy",
                     "every rank pulls the others' blocks straight from their buffers "
                     "(cross-memory attach; where the kernel refuses it: central)",
                     [](coll_engine& engine, const vector_call& call) {
                       if (engine.single_copy_available())
                         engine.allgatherv_single_copy(call);
                       else
                         engine.allgatherv_central(call);
                     },
                     with_single_copy},
};

constexpr std::array gathervs = {
    gatherv_entry{gatherv_algorithm::central, "central",
                  "every rank's count and a block of up to 4064 B in its slot, next to the root's "
                  "counts; larger blocks through the data region",
                  [](coll_engine& engine, const vector_call& call) { engine.gatherv(call, false); },
                  always},
    gatherv_entry{gatherv_algorithm::single_copy, "single-copy",
                  "every rank's count and a block of up to 4064 B in its slot (it posts and "
                  "leaves), larger blocks pulled by the root straight from their owners' buffers "
                  "(cross-memory attach; where the kernel refuses it: central)",
                  [](coll_engine& engine, const vector_call& call) {
                    engine.gatherv(call, engine.single_copy_available());
                  },
                  with_single_copy},
};

constexpr std::array scattervs = {
    scatterv_entry{
        scatterv_algorithm::central, "central",
        "the root's counts and, when they all fit, every block in its slot; otherwise "
        "one chunk per rank and step through the data region",
        [](coll_engine& engine, const vector_call& call) { engine.scatterv(call, false); }, always},
    scatterv_entry{scatterv_algorithm::single_copy, "single-copy",
                   "as central when every block fits in the root's slot; otherwise each rank "
                   "pulls its block straight from the root's buffer (cross-memory attach; where "
                   "the kernel refuses it: central)",
                   [](coll_engine& engine, const vector_call& call) {
                     engine.scatterv(call, engine.single_copy_available());
                   },
                   with_single_copy},
};

constexpr std::array alltoallvs = {
    alltoallv_entry{
        alltoallv_algorithm::central, "central",
        "the counts and, when they fit, a rank's blocks in its slot; otherwise one "
        "chunk per pair of ranks and step through the data region",
        [](coll_engine& engine, const exchange_call& call) { engine.alltoallv(call, false); },
        always},
    alltoallv_entry{alltoallv_algorithm::single_copy, "single-copy",
                    "as central when a rank's blocks fit in its slot; otherwise each rank pulls "
                    "its blocks straight from the owners' buffers (cross-memory attach; where the "
                    "kernel refuses it: central)",
                    [](coll_engine& engine, const exchange_call& call) {
                      engine.alltoallv(call, engine.single_copy_available());
                    },
                    with_single_copy},
};

// scan and exscan: through slots or the region, or single copy (where the kernel refuses it: the
// region).
constexpr std::array scans = {
    scan_entry{scan_algorithm::region, "region",
               "every rank but the last copies its input into its slot or its part of the data "
               "region (pipelined); rank r combines the inputs of ranks 0..r in rank order",
               [](coll_engine& engine, const void* input, void* output, std::size_t count,
                  datatype type, reduce_op op, bool exclusive) {
                 engine.scan_region(input, output, count, type, op, exclusive);
               },
               always},
    scan_entry{scan_algorithm::single_copy, "single-copy",
               "rank r pulls the inputs of ranks 0..r-1 straight from their buffers in pipeline "
               "chunks and combines them in rank order (cross-memory attach; where the kernel "
               "refuses it: region)",
               [](coll_engine& engine, const void* input, void* output, std::size_t count,
                  datatype type, reduce_op op, bool exclusive) {
                 if (engine.node_size() > 1 && engine.single_copy_available())
                   engine.scan_single_copy(input, output, count, type, op, exclusive);
                 else
                   engine.scan_region(input, output, count, type, op, exclusive);
               },
               with_single_copy},
};

// Entry i has id i + 1 (0 is `automatic`), so a lookup is an index.
template <typename Entry, std::size_t count>
constexpr bool in_enum_order(const std::array<Entry, count>& table) {
  for (std::size_t i = 0; i < count; ++i) {
    if (static_cast<std::size_t>(table[i].id) != i + 1) return false;
  }
  return true;
}
static_assert(in_enum_order(broadcasts) && in_enum_order(reductions) && in_enum_order(allgathers) &&
              in_enum_order(barriers));
static_assert(in_enum_order(gathers) && in_enum_order(scatters) && in_enum_order(alltoalls));
static_assert(in_enum_order(reduce_scatters) && in_enum_order(allgathervs) &&
              in_enum_order(gathervs) && in_enum_order(scattervs) && in_enum_order(alltoallvs) &&
              in_enum_order(scans));

template <typename Entry, typename Id>
const Entry& lookup(std::span<const Entry> table, Id id, const char* collective) {
  const auto index = static_cast<std::size_t>(id) - 1;
  if (id == Id::automatic || index >= table.size()) {
    throw usage_error(std::string("cachecomm: ") + collective +
                      " needs a concrete algorithm, got value " +
                      std::to_string(static_cast<int>(id)));
  }
  return table[index];
}

template <typename Entry>
auto parse(std::span<const Entry> table, std::string_view text, const char* collective) {
  using id_type = decltype(Entry::id);
  if (text == "auto") return id_type::automatic;
  for (const Entry& entry : table) {
    if (entry.name == text) return entry.id;
  }
  throw invalid_argument("cachecomm: unknown " + std::string(collective) + " algorithm '" +
                         std::string(text) + "' (use " + choices_of(table) + ")");
}

template <typename Entry>
std::string_view name_of(std::span<const Entry> table, decltype(Entry::id) id) {
  if (id == decltype(Entry::id)::automatic) return "auto";
  const auto index = static_cast<std::size_t>(id) - 1;
  return index < table.size() ? table[index].name : "?";
}

template <typename Entry>
std::vector<decltype(Entry::id)> ids_of(std::span<const Entry> table) {
  std::vector<decltype(Entry::id)> ids;
  for (const Entry& entry : table) ids.push_back(entry.id);
  return ids;
}

}  // namespace

std::span<const broadcast_entry> broadcast_registry() {
  return broadcasts;
}
std::span<const reduce_entry> reduce_registry() {
  return reductions;
}
std::span<const allgather_entry> allgather_registry() {
  return allgathers;
}
std::span<const barrier_entry> barrier_registry() {
  return barriers;
}

std::span<const gather_entry> gather_registry() {
  return gathers;
}
std::span<const scatter_entry> scatter_registry() {
  return scatters;
}
std::span<const alltoall_entry> alltoall_registry() {
  return alltoalls;
}

std::span<const reduce_scatter_entry> reduce_scatter_registry() {
  return reduce_scatters;
}
std::span<const allgatherv_entry> allgatherv_registry() {
  return allgathervs;
}
std::span<const gatherv_entry> gatherv_registry() {
  return gathervs;
}
std::span<const scatterv_entry> scatterv_registry() {
  return scattervs;
}
const scatterv_entry& entry_of(scatterv_algorithm id) {
  return lookup(scatterv_registry(), id, "scatterv");
}
std::span<const alltoallv_entry> alltoallv_registry() {
  return alltoallvs;
}
const alltoallv_entry& entry_of(alltoallv_algorithm id) {
  return lookup(alltoallv_registry(), id, "alltoallv");
}
std::span<const scan_entry> scan_registry() {
  return scans;
}
const scan_entry& entry_of(scan_algorithm id) {
  return lookup(scan_registry(), id, "scan");
}
const reduce_scatter_entry& entry_of(reduce_scatter_algorithm id) {
  return lookup(reduce_scatter_registry(), id, "reduce-scatter");
}
const allgatherv_entry& entry_of(allgatherv_algorithm id) {
  return lookup(allgatherv_registry(), id, "allgatherv");
}
const gatherv_entry& entry_of(gatherv_algorithm id) {
  return lookup(gatherv_registry(), id, "gatherv");
}

const gather_entry& entry_of(gather_algorithm id) {
  return lookup(gather_registry(), id, "gather");
}
const scatter_entry& entry_of(scatter_algorithm id) {
  return lookup(scatter_registry(), id, "scatter");
}
const alltoall_entry& entry_of(alltoall_algorithm id) {
  return lookup(alltoall_registry(), id, "alltoall");
}
const broadcast_entry& entry_of(broadcast_algorithm id) {
  return lookup(broadcast_registry(), id, "broadcast");
}
const reduce_entry& entry_of(reduce_algorithm id) {
  return lookup(reduce_registry(), id, "reduce");
}
const allgather_entry& entry_of(allgather_algorithm id) {
  return lookup(allgather_registry(), id, "allgather");
}
const barrier_entry& entry_of(barrier_algorithm id) {
  return lookup(barrier_registry(), id, "barrier");
}

}  // namespace detail

std::string_view to_string(scan_algorithm algorithm) {
  return detail::name_of(detail::scan_registry(), algorithm);
}
scan_algorithm parse_scan_algorithm(std::string_view text) {
  return detail::parse(detail::scan_registry(), text, "scan");
}
const std::vector<scan_algorithm>& all_scan_algorithms() {
  static const std::vector<scan_algorithm> all = detail::ids_of(detail::scan_registry());
  return all;
}

std::string_view to_string(gather_algorithm algorithm) {
  return detail::name_of(detail::gather_registry(), algorithm);
}
std::string_view to_string(scatter_algorithm algorithm) {
  return detail::name_of(detail::scatter_registry(), algorithm);
}
std::string_view to_string(alltoall_algorithm algorithm) {
  return detail::name_of(detail::alltoall_registry(), algorithm);
}
gather_algorithm parse_gather_algorithm(std::string_view text) {
  return detail::parse(detail::gather_registry(), text, "gather");
}
scatter_algorithm parse_scatter_algorithm(std::string_view text) {
  return detail::parse(detail::scatter_registry(), text, "scatter");
}
alltoall_algorithm parse_alltoall_algorithm(std::string_view text) {
  return detail::parse(detail::alltoall_registry(), text, "alltoall");
}
const std::vector<gather_algorithm>& all_gather_algorithms() {
  static const std::vector<gather_algorithm> all = detail::ids_of(detail::gather_registry());
  return all;
}
const std::vector<scatter_algorithm>& all_scatter_algorithms() {
  static const std::vector<scatter_algorithm> all = detail::ids_of(detail::scatter_registry());
  return all;
}
const std::vector<alltoall_algorithm>& all_alltoall_algorithms() {
  static const std::vector<alltoall_algorithm> all = detail::ids_of(detail::alltoall_registry());
  return all;
}

std::string_view to_string(broadcast_algorithm algorithm) {
  return detail::name_of(detail::broadcast_registry(), algorithm);
}
std::string_view to_string(reduce_algorithm algorithm) {
  return detail::name_of(detail::reduce_registry(), algorithm);
}
std::string_view to_string(allgather_algorithm algorithm) {
  return detail::name_of(detail::allgather_registry(), algorithm);
}
std::string_view to_string(barrier_algorithm algorithm) {
  return detail::name_of(detail::barrier_registry(), algorithm);
}

broadcast_algorithm parse_broadcast_algorithm(std::string_view text) {
  return detail::parse(detail::broadcast_registry(), text, "broadcast");
}
reduce_algorithm parse_reduce_algorithm(std::string_view text) {
  return detail::parse(detail::reduce_registry(), text, "reduce");
}
allgather_algorithm parse_allgather_algorithm(std::string_view text) {
  return detail::parse(detail::allgather_registry(), text, "allgather");
}
barrier_algorithm parse_barrier_algorithm(std::string_view text) {
  return detail::parse(detail::barrier_registry(), text, "barrier");
}

const std::vector<broadcast_algorithm>& all_broadcast_algorithms() {
  static const std::vector<broadcast_algorithm> all = detail::ids_of(detail::broadcast_registry());
  return all;
}
const std::vector<reduce_algorithm>& all_reduce_algorithms() {
  static const std::vector<reduce_algorithm> all = detail::ids_of(detail::reduce_registry());
  return all;
}
const std::vector<allgather_algorithm>& all_allgather_algorithms() {
  static const std::vector<allgather_algorithm> all = detail::ids_of(detail::allgather_registry());
  return all;
}
const std::vector<barrier_algorithm>& all_barrier_algorithms() {
  static const std::vector<barrier_algorithm> all = detail::ids_of(detail::barrier_registry());
  return all;
}

std::string_view to_string(reduce_scatter_algorithm algorithm) {
  return detail::name_of(detail::reduce_scatter_registry(), algorithm);
}
std::string_view to_string(allgatherv_algorithm algorithm) {
  return detail::name_of(detail::allgatherv_registry(), algorithm);
}
std::string_view to_string(gatherv_algorithm algorithm) {
  return detail::name_of(detail::gatherv_registry(), algorithm);
}
reduce_scatter_algorithm parse_reduce_scatter_algorithm(std::string_view text) {
  return detail::parse(detail::reduce_scatter_registry(), text, "reduce-scatter");
}
allgatherv_algorithm parse_allgatherv_algorithm(std::string_view text) {
  return detail::parse(detail::allgatherv_registry(), text, "allgatherv");
}
gatherv_algorithm parse_gatherv_algorithm(std::string_view text) {
  return detail::parse(detail::gatherv_registry(), text, "gatherv");
}
const std::vector<reduce_scatter_algorithm>& all_reduce_scatter_algorithms() {
  static const std::vector<reduce_scatter_algorithm> all =
      detail::ids_of(detail::reduce_scatter_registry());
  return all;
}
const std::vector<allgatherv_algorithm>& all_allgatherv_algorithms() {
  static const std::vector<allgatherv_algorithm> all =
      detail::ids_of(detail::allgatherv_registry());
  return all;
}
std::string_view to_string(alltoallv_algorithm algorithm) {
  return detail::name_of(detail::alltoallv_registry(), algorithm);
}
alltoallv_algorithm parse_alltoallv_algorithm(std::string_view text) {
  return detail::parse(detail::alltoallv_registry(), text, "alltoallv");
}
const std::vector<alltoallv_algorithm>& all_alltoallv_algorithms() {
  static const std::vector<alltoallv_algorithm> all = detail::ids_of(detail::alltoallv_registry());
  return all;
}
std::string_view to_string(scatterv_algorithm algorithm) {
  return detail::name_of(detail::scatterv_registry(), algorithm);
}
scatterv_algorithm parse_scatterv_algorithm(std::string_view text) {
  return detail::parse(detail::scatterv_registry(), text, "scatterv");
}
const std::vector<scatterv_algorithm>& all_scatterv_algorithms() {
  static const std::vector<scatterv_algorithm> all = detail::ids_of(detail::scatterv_registry());
  return all;
}
const std::vector<gatherv_algorithm>& all_gatherv_algorithms() {
  static const std::vector<gatherv_algorithm> all = detail::ids_of(detail::gatherv_registry());
  return all;
}

}  // namespace cachecomm
