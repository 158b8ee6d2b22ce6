// Public entry points of the data collectives: argument checks, the automatic choice, and the
// multi-node composition (node phase in shared memory, leaders over MPI).
#include "cachecomm/collectives.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "core/comm_impl.hpp"
#include "core/mpi_check.hpp"
#include "core/mpi_types.hpp"

namespace cachecomm {

using detail::mpi_datatype_of;
using detail::mpi_op_of;

namespace {

const detail::setting_declaration broadcast_setting{
    "CACHECOMM_BCAST", "auto",
    "Broadcast algorithm: auto, central, double-buffer, tree, single-copy."};
const detail::setting_declaration reduce_setting{
    "CACHECOMM_REDUCE", "auto", "Reduce algorithm: auto, slots, reduce-scatter, gather-reduce."};
const detail::setting_declaration allreduce_setting{
    "CACHECOMM_ALLREDUCE", "auto",
    "Allreduce algorithm: auto, slots, reduce-scatter, gather-reduce."};
const detail::setting_declaration allgather_setting{
    "CACHECOMM_ALLGATHER", "auto", "Allgather algorithm: auto, central, single-copy."};
const detail::setting_declaration check_setting{
    "CACHECOMM_CHECK", "0",
    "Verify on every collective that all ranks pass the same operation, count, type, reduction and "
    "root, and report bad arguments on every rank (one extra MPI allreduce per call; off by "
    "default)."};

template <typename Enum>
Enum parse_named(std::string_view text, const std::vector<Enum>& all, const char* what) {
  if (text == "auto") return Enum::automatic;
  std::string names = "auto";
  for (Enum value : all) {
    if (to_string(value) == text) return value;
    names += ", " + std::string(to_string(value));
  }
  throw invalid_argument("cachecomm: unknown " + std::string(what) + " algorithm '" +
                         std::string(text) + "' (use " + names + ")");
}

enum class operation_kind { broadcast = 1, reduce, allreduce, allgather };

const char* name_of(operation_kind kind) {
  switch (kind) {
    case operation_kind::broadcast: return "broadcast";
    case operation_kind::reduce: return "reduce";
    case operation_kind::allreduce: return "allreduce";
    case operation_kind::allgather: return "allgather";
  }
  return "collective";
}

int mpi_count(std::size_t count, const char* what) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw unsupported_error(std::string("cachecomm: ") + what +
                            " across nodes is limited to INT_MAX elements per MPI call");
  }
  return static_cast<int>(count);
}

/// Describes what is wrong with this rank's arguments ("" when nothing is).
struct call_signature {
  operation_kind kind;
  std::size_t count;
  datatype type;
  reduce_op op;
  int root;
};

