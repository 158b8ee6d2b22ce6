// Public entry points of the data collectives: argument checks, the automatic choice, and the
// multi-node composition (node phase in shared memory, leaders over MPI).
#include "cachecomm/collectives.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "cachecomm/error.hpp"
#include "coll/algorithm_registry.hpp"
#include "coll/barrier.hpp"
#include "coll/coll_engine.hpp"
#include "coll/entry_points.hpp"
#include "coll/nonblocking_state.hpp"
#include "coll/selection.hpp"
#include "coll/system_mpi_choice.hpp"
#include "coll/tuning_loader.hpp"
#include "core/comm_impl.hpp"
#include "core/mpi_check.hpp"
#include "core/mpi_types.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm {

// The public bound benchmarks rely on: every round of every candidate (with its warm-up calls),
// then the call that settles.
static_assert(detail::online_selector::max_trial_calls + 1 <=
              static_cast<std::size_t>(online_selection_trial_calls));
static_assert(detail::online_selector::max_paced_trial_calls + 1 <=
              static_cast<std::size_t>(online_selection_paced_calls));

using detail::mpi_datatype_of;
using detail::mpi_op_of;

namespace {

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
  return detail::mpi_int_count<unsupported_error>(count, [what] {
    return std::string("cachecomm: ") + what +
           " across nodes is limited to INT_MAX elements per MPI call";
  });
}

struct call_signature {
  operation_kind kind;
  std::size_t count;
  datatype type;
  reduce_op op;
  int root;
};

/// What is wrong with this rank's arguments, as a kind (which exception) and a message.
struct call_problem {
  enum class kind { none, invalid, unsupported };
  kind what = kind::none;
  std::string message;
  [[nodiscard]] bool empty() const { return what == kind::none; }
};

/// Which of this rank's arguments is wrong. Found on every call, so it builds no message (that is
/// describe_problem's, once one is wrong): at 8 bytes a call's whole path is a few hundred
/// instructions, and a message's string cost a quarter of them.
enum class problem_code : std::uint8_t {
  none,
  unknown_type,
  overflow,
  bad_root,
  replace_op,
  unsupported_pair,
  null_buffer,
  in_place_buffer,
  null_send,
  bad_receive,
  reduce_in_place_null,
};

problem_code find_problem(const comm& c, const call_signature& call, const void* send,
                          const void* receive) {
  const int type_value = static_cast<int>(call.type);
  if (type_value < 0 || type_value > static_cast<int>(datatype::byte))
    return problem_code::unknown_type;
  const std::size_t element = size_of(call.type);
  std::size_t total_bytes = 0;
  if (__builtin_mul_overflow(call.count, element * static_cast<std::size_t>(c.size()),
                             &total_bytes))
    return problem_code::overflow;
  if (call.kind == operation_kind::broadcast || call.kind == operation_kind::reduce) {
    if (call.root < 0 || call.root >= c.size()) return problem_code::bad_root;
  }
  if (call.kind == operation_kind::reduce || call.kind == operation_kind::allreduce) {
    if (call.op == reduce_op::replace) return problem_code::replace_op;
    if (!supports(call.type, call.op)) return problem_code::unsupported_pair;
  }
  if (call.count == 0) return problem_code::none;
  const bool receives = call.kind != operation_kind::reduce || call.root == c.rank();
  if (call.kind == operation_kind::broadcast) {
    if (receive == nullptr) return problem_code::null_buffer;
    if (receive == in_place) return problem_code::in_place_buffer;
    return problem_code::none;
  }
  if (send == nullptr) return problem_code::null_send;
  if (receives && (receive == nullptr || receive == in_place)) return problem_code::bad_receive;
  if (send == in_place && !receives && receive == nullptr)
    return problem_code::reduce_in_place_null;
  return problem_code::none;
}