std::string local_problem(comm& c, const call_signature& call, const void* send,
                          const void* receive) {
  const char* what = name_of(call.kind);
  const int type_value = static_cast<int>(call.type);
  if (type_value < 0 || type_value > static_cast<int>(datatype::byte)) {
    return std::string("cachecomm: ") + what + ": unknown datatype value " +
           std::to_string(type_value);
  }
  const std::size_t element = size_of(call.type);
  std::size_t total_bytes = 0;
  if (__builtin_mul_overflow(call.count, element * static_cast<std::size_t>(c.size()),
                             &total_bytes)) {
    return std::string("cachecomm: ") + what + ": count " + std::to_string(call.count) +
           " overflows the byte size";
  }
  if (call.kind == operation_kind::broadcast || call.kind == operation_kind::reduce) {
    if (call.root < 0 || call.root >= c.size()) {
      return std::string("cachecomm: ") + what + ": root " + std::to_string(call.root) +
             " is not a rank of the communicator (size " + std::to_string(c.size()) + ")";
    }
  }
  if (call.kind == operation_kind::reduce || call.kind == operation_kind::allreduce) {
    if (call.op == reduce_op::replace) {
      return std::string("cachecomm: ") + what +
             ": reduce_op::replace is not supported by collectives (it is an accumulate "
             "operation); use sum, "
             "product, min, max, or a logical or bitwise operation";
    }
    if (!supports(call.type, call.op)) {
      return std::string("cachecomm: ") + what + ": operation " + std::string(to_string(call.op)) +
             " is not supported on " + std::string(to_string(call.type)) +
             " (min/max need real numbers; logical and bitwise operations need integers; bytes can "
             "only be moved)";
    }
  }
  if (call.count == 0) return {};
  const bool receives = call.kind != operation_kind::reduce || call.root == c.rank();
  if (call.kind == operation_kind::broadcast) {
    if (receive == nullptr)
      return "cachecomm: broadcast: buffer is null but count is " + std::to_string(call.count);
    if (receive == in_place) return "cachecomm: broadcast: in_place is not a buffer";
    return {};
  }
  if (send == nullptr) {
    return std::string("cachecomm: ") + what + ": send buffer is null but count is " +
           std::to_string(call.count) +
           " (use cachecomm::in_place to reduce the receive buffer in place)";
  }
  if (receives && (receive == nullptr || receive == in_place)) {
    return std::string("cachecomm: ") + what + ": receive buffer is " +
           (receive == nullptr ? "null" : "in_place") + " but count is " +
           std::to_string(call.count);
  }
  if (send == in_place && !receives) {
    if (receive == nullptr) {
      return "cachecomm: reduce: send is in_place on a non-root rank, so the input would be the "
             "receive buffer, "
             "which is null";
    }
  }
  return {};
}

/// Throws on this rank when its own arguments are bad; with CACHECOMM_CHECK on, also compares the
/// call across ranks and throws on every rank when any rank is bad or they disagree.
void check_call(comm& c, detail::coll_engine& engine, const call_signature& call, const void* send,
                const void* receive) {
  const std::string problem = local_problem(c, call, send, receive);
  auto throw_problem = [&] {
    if (problem.find("not supported") != std::string::npos) throw unsupported_error(problem);
    throw invalid_argument(problem);
  };
  if (!engine.tuning().check) {
    if (!problem.empty()) throw_problem();
    return;
  }
  // Max of (v, -v) gives every rank the largest and smallest value of each field at once.
  constexpr std::size_t fields = 6;
  const std::array<long long, fields> values = {
      static_cast<long long>(call.kind),
      static_cast<long long>(call.count),
      static_cast<long long>(call.type),
      static_cast<long long>(call.op),
      call.kind == operation_kind::broadcast || call.kind == operation_kind::reduce ? call.root : 0,
      problem.empty() ? 0 : 1};
  std::array<long long, 2 * fields> local{};
  for (std::size_t i = 0; i < fields; ++i) {
    local[i] = values[i];
    local[fields + i] = -values[i];
  }
  std::array<long long, 2 * fields> global{};
  CACHECOMM_MPI(MPI_Allreduce(local.data(), global.data(), static_cast<int>(local.size()),
                              MPI_LONG_LONG, MPI_MAX, c.mpi_comm()));
  if (!problem.empty()) throw_problem();
  if (global[fields - 1] != 0) {
    throw invalid_argument(std::string("cachecomm: ") + name_of(call.kind) +
                           ": another rank passed invalid arguments (see its error)");
  }
  static const char* const names[fields] = {"operation", "count", "datatype",
                                            "reduction", "root",  ""};
  for (std::size_t i = 0; i + 1 < fields; ++i) {
    const long long largest = global[i];
    const long long smallest = -global[fields + i];
    if (largest != smallest) {
      throw usage_error(std::string("cachecomm: ") + name_of(call.kind) +
                        ": ranks disagree on the " + names[i] + " (values from " +
                        std::to_string(smallest) + " to " + std::to_string(largest) +
                        "; this rank passed " + std::to_string(values[i]) + ")");
    }
  }
}

detail::coll_engine& engine_of(comm& c) {
  return detail::coll_engine::of(c.impl());
}

std::pair<broadcast_algorithm, const char*> choose_broadcast(const detail::coll_engine& engine,
                                                             std::size_t bytes) {
  if (engine.tuning().broadcast != broadcast_algorithm::automatic) {
    return {engine.tuning().broadcast, "set by CACHECOMM_BCAST"};
  }
  if (bytes <= detail::coll_engine::slot_payload) {
    if (engine.node_size() > 8 && !engine.oversubscribed()) {
      return {broadcast_algorithm::tree,
              "small message, more than 8 ranks: a binomial tree of slots keeps each line's "
              "readers few"};
    }
    return {broadcast_algorithm::double_buffer,
            "small message: the root's slot (data in the flag's line), read by every rank"};
  }
  // Cross-memory attach with both sides copying (the root pushes half, the reader pulls half) from
  // 128 KiB at 2 ranks per node, each on its own core: one copy, read from the root's buffer,
  // against the region's two (the root's copy in, the reader's copy out of memory). Measured at 2
  // ranks on a 2-core AMD EPYC VM (3 interleaved runs, medians, hot / cold buffers): 128 KiB
  // 10.5-11.1 / 11.4-19.0 us against double-buffer's 15.7-20.7 / 16.8-20.0 and Open MPI's
  // 14.2-16.5 / 19.8-28.9; 64 KiB still favours double-buffer (6.0-6.9 against 5.7-10.7). Not
  // chosen with more ranks (unmeasured: the root pushes to one reader after another) or when
  // oversubscribed (a pushing root and a pulling reader would take turns on one core).
  if (bytes >= detail::coll_engine::single_copy_min_bytes && engine.node_size() == 2 &&
      !engine.oversubscribed() && engine.single_copy_push_available()) {
    return {broadcast_algorithm::single_copy,
            "large message, 2 ranks on their own cores: cross-memory attach, the root pushes half "
            "while the reader "
            "pulls the other half"};
  }
  return {broadcast_algorithm::double_buffer,
          "larger message: pipelined through two shared buffers (the root fills one while the "
          "others drain the "
          "other)"};
}

std::pair<reduce_algorithm, const char*> choose_reduce(const detail::coll_engine& engine,
                                                       std::size_t bytes,
                                                       reduce_algorithm requested,
                                                       const char* setting, bool rooted) {
  if (requested != reduce_algorithm::automatic) return {requested, setting};
  if (bytes <= detail::coll_engine::slot_payload || engine.node_size() == 1) {
    return {reduce_algorithm::slots,
            "small message: one slot per rank, the reducer reads them in rank order"};
  }
  if (rooted && engine.oversubscribed() && bytes <= (128U << 10)) {
    return {reduce_algorithm::slots,
            "oversubscribed rooted reduce up to 128 KiB: the other ranks post and leave, one "
            "scheduler round "
            "instead of the reduce-scatter's three"};
  }
  // At 2 ranks each on its own core: both ranks stage their input and reduce everything themselves
  // in one pipelined pass. The same line traffic between the cores as reduce-scatter, without its
  // second phase. Measured at 2 ranks on 2 cores (allreduce, vs Open MPI in the same run): 64 KiB
  // 0.40 (reduce-scatter 0.79), 1 MiB 0.62 (0.67-0.72), 4 MiB 0.14 (0.37). With more ranks each
  // would read P-1 inputs; when oversubscribed its many short steps cost scheduler rounds.
  if (engine.node_size() == 2 && !engine.oversubscribed()) {
    return {reduce_algorithm::gather_reduce,
            "large message, 2 ranks on their own cores: each rank stages its input in pipeline "
            "chunks and "
            "reduces both inputs itself, in one pass"};
  }
  return {reduce_algorithm::reduce_scatter,
          "large message: each rank reduces one slice of every input (pipelined), then the slices "
          "are gathered"};
}