/// The exception kind and message of a problem find_problem found.
[[gnu::cold]] call_problem describe_problem(problem_code code, const comm& c,
                                            const call_signature& call, const void* receive) {
  const std::string what = std::string("cachecomm: ") + name_of(call.kind);
  switch (code) {
    case problem_code::none: return {};
    case problem_code::unknown_type:
      return {call_problem::kind::invalid,
              what + ": unknown datatype value " + std::to_string(static_cast<int>(call.type))};
    case problem_code::overflow:
      return {call_problem::kind::invalid,
              what + ": count " + std::to_string(call.count) + " overflows the byte size"};
    case problem_code::bad_root:
      return {call_problem::kind::invalid, what + ": root " + std::to_string(call.root) +
                                               " is not a rank of the communicator (size " +
                                               std::to_string(c.size()) + ")"};
    case problem_code::replace_op:
      return {call_problem::kind::unsupported,
              what +
                  ": reduce_op::replace is not supported by collectives (it is an accumulate "
                  "operation); use sum, product, min, max, or a logical or bitwise operation"};
    case problem_code::unsupported_pair:
      return {call_problem::kind::unsupported,
              what + ": operation " + std::string(to_string(call.op)) + " is not supported on " +
                  std::string(to_string(call.type)) +
                  " (min/max need real numbers; logical and bitwise operations need integers; "
                  "bytes can only be moved)"};
    case problem_code::null_buffer:
      return {call_problem::kind::invalid,
              what + ": buffer is null but count is " + std::to_string(call.count)};
    case problem_code::in_place_buffer:
      return {call_problem::kind::invalid, what + ": in_place is not a buffer"};
    case problem_code::null_send:
      return {call_problem::kind::invalid,
              what + ": send buffer is null but count is " + std::to_string(call.count) +
                  " (use cachecomm::in_place to reduce the receive buffer in place)"};
    case problem_code::bad_receive:
      return {call_problem::kind::invalid, what + ": receive buffer is " +
                                               (receive == nullptr ? "null" : "in_place") +
                                               " but count is " + std::to_string(call.count)};
    case problem_code::reduce_in_place_null:
      return {call_problem::kind::invalid,
              what +
                  ": send is in_place on a non-root rank, so the input would be the receive "
                  "buffer, which is null"};
  }
  return {};
}

call_problem local_problem(const comm& c, const call_signature& call, const void* send,
                           const void* receive) {
  const problem_code code = find_problem(c, call, send, receive);
  if (code == problem_code::none) return {};
  return describe_problem(code, c, call, receive);
}

[[noreturn, gnu::cold]] void throw_problem(const call_problem& problem) {
  if (problem.what == call_problem::kind::unsupported) throw unsupported_error(problem.message);
  throw invalid_argument(problem.message);
}

/// Throws on this rank when its own arguments are bad; with CACHECOMM_CHECK on, also compares the
/// call across ranks and throws on every rank when any rank is bad or they disagree.
void check_call(comm& c, detail::coll_engine& engine, const call_signature& call, const void* send,
                const void* receive) {
  if (!engine.tuning().check) [[likely]] {
    if (const problem_code code = find_problem(c, call, send, receive); code != problem_code::none)
        [[unlikely]]
      throw_problem(describe_problem(code, c, call, receive));
    return;
  }
  const call_problem problem = local_problem(c, call, send, receive);
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
  if (!problem.empty()) throw_problem(problem);
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

using detail::blocking_engine_of;
using detail::engine_of;
using detail::selection_for;

/// Whether CACHECOMM_<OP> leaves `op` to the automatic choice (a forced algorithm beats the
/// system MPI as it beats the tuning file).
bool automatic_setting(const detail::coll_engine& engine, detail::tuned_op op) {
  const detail::coll_tuning& tuning = engine.tuning();
  switch (op) {
    case detail::tuned_op::broadcast: return tuning.broadcast == broadcast_algorithm::automatic;
    case detail::tuned_op::reduce: return tuning.reduce == reduce_algorithm::automatic;
    case detail::tuned_op::allreduce: return tuning.allreduce == reduce_algorithm::automatic;
    case detail::tuned_op::allgather: return tuning.allgather == allgather_algorithm::automatic;
    case detail::tuned_op::gather: return tuning.gather == gather_algorithm::automatic;
    case detail::tuned_op::scatter: return tuning.scatter == scatter_algorithm::automatic;
    case detail::tuned_op::alltoall: return tuning.alltoall == alltoall_algorithm::automatic;
    case detail::tuned_op::allgatherv: return tuning.allgatherv == allgatherv_algorithm::automatic;
    case detail::tuned_op::alltoallv: return tuning.alltoallv == alltoallv_algorithm::automatic;
    case detail::tuned_op::gatherv: return tuning.gatherv == gatherv_algorithm::automatic;
    case detail::tuned_op::barrier: break;
  }
  return true;
}

/// Why the automatic choice hands this call to the system MPI, or empty (see system_mpi_reason).
std::string_view system_reason(comm& c, const detail::coll_engine& engine, detail::tuned_op op,
                               std::size_t bytes) {
  return detail::system_mpi_reason(selection_for(c, engine, bytes), op,
                                   automatic_setting(engine, op));
}

broadcast_algorithm resolve(comm& c, const detail::coll_engine& engine,
                            broadcast_algorithm algorithm, std::size_t bytes) {
  if (algorithm != broadcast_algorithm::automatic) return algorithm;
  return detail::select_broadcast(selection_for(c, engine, bytes), engine.tuning().broadcast)
      .algorithm;
}

/// The tuning file's or the built-in rules' choice (forced ones included): system_mpi or an id.
std::int8_t rule_choice(const detail::selection_input& input, const detail::coll_engine& engine,
                        detail::tuned_op op) {
  using detail::tuned_op;
  if (!detail::system_mpi_reason(input, op, automatic_setting(engine, op)).empty())
    return detail::tuning_choices::system_mpi;
  const detail::coll_tuning& tuning = engine.tuning();
  switch (op) {
    case tuned_op::broadcast:
      return static_cast<std::int8_t>(detail::select_broadcast(input, tuning.broadcast).algorithm);
    case tuned_op::reduce:
      return static_cast<std::int8_t>(detail::select_reduce(input, tuning.reduce, true).algorithm);
    case tuned_op::allreduce:
      return static_cast<std::int8_t>(
          detail::select_reduce(input, tuning.allreduce, false).algorithm);
    case tuned_op::allgather:
      return static_cast<std::int8_t>(detail::select_allgather(input, tuning.allgather).algorithm);
    case tuned_op::gather:
      return static_cast<std::int8_t>(detail::select_gather(input, tuning.gather).algorithm);
    case tuned_op::scatter:
      return static_cast<std::int8_t>(detail::select_scatter(input, tuning.scatter).algorithm);
    case tuned_op::alltoall:
      return static_cast<std::int8_t>(detail::select_alltoall(input, tuning.alltoall).algorithm);
    case tuned_op::allgatherv:
      return static_cast<std::int8_t>(
          detail::select_allgatherv(input, tuning.allgatherv).algorithm);
    case tuned_op::alltoallv:
      return static_cast<std::int8_t>(detail::select_alltoallv(input, tuning.alltoallv).algorithm);
    case tuned_op::gatherv:
      return static_cast<std::int8_t>(detail::select_gatherv(input, tuning.gatherv).algorithm);
    case tuned_op::barrier: break;
  }
  throw usage_error("cachecomm: the barrier has no per-call choice");
}

/// Whether online selection decides this call: on for its size, nothing forced, no tuning file
/// choice, one node of more than one rank (across nodes the node's choice cannot be the whole
/// comm's), and a size MPI can count (the system MPI is a candidate of every bucket).
bool online_decides(const detail::selection_input& input, const detail::coll_engine& engine,
                    detail::tuned_op op) {
  constexpr std::size_t mpi_count_limit = 0x7fffffff;
  return engine.online().decides(input.bytes) && automatic_setting(engine, op) &&
         detail::selection_rules::measured_choice(input, op) == detail::tuning_choices::none &&
         input.node_count == 1 && input.node.node_size > 1 && input.bytes <= mpi_count_limit;
}

/// The candidates of a bucket: the rules' choice first (the baseline), then every other algorithm
/// that runs as itself on this node and is worth a trial call here (detail::online_skips), then
/// the system MPI.
template <typename Entry>
std::vector<std::int8_t> candidates_from(std::span<const Entry> registry, detail::tuned_op op,
                                         const detail::selection_input& input, std::int8_t first) {
  std::vector<std::int8_t> candidates{first};
  for (const Entry& entry : registry) {
    const auto id = static_cast<std::int8_t>(entry.id);
    if (id != first && entry.applicable(input.node) && !detail::online_skips(op, id, input))
      candidates.push_back(id);
  }
  if (first != detail::tuning_choices::system_mpi)
    candidates.push_back(detail::tuning_choices::system_mpi);
  return candidates;
}

/// Whether the rules' choice keeps adapting after a trial could see it: gather-reduce's allreduce
/// from 64 KiB picks streaming or ordinary stores per call from its own timings
/// (store_mode.hpp), starting with streaming stores and probing the other mode after 16 calls,
/// so its 3 trial calls show only its first mode, and this VM's placement, which decides the
/// better mode, changes from minute to minute. Against the other algorithms the trial settled
/// on slots or reduce-scatter in one OSU run of three (2 ranks, 32 KiB-1 MiB), 1.5x slower than
/// gather-reduce in the others. Such a choice is compared only with the system MPI's call and,
/// below 512 KiB, split-pipeline (it keeps one store mode, so its trial shows what it runs at).
/// Same VM, 2 ranks: split-pipeline took 7.1 / 10.5 us at 64 / 128 KiB against gather-reduce's
/// 10.1 / 12.0 in one set of 5 cachecomm-bench runs (5.6 / 9.7 against 5.8 / 9.7 in another), but
/// 36 / 73 / 324 us at 512 KiB / 1 MiB / 4 MiB against 35 / 69 / 296 once gather-reduce's store
/// mode settled; osu_allreduce under Intel MPI at 64 KiB, 6 rounds: 6.2 us with it as a candidate,
/// 8.9 without (Intel MPI plain 6.6).
constexpr std::size_t split_pipeline_rival_below_bytes = std::size_t{512} << 10;

bool adapts_after_the_trial(detail::tuned_op op, const detail::selection_input& input,
                            const detail::coll_engine& engine, std::int8_t first) {
  return op == detail::tuned_op::allreduce &&
         first == static_cast<std::int8_t>(reduce_algorithm::gather_reduce) &&
         engine.tuning().adaptive_stores && input.bytes >= detail::adaptive_store_min_bytes;
}

std::vector<std::int8_t> candidates_of(detail::tuned_op op, const detail::selection_input& input,
                                       const detail::coll_engine& engine, std::int8_t first) {
  if (adapts_after_the_trial(op, input, engine, first)) {
    constexpr auto split = static_cast<std::int8_t>(reduce_algorithm::split_pipeline);
    if (input.bytes >= split_pipeline_rival_below_bytes || detail::online_skips(op, split, input))
      return {first, detail::tuning_choices::system_mpi};
    return {first, split, detail::tuning_choices::system_mpi};
  }
  switch (op) {
    case detail::tuned_op::broadcast:
      return candidates_from(detail::broadcast_registry(), op, input, first);
    case detail::tuned_op::reduce:
    case detail::tuned_op::allreduce:
      return candidates_from(detail::reduce_registry(), op, input, first);
    case detail::tuned_op::allgather:
      return candidates_from(detail::allgather_registry(), op, input, first);
    case detail::tuned_op::gather:
      return candidates_from(detail::gather_registry(), op, input, first);
    case detail::tuned_op::scatter:
      return candidates_from(detail::scatter_registry(), op, input, first);
    case detail::tuned_op::alltoall:
      return candidates_from(detail::alltoall_registry(), op, input, first);
    case detail::tuned_op::allgatherv:
      return candidates_from(detail::allgatherv_registry(), op, input, first);
    case detail::tuned_op::alltoallv:
      return candidates_from(detail::alltoallv_registry(), op, input, first);
    case detail::tuned_op::gatherv:
      return candidates_from(detail::gatherv_registry(), op, input, first);
    case detail::tuned_op::barrier: break;
  }
  return {first};
}

/// explain_*'s answer with online selection: the measured choice once settled, else the rules'
/// choice with what online selection will do (or is doing).
algorithm_choice with_online(comm& c, const detail::coll_engine& engine, detail::tuned_op op,
                             std::size_t bytes, algorithm_choice rules) {
  const detail::online_selector& online = engine.online();
  if (const auto settled = online.settled(op, bytes); settled != detail::tuning_choices::none)
    return {std::string(detail::choice_name(op, settled)), online.describe(op, bytes)};
  const detail::selection_input input = selection_for(c, engine, bytes);
  if (!online_decides(input, engine, op)) return rules;
  std::string names;
  for (const std::int8_t id : candidates_of(op, input, engine, rule_choice(input, engine, op))) {
    names += (names.empty() ? "" : ", ") + std::string(detail::choice_name(op, id));
  }
  const std::string status = online.source_of(op, bytes) == detail::choice_source::trial
                                 ? "online selection is measuring "
                                 : "online selection will measure ";
  rules.reason = status + names + " on the first calls of this size bucket (up to " +
                 std::to_string(detail::online_selector::samples_per_candidate) +
                 " each) and keep the fastest; the rules' choice, tried first: " + rules.reason;
  return rules;
}

}  // namespace