std::pair<allgather_algorithm, const char*> choose_allgather(const detail::coll_engine& engine,
                                                             std::size_t block_bytes) {
  if (engine.tuning().allgather != allgather_algorithm::automatic) {
    return {engine.tuning().allgather, "set by CACHECOMM_ALLGATHER"};
  }
  // Single copy saves one of central's P + 1 block copies per rank (its own block into shared
  // memory) and reads the others' blocks from their owners' caches instead of from memory (central
  // writes the shared region with streaming stores, see shared_copy.hpp). Measured at 2 ranks on a
  // 2-core AMD EPYC VM (3 interleaved runs, medians, hot and cold): from 64 KiB blocks single copy
  // ties Open MPI (64 KiB 7.7-8.7 us against 8.3-9.4; 256 KiB 27.8-38.5 against 27.7-38.5) while
  // central takes 1.5-2x as long (13.0-13.4; 59.5-65.3); at 32 KiB they tie (5.6-6.2 against
  // 5.8-7.0). Oversubscribed (4 and 8 ranks) central wins at every size (4 MiB: 0.62 of Open MPI
  // against 0.80-0.87): the cores are the bottleneck, and the CPU time per byte counts, not the
  // copies saved. With more ranks on their own cores the copy saved is a smaller part.
  if (engine.single_copy_available() && engine.node_size() == 2 && !engine.oversubscribed() &&
      block_bytes >= detail::coll_engine::allgather_single_copy_min_bytes) {
    return {allgather_algorithm::single_copy,
            "large blocks, 2 ranks on their own cores: each rank pulls the other's block straight "
            "from its buffer "
            "(cross-memory attach), no copy into shared memory"};
  }
  return {allgather_algorithm::central,
          "blocks through shared memory: each rank copies its block in, all blocks out"};
}

/// The one built-in case where the automatic choice calls the system MPI's own allgather: 2 ranks
/// on their own cores on one node, blocks from 1 MiB. There both use cross-memory attach, and Open
/// MPI 4.1's was faster on the 2-core AMD EPYC VM (hot, per call: single copy 174-203 us against
/// 129-137 at 1 MiB; OSU-style loop, 3 interleaved rounds: preloaded 1.15x plain), while from 64
/// KiB to 512 KiB they tie. A measured selection (issue 12) replaces this rule.
constexpr const char* mpi_allgather_reason =
    "blocks from 1 MiB, 2 ranks on their own cores: the system MPI's own allgather (its "
    "cross-memory attach was faster than cachecomm's single copy there)";
bool mpi_allgather_wins(const detail::coll_engine& engine, bool single_node,
                        std::size_t block_bytes) {
  return engine.tuning().allgather == allgather_algorithm::automatic && single_node &&
         engine.node_size() == 2 && !engine.oversubscribed() && block_bytes >= (1U << 20);
}

broadcast_algorithm resolve(const detail::coll_engine& engine, broadcast_algorithm algorithm,
                            std::size_t bytes) {
  return algorithm == broadcast_algorithm::automatic ? choose_broadcast(engine, bytes).first
                                                     : algorithm;
}

}  // namespace

std::string_view to_string(broadcast_algorithm algorithm) {
  switch (algorithm) {
    case broadcast_algorithm::automatic: return "auto";
    case broadcast_algorithm::central: return "central";
    case broadcast_algorithm::double_buffer: return "double-buffer";
    case broadcast_algorithm::tree: return "tree";
    case broadcast_algorithm::single_copy: return "single-copy";
  }
  return "?";
}
std::string_view to_string(reduce_algorithm algorithm) {
  switch (algorithm) {
    case reduce_algorithm::automatic: return "auto";
    case reduce_algorithm::slots: return "slots";
    case reduce_algorithm::reduce_scatter: return "reduce-scatter";
    case reduce_algorithm::gather_reduce: return "gather-reduce";
  }
  return "?";
}
std::string_view to_string(allgather_algorithm algorithm) {
  switch (algorithm) {
    case allgather_algorithm::automatic: return "auto";
    case allgather_algorithm::central: return "central";
    case allgather_algorithm::single_copy: return "single-copy";
  }
  return "?";
}

const std::vector<broadcast_algorithm>& all_broadcast_algorithms() {
  static const std::vector<broadcast_algorithm> all = {
      broadcast_algorithm::central, broadcast_algorithm::double_buffer, broadcast_algorithm::tree,
      broadcast_algorithm::single_copy};
  return all;
}
const std::vector<reduce_algorithm>& all_reduce_algorithms() {
  static const std::vector<reduce_algorithm> all = {
      reduce_algorithm::slots, reduce_algorithm::reduce_scatter, reduce_algorithm::gather_reduce};
  return all;
}
const std::vector<allgather_algorithm>& all_allgather_algorithms() {
  static const std::vector<allgather_algorithm> all = {allgather_algorithm::central,
                                                       allgather_algorithm::single_copy};
  return all;
}

broadcast_algorithm parse_broadcast_algorithm(std::string_view text) {
  return parse_named(text, all_broadcast_algorithms(), "broadcast");
}
reduce_algorithm parse_reduce_algorithm(std::string_view text) {
  return parse_named(text, all_reduce_algorithms(), "reduce");
}
allgather_algorithm parse_allgather_algorithm(std::string_view text) {
  return parse_named(text, all_allgather_algorithms(), "allgather");
}

void throw_size_mismatch(const char* operation, std::size_t expected, std::size_t got) {
  throw invalid_argument(std::string("cachecomm: ") + operation + ": receive span holds " +
                         std::to_string(got) + " elements, expected " + std::to_string(expected));
}

algorithm_choice explain_broadcast(comm& c, std::size_t bytes) {
  auto [algorithm, reason] = choose_broadcast(engine_of(c), bytes);
  return {std::string(to_string(algorithm)), reason};
}
algorithm_choice explain_reduce(comm& c, std::size_t bytes) {
  auto& engine = engine_of(c);
  auto [algorithm, reason] =
      choose_reduce(engine, bytes, engine.tuning().reduce, "set by CACHECOMM_REDUCE", true);
  return {std::string(to_string(algorithm)), reason};
}
algorithm_choice explain_allreduce(comm& c, std::size_t bytes) {
  auto& engine = engine_of(c);
  auto [algorithm, reason] =
      choose_reduce(engine, bytes, engine.tuning().allreduce, "set by CACHECOMM_ALLREDUCE", false);
  return {std::string(to_string(algorithm)), reason};
}
algorithm_choice explain_allgather(comm& c, std::size_t bytes) {
  if (mpi_allgather_wins(engine_of(c), c.impl().single_node(), bytes)) {
    return {"mpi", mpi_allgather_reason};
  }
  auto [algorithm, reason] = choose_allgather(engine_of(c), bytes);
  return {std::string(to_string(algorithm)), reason};
}
bool single_copy_available(comm& c) {
  return engine_of(c).single_copy_available();
}

// ---------------------------------------------------------------------------------------------

void broadcast(comm& c, void* buffer, std::size_t count, datatype type, int root) {
  broadcast(c, buffer, count, type, root, broadcast_algorithm::automatic);
}

void broadcast(comm& c, void* buffer, std::size_t count, datatype type, int root,
               broadcast_algorithm algorithm) {
  auto& engine = engine_of(c);
  check_call(c, engine, {operation_kind::broadcast, count, type, reduce_op::sum, root}, nullptr,
             buffer);
  const std::size_t bytes = count * size_of(type);
  if (bytes == 0 || c.size() == 1) return;
  const broadcast_algorithm chosen = resolve(engine, algorithm, bytes);
  auto& impl = c.impl();
  if (impl.single_node()) {
    engine.broadcast(buffer, bytes, root, chosen);
    return;
  }
  const int root_node = engine.node_of(root);
  const bool root_here = impl.topology().node_index == root_node;
  if (root_here) engine.broadcast(buffer, bytes, engine.node_rank_of(root), chosen);
  if (impl.is_leader()) {
    CACHECOMM_MPI(
        MPI_Bcast(buffer, mpi_count(bytes, "broadcast"), MPI_BYTE, root_node, impl.leaders()));
  }
  if (!root_here) engine.broadcast(buffer, bytes, 0, chosen);
}