namespace detail {

algorithm_choice explain_automatic(comm& c, tuned_op op, std::size_t bytes,
                                   algorithm_choice rules) {
  auto& engine = engine_of(c);
  const auto system = system_reason(c, engine, op, bytes);
  if (!system.empty()) return with_online(c, engine, op, bytes, {"mpi", std::string(system)});
  return with_online(c, engine, op, bytes, std::move(rules));
}

void check_nonblocking_arguments(comm& c, nonblocking_collective collective, const void* send,
                                 const void* receive, std::size_t count, datatype type,
                                 reduce_op op, int root) {
  operation_kind kind = operation_kind::broadcast;
  switch (collective) {
    case nonblocking_collective::barrier: return;
    case nonblocking_collective::broadcast: kind = operation_kind::broadcast; break;
    case nonblocking_collective::reduce: kind = operation_kind::reduce; break;
    case nonblocking_collective::allreduce: kind = operation_kind::allreduce; break;
    case nonblocking_collective::allgather: kind = operation_kind::allgather; break;
    case nonblocking_collective::gather:
    case nonblocking_collective::scatter:
    case nonblocking_collective::alltoall:
    case nonblocking_collective::reduce_scatter_block:
    case nonblocking_collective::scan:
    case nonblocking_collective::exscan: return;  // nonblocking_blocks.cpp: block_arguments.hpp
  }
  call_problem problem = local_problem(c, {kind, count, type, op, root}, send, receive);
  if (problem.empty()) return;
  // The blocking call's message, naming the nonblocking one: "cachecomm: ibcast: ...".
  const std::string blocking = std::string("cachecomm: ") + name_of(kind);
  if (problem.message.rfind(blocking, 0) == 0) {
    std::string renamed = "cachecomm: ";
    if (kind == operation_kind::broadcast) {
      renamed += "ibcast";
    } else {
      renamed += 'i';
      renamed += name_of(kind);
    }
    renamed.append(problem.message, blocking.size(), std::string::npos);
    problem.message = std::move(renamed);
  }
  if (problem.what == call_problem::kind::unsupported) throw unsupported_error(problem.message);
  throw invalid_argument(problem.message);
}

}  // namespace detail