void reduce(comm& c, const void* send, void* receive, std::size_t count, datatype type,
            reduce_op op, int root) {
  reduce(c, send, receive, count, type, op, root, reduce_algorithm::automatic);
}

void reduce(comm& c, const void* send, void* receive, std::size_t count, datatype type,
            reduce_op op, int root, reduce_algorithm algorithm) {
  auto& engine = engine_of(c);
  check_call(c, engine, {operation_kind::reduce, count, type, op, root}, send, receive);
  if (count == 0) return;
  const void* input = send == in_place ? receive : send;
  const std::size_t bytes = count * size_of(type);
  if (algorithm == reduce_algorithm::automatic) {
    algorithm =
        choose_reduce(engine, bytes, engine.tuning().reduce, "set by CACHECOMM_REDUCE", true).first;
  }
  auto& impl = c.impl();
  if (impl.single_node()) {
    engine.reduce(input, receive, count, type, op, root, algorithm);
    return;
  }
  // Node phase to each leader, leaders reduce over MPI to the root's leader, which hands it on.
  const int root_node = engine.node_of(root);
  const int root_node_rank = engine.node_rank_of(root);
  std::vector<std::byte> scratch;
  void* node_result = receive;
  if (impl.is_leader() && c.rank() != root) {
    scratch.resize(bytes);
    node_result = scratch.data();
  }
  engine.reduce(input, node_result, count, type, op, 0, algorithm);
  const int mpi_elements = mpi_count(count, "reduce");
  if (impl.is_leader()) {
    if (impl.topology().node_index == root_node) {
      CACHECOMM_MPI(MPI_Reduce(MPI_IN_PLACE, node_result, mpi_elements, mpi_datatype_of(type),
                               mpi_op_of(op), root_node, impl.leaders()));
    } else {
      CACHECOMM_MPI(MPI_Reduce(node_result, nullptr, mpi_elements, mpi_datatype_of(type),
                               mpi_op_of(op), root_node, impl.leaders()));
    }
  }
  if (impl.topology().node_index == root_node && root_node_rank != 0) {
    constexpr int tag = 0x3ed;
    if (impl.is_leader()) {
      CACHECOMM_MPI(MPI_Send(node_result, mpi_elements, mpi_datatype_of(type), root_node_rank, tag,
                             impl.node()));
    } else if (c.rank() == root) {
      CACHECOMM_MPI(MPI_Recv(receive, mpi_elements, mpi_datatype_of(type), 0, tag, impl.node(),
                             MPI_STATUS_IGNORE));
    }
  }
}

void allreduce(comm& c, const void* send, void* receive, std::size_t count, datatype type,
               reduce_op op) {
  allreduce(c, send, receive, count, type, op, reduce_algorithm::automatic);
}

void allreduce(comm& c, const void* send, void* receive, std::size_t count, datatype type,
               reduce_op op, reduce_algorithm algorithm) {
  auto& engine = engine_of(c);
  check_call(c, engine, {operation_kind::allreduce, count, type, op, 0}, send, receive);
  if (count == 0) return;
  const void* input = send == in_place ? receive : send;
  const std::size_t bytes = count * size_of(type);
  if (algorithm == reduce_algorithm::automatic) {
    algorithm =
        choose_reduce(engine, bytes, engine.tuning().allreduce, "set by CACHECOMM_ALLREDUCE", false)
            .first;
  }
  auto& impl = c.impl();
  if (impl.single_node()) {
    engine.reduce(input, receive, count, type, op, -1, algorithm);
    return;
  }
  // Node reduce to the leader; leaders reduce to one leader and broadcast back (so every node
  // holds the same bits, whatever MPI's allreduce would do); node broadcast.
  engine.reduce(input, receive, count, type, op, 0, algorithm);
  if (impl.is_leader()) {
    const int mpi_elements = mpi_count(count, "allreduce");
    int leader_rank = 0;
    CACHECOMM_MPI(MPI_Comm_rank(impl.leaders(), &leader_rank));
    CACHECOMM_MPI(MPI_Reduce(leader_rank == 0 ? MPI_IN_PLACE : receive,
                             leader_rank == 0 ? receive : nullptr, mpi_elements,
                             mpi_datatype_of(type), mpi_op_of(op), 0, impl.leaders()));
    CACHECOMM_MPI(MPI_Bcast(receive, mpi_elements, mpi_datatype_of(type), 0, impl.leaders()));
  }
  engine.broadcast(receive, bytes, 0, resolve(engine, broadcast_algorithm::automatic, bytes));
}