void throw_size_mismatch(const char* operation, std::size_t expected, std::size_t got) {
  throw invalid_argument(std::string("cachecomm: ") + operation + ": receive span holds " +
                         std::to_string(got) + " elements, expected " + std::to_string(expected));
}

algorithm_choice explain_broadcast(comm& c, std::size_t bytes) {
  auto& engine = engine_of(c);
  const auto op = detail::tuned_op::broadcast;
  const auto system = system_reason(c, engine, op, bytes);
  if (!system.empty()) return with_online(c, engine, op, bytes, {"mpi", std::string(system)});
  return with_online(c, engine, op, bytes,
                     explained(detail::select_broadcast(selection_for(c, engine, bytes),
                                                        engine.tuning().broadcast)));
}
algorithm_choice explain_reduce(comm& c, std::size_t bytes) {
  auto& engine = engine_of(c);
  const auto op = detail::tuned_op::reduce;
  const auto system = system_reason(c, engine, op, bytes);
  if (!system.empty()) return with_online(c, engine, op, bytes, {"mpi", std::string(system)});
  return with_online(c, engine, op, bytes,
                     explained(detail::select_reduce(selection_for(c, engine, bytes),
                                                     engine.tuning().reduce, true)));
}
algorithm_choice explain_allreduce(comm& c, std::size_t bytes) {
  auto& engine = engine_of(c);
  const auto op = detail::tuned_op::allreduce;
  const auto system = system_reason(c, engine, op, bytes);
  if (!system.empty()) return with_online(c, engine, op, bytes, {"mpi", std::string(system)});
  algorithm_choice choice = explained(
      detail::select_reduce(selection_for(c, engine, bytes), engine.tuning().allreduce, false));
  // The store mode is each rank's own, per call (store_mode.hpp): say that it is measured.
  if (choice.algorithm == "gather-reduce" && engine.tuning().adaptive_stores &&
      bytes >= detail::adaptive_store_min_bytes) {
    choice.reason +=
        "; staged with streaming or ordinary stores, chosen per call by each rank from its "
        "measured call times (the finalize summary names the mode settled on)";
  }
  return with_online(c, engine, op, bytes, std::move(choice));
}
algorithm_choice explain_allgather(comm& c, std::size_t bytes) {
  auto& engine = engine_of(c);
  const auto op = detail::tuned_op::allgather;
  const auto system = system_reason(c, engine, op, bytes);
  if (!system.empty()) return with_online(c, engine, op, bytes, {"mpi", std::string(system)});
  return with_online(c, engine, op, bytes,
                     explained(detail::select_allgather(selection_for(c, engine, bytes),
                                                        engine.tuning().allgather)));
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
  auto& engine = blocking_engine_of(c);
  check_call(c, engine, {operation_kind::broadcast, count, type, reduce_op::sum, root}, nullptr,
             buffer);
  const std::size_t bytes = count * size_of(type);
  if (bytes == 0 || c.size() == 1) return;
  constexpr auto op = detail::tuned_op::broadcast;
  detail::automatic_plan plan{static_cast<std::int8_t>(algorithm), false};
  if (algorithm == broadcast_algorithm::automatic) plan = detail::plan_automatic_call(c, op, bytes);
  const detail::trial_timer timer(plan.trial);
  if (plan.choice == detail::tuning_choices::system_mpi) {
    // Under the preload this reaches PMPI_Bcast: the call runs inside cachecomm.
    engine.agree_on_system_call(op, bytes);
    CACHECOMM_MPI(MPI_Bcast(buffer, mpi_count(bytes, "broadcast"), MPI_BYTE, root, c.mpi_comm()));
    timer.finish(c, op, bytes);
    return;
  }
  const auto chosen = static_cast<broadcast_algorithm>(plan.choice);
  auto& impl = c.impl();
  if (impl.single_node()) {
    engine.broadcast(buffer, bytes, root, chosen);
    timer.finish(c, op, bytes);
    return;
  }
  const int root_node = impl.topology().node_id(root);
  const bool root_here = impl.topology().node_index == root_node;
  if (root_here) engine.broadcast(buffer, bytes, impl.topology().node_rank_of(root), chosen);
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
  auto& engine = blocking_engine_of(c);
  check_call(c, engine, {operation_kind::reduce, count, type, op, root}, send, receive);
  if (count == 0) return;
  const void* input = send == in_place ? receive : send;
  const std::size_t bytes = count * size_of(type);
  constexpr auto tuned = detail::tuned_op::reduce;
  detail::automatic_plan plan{static_cast<std::int8_t>(algorithm), false};
  if (algorithm == reduce_algorithm::automatic)
    plan = detail::plan_automatic_call(c, tuned, bytes, type, op);
  const detail::trial_timer timer(plan.trial);
  if (plan.choice == detail::tuning_choices::system_mpi) {
    // MPI_IN_PLACE is the root's only; a non-root's in_place input is its receive buffer.
    const bool is_root = c.rank() == root;
    const void* mpi_send = send != in_place ? send : (is_root ? MPI_IN_PLACE : receive);
    engine.agree_on_system_call(tuned, bytes, type, static_cast<std::uint32_t>(op));
    CACHECOMM_MPI(MPI_Reduce(mpi_send, receive, mpi_count(count, "reduce"), mpi_datatype_of(type),
                             mpi_op_of(op), root, c.mpi_comm()));
    timer.finish(c, tuned, bytes);
    return;
  }
  algorithm = static_cast<reduce_algorithm>(plan.choice);
  auto& impl = c.impl();
  if (impl.single_node()) {
    engine.reduce(input, receive, count, type, op, root, algorithm);
    timer.finish(c, tuned, bytes);
    return;
  }
  // Node phase to each leader, leaders reduce over MPI to the root's leader, which hands it on.
  const int root_node = impl.topology().node_id(root);
  const int root_node_rank = impl.topology().node_rank_of(root);
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
  auto& engine = blocking_engine_of(c);
  check_call(c, engine, {operation_kind::allreduce, count, type, op, 0}, send, receive);
  if (count == 0) return;
  const void* input = send == in_place ? receive : send;
  const std::size_t bytes = count * size_of(type);
  constexpr auto tuned = detail::tuned_op::allreduce;
  detail::automatic_plan plan{static_cast<std::int8_t>(algorithm), false};
  if (algorithm == reduce_algorithm::automatic)
    plan = detail::plan_automatic_call(c, tuned, bytes, type, op);
  const detail::trial_timer timer(plan.trial);
  if (plan.choice == detail::tuning_choices::system_mpi) {
    engine.agree_on_system_call(tuned, bytes, type, static_cast<std::uint32_t>(op));
    CACHECOMM_MPI(MPI_Allreduce(send == in_place ? MPI_IN_PLACE : send, receive,
                                mpi_count(count, "allreduce"), mpi_datatype_of(type), mpi_op_of(op),
                                c.mpi_comm()));
    timer.finish(c, tuned, bytes);
    return;
  }
  algorithm = static_cast<reduce_algorithm>(plan.choice);
  auto& impl = c.impl();
  if (impl.single_node()) {
    engine.reduce(input, receive, count, type, op, -1, algorithm);
    timer.finish(c, tuned, bytes);
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
  engine.broadcast(receive, bytes, 0, resolve(c, engine, broadcast_algorithm::automatic, bytes));
}

void allgather(comm& c, const void* send, void* receive, std::size_t count_per_rank,
               datatype type) {
  allgather(c, send, receive, count_per_rank, type, allgather_algorithm::automatic);
}

void allgather(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
               allgather_algorithm algorithm) {
  auto& engine = blocking_engine_of(c);
  check_call(c, engine, {operation_kind::allgather, count_per_rank, type, reduce_op::sum, 0}, send,
             receive);
  const std::size_t block = count_per_rank * size_of(type);
  if (block == 0) return;
  auto* out = static_cast<std::byte*>(receive);
  const void* input = send == in_place ? out + static_cast<std::size_t>(c.rank()) * block : send;
  constexpr auto tuned = detail::tuned_op::allgather;
  detail::automatic_plan plan{static_cast<std::int8_t>(algorithm), false};
  if (algorithm == allgather_algorithm::automatic)
    plan = detail::plan_automatic_call(c, tuned, block);
  const detail::trial_timer timer(plan.trial);
  if (plan.choice == detail::tuning_choices::system_mpi) {
    // Under the preload this reaches PMPI_Allgather: the call runs inside cachecomm.
    const int count = mpi_count(count_per_rank, "allgather");
    engine.agree_on_system_call(tuned, block);
    CACHECOMM_MPI(MPI_Allgather(send == in_place ? MPI_IN_PLACE : send, count,
                                mpi_datatype_of(type), receive, count, mpi_datatype_of(type),
                                c.mpi_comm()));
    timer.finish(c, tuned, block);
    return;
  }
  algorithm = static_cast<allgather_algorithm>(plan.choice);
  auto& impl = c.impl();
  if (impl.single_node()) {
    engine.allgather(input, receive, block, algorithm);
    timer.finish(c, tuned, block);
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
      counts[static_cast<std::size_t>(impl.topology().node_id(rank))] += 1;
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
          static_cast<std::size_t>(
              displacements[static_cast<std::size_t>(impl.topology().node_id(rank))]) +
          static_cast<std::size_t>(impl.topology().node_rank_of(rank)) * block;
      detail::copy_memory(out + static_cast<std::size_t>(rank) * block, everything.data() + source,
                          block);
    }
  }
  engine.broadcast(receive, total, 0, resolve(c, engine, broadcast_algorithm::automatic, total));
}

namespace detail {

selection_input selection_for(comm& c, const coll_engine& engine, std::size_t bytes) {
  selection_input input;
  input.bytes = bytes;
  input.node_count = c.topology().node_count;
  input.node = engine.shape();
  input.measured = &tuning_of(c.impl()).choices;
  input.mpi = running_mpi_family();
  input.streaming_stores = engine.tuning().streaming_stores;
  input.amd_cpu = engine.tuning().amd_cpu;
  return input;
}

std::string_view system_mpi_choice(comm& c, tuned_op op, std::size_t bytes) {
  if (op == tuned_op::barrier) return system_barrier_reason(c.impl());
  return system_reason(c, engine_of(c), op, bytes);
}

automatic_plan plan_automatic_call(comm& c, tuned_op op, std::size_t bytes, datatype type,
                                   reduce_op operation) {
  coll_engine& engine = engine_of(c);
  online_selector& online = engine.online();
  if (const std::int8_t settled = online.settled_call(op, bytes); settled != tuning_choices::none)
    return {settled, false};
  if (const std::int8_t known = online.remembered_rule(op, bytes); known != tuning_choices::none)
    return {known, false};
  const selection_input input = selection_for(c, engine, bytes);
  const std::int8_t rules = rule_choice(input, engine, op);
  if (!online_decides(input, engine, op)) {
    // A size online selection does not decide (above INT_MAX) in a bucket it settled (here: being
    // re-checked) keeps the bucket's choice, unremembered: a reduction's rules might sit across
    // the system MPI's call from it.
    if (const std::int8_t settled = online.settled(op, bytes); settled != tuning_choices::none)
      return {settled, false};
    const choice_source source =
        !automatic_setting(engine, op) ? choice_source::forced
        : selection_rules::measured_choice(input, op) != tuning_choices::none
            ? choice_source::tuning_file
            : choice_source::builtin;
    online.note(op, bytes, source, rules);
    online.remember_rule(op, bytes, rules);
    return {rules, false};
  }
  // The handshake describes the call as its cachecomm path and the system MPI's agreement do.
  const bool reduction = op == tuned_op::reduce || op == tuned_op::allreduce;
  const datatype handshake_type = reduction ? type : datatype::byte;
  const std::uint32_t handshake_operation =
      reduction ? static_cast<std::uint32_t>(operation) : 0xffU;
  const online_plan plan = online.plan(
      op, bytes, [&] { return candidates_of(op, input, engine, rules); },
      [&](const online_selector::trial_values& mine, std::size_t count, unsigned parity) {
        return engine.agree_on_trial(op, bytes, handshake_type, handshake_operation, mine, count,
                                     parity);
      });
  return {plan.choice, plan.trial, plan.warm_up};
}

void record_trial(comm& c, tuned_op op, std::size_t bytes, std::uint64_t nanoseconds) {
  engine_of(c).online().record(op, bytes, nanoseconds);
}

void agree_before_system_call(comm& c, tuned_op op, std::size_t bytes, datatype type,
                              reduce_op operation) {
  const bool reduction = op == tuned_op::reduce || op == tuned_op::allreduce;
  engine_of(c).agree_on_system_call(op, bytes, reduction ? type : datatype::byte,
                                    reduction ? static_cast<std::uint32_t>(operation) : 0xffU);
}

}  // namespace detail

}  // namespace cachecomm