void allgather(comm& c, const void* send, void* receive, std::size_t count_per_rank,
               datatype type) {
  allgather(c, send, receive, count_per_rank, type, allgather_algorithm::automatic);
}

void allgather(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
               allgather_algorithm algorithm) {
  auto& engine = engine_of(c);
  check_call(c, engine, {operation_kind::allgather, count_per_rank, type, reduce_op::sum, 0}, send,
             receive);
  const std::size_t block = count_per_rank * size_of(type);
  if (block == 0) return;
  auto* out = static_cast<std::byte*>(receive);
  const void* input = send == in_place ? out + static_cast<std::size_t>(c.rank()) * block : send;
  auto& impl = c.impl();
  if (algorithm == allgather_algorithm::automatic) {
    if (mpi_allgather_wins(engine, impl.single_node(), block)) {
      // Under the preload this reaches PMPI_Allgather: the call runs inside cachecomm.
      const int count = mpi_count(count_per_rank, "allgather");
      CACHECOMM_MPI(MPI_Allgather(send == in_place ? MPI_IN_PLACE : send, count,
                                  mpi_datatype_of(type), receive, count, mpi_datatype_of(type),
                                  c.mpi_comm()));
      return;
    }
    algorithm = choose_allgather(engine, block).first;
  }
  if (impl.single_node()) {
    engine.allgather(input, receive, block, algorithm);
    return;
  }
  // Node allgather into a scratch area, leaders exchange whole nodes, node broadcast of the result.
  const auto node_size = static_cast<std::size_t>(impl.topology().node_size);
  std::vector<std::byte> node_blocks(node_size * block);
  engine.allgather(input, node_blocks.data(), block, algorithm);
  const std::size_t total = block * static_cast<std::size_t>(c.size());
  if (impl.is_leader()) {
    const int nodes = impl.topology().node_count;
    std::vector<int> counts(static_cast<std::size_t>(nodes), 0);
    for (int rank = 0; rank < c.size(); ++rank)
      counts[static_cast<std::size_t>(engine.node_of(rank))] += 1;
    std::vector<int> displacements(static_cast<std::size_t>(nodes), 0);
    std::size_t offset = 0;
    for (int node = 0; node < nodes; ++node) {
      displacements[static_cast<std::size_t>(node)] = mpi_count(offset, "allgather");
      offset += static_cast<std::size_t>(counts[static_cast<std::size_t>(node)]) * block;
      counts[static_cast<std::size_t>(node)] = mpi_count(
          static_cast<std::size_t>(counts[static_cast<std::size_t>(node)]) * block, "allgather");
    }
    std::vector<std::byte> everything(total);
    CACHECOMM_MPI(MPI_Allgatherv(node_blocks.data(), mpi_count(node_blocks.size(), "allgather"),
                                 MPI_BYTE, everything.data(), counts.data(), displacements.data(),
                                 MPI_BYTE, impl.leaders()));
    for (int rank = 0; rank < c.size(); ++rank) {
      const std::size_t source =
          static_cast<std::size_t>(displacements[static_cast<std::size_t>(engine.node_of(rank))]) +
          static_cast<std::size_t>(engine.node_rank_of(rank)) * block;
      std::memcpy(out + static_cast<std::size_t>(rank) * block, everything.data() + source, block);
    }
  }
  engine.broadcast(receive, total, 0, resolve(engine, broadcast_algorithm::automatic, total));
}

}  // namespace cachecomm
