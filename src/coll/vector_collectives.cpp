// Public entry points of reduce_scatter_block, reduce_scatter, allgatherv, gatherv, scatterv and
// alltoallv: argument checks, the automatic choice, and the multi-node case (handed to the system
// MPI whole, as for the block collectives). The algorithms are in reduce_scatter_block.cpp (both
// reduce-scatters), allgatherv.cpp, gatherv.cpp, scatterv.cpp and alltoallv.cpp.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "cachecomm/error.hpp"
#include "coll/algorithm_registry.hpp"
#include "coll/block_arguments.hpp"
#include "coll/coll_engine.hpp"
#include "coll/entry_points.hpp"
#include "coll/mismatch_error.hpp"
#include "coll/selection.hpp"
#include "coll/system_mpi_choice.hpp"
#include "core/comm_impl.hpp"
#include "core/mpi_check.hpp"
#include "core/mpi_types.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm {

namespace {

using detail::blocking_engine_of;
using detail::engine_of;
using detail::selection_for;

int mpi_count(std::size_t count, const char* what) {
  return detail::mpi_int_count<unsupported_error>(count, [what] {
    return std::string("cachecomm: ") + what +
           " across nodes is limited to INT_MAX bytes (elements) per count in one MPI call";
  });
}

std::size_t element_size(const char* what, datatype type) {
  const int type_value = static_cast<int>(type);
  if (type_value < 0 || type_value > static_cast<int>(datatype::byte)) {
    throw invalid_argument(std::string("cachecomm: ") + what + ": unknown datatype value " +
                           std::to_string(type_value));
  }
  return size_of(type);
}

std::size_t checked_bytes(const char* what, std::size_t count, std::size_t element,
                          std::size_t ranks) {
  std::size_t total = 0;
  if (__builtin_mul_overflow(count, element * ranks, &total)) {
    throw invalid_argument(std::string("cachecomm: ") + what + ": count " + std::to_string(count) +
                           " overflows the byte size");
  }
  return count * element;
}

void check_buffer(const char* what, const char* which, const void* buffer) {
  if (buffer == nullptr || buffer == in_place) {
    throw invalid_argument(std::string("cachecomm: ") + what + ": " + which + " buffer is " +
                           (buffer == nullptr ? "null" : "in_place") + " but its count is not 0");
  }
}

/// Per-rank byte counts and offsets from element counts and displacements, checked.
struct byte_layout {
  std::vector<std::size_t> bytes;
  std::vector<std::size_t> offsets;
  std::size_t largest = 0;
};

/// This thread's layouts, refilled by every call (their vectors keep their capacity: a small call
/// allocates nothing); [1]: alltoallv's receive side. Empty until fill_layout.
std::array<byte_layout, 2>& reusable_layouts() {
  thread_local std::array<byte_layout, 2> layouts;
  for (byte_layout& layout : layouts) {
    layout.bytes.clear();
    layout.offsets.clear();
    layout.largest = 0;
  }
  return layouts;
}
byte_layout& reusable_layout() {
  return reusable_layouts()[0];
}

/// Per-rank byte counts and offsets as the engine reads them (alltoallv).
struct byte_view {
  const std::size_t* bytes = nullptr;
  const std::size_t* offsets = nullptr;
  std::size_t largest = 0;
};

void fill_layout(byte_layout& layout, const char* what, const comm& c,
                 std::span<const std::size_t> counts, std::span<const std::size_t> displacements,
                 std::size_t element) {
  const auto ranks = static_cast<std::size_t>(c.size());
  if (counts.size() != ranks || displacements.size() != ranks) {
    throw invalid_argument(
        std::string("cachecomm: ") + what + ": " + std::to_string(counts.size()) + " counts and " +
        std::to_string(displacements.size()) + " displacements for a communicator of " +
        std::to_string(ranks) + " ranks (one each per rank)");
  }
  layout.bytes.resize(ranks);
  layout.offsets.resize(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    layout.bytes[r] = checked_bytes(what, counts[r], element, 1);
    layout.offsets[r] = checked_bytes(what, displacements[r], element, 1);
    layout.largest = std::max(layout.largest, layout.bytes[r]);
  }
}

/// The description allgatherv's ranks compare: FNV-1a over every rank's byte count.
std::uint64_t fingerprint_of(std::span<const std::size_t> bytes) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (std::size_t value : bytes) {
    for (int shift = 0; shift < 64; shift += 8) {
      hash = (hash ^ ((value >> static_cast<unsigned>(shift)) & 0xffU)) * 1099511628211ULL;
    }
  }
  return hash;
}

/// reduce_scatter's description of its counts: one multiply per rank (the call is on the small
/// calls' path), mixed so that counts moved between ranks change it.
std::uint64_t counts_digest(std::span<const std::size_t> counts) {
  std::uint64_t hash = 0x9e3779b97f4a7c15ULL;
  for (std::size_t value : counts) {
    hash = (hash ^ value) * 0xbf58476d1ce4e5b9ULL;
    hash ^= hash >> 31U;
  }
  return hash ^ (hash >> 29U);
}

/// Ranks whose per-call arrays live on the stack (larger communicators use this thread's vectors).
constexpr std::size_t stack_ranks = 64;

std::vector<int> mpi_counts(const std::vector<std::size_t>& values, const char* what) {
  std::vector<int> result;
  result.reserve(values.size());
  for (std::size_t value : values) result.push_back(mpi_count(value, what));
  return result;
}

/// Whether every value fits MPI's int count (what mpi_count accepts).
bool fit_mpi_int(const std::size_t* values, std::size_t n) {
  constexpr auto mpi_count_limit = static_cast<std::size_t>(std::numeric_limits<int>::max());
  return std::all_of(values, values + n, [](std::size_t v) { return v <= mpi_count_limit; });
}

/// An automatic choice taken inside the call (detail::in_call_planner): a forced choice, the
/// tuning file, online selection (the system MPI among its candidates) or the rules, from the size
/// the engine hands it. A trial call is timed from choose(), after the call's first step (the same
/// for every candidate), to record(); a call that throws records nothing. A call that never
/// chooses (its blocks all fit in the slots, or a gatherv block under 16 KiB) reads no clock. Where
/// some rank cannot hand the call to the system MPI (`system_possible`: an in-place alltoallv,
/// counts or offsets beyond MPI's int), a choice of it gives `fallback(bytes)` instead, on every
/// rank, untimed.
template <typename SystemCall, typename Fallback>
class automatic_in_call final : public detail::in_call_planner {
 public:
  automatic_in_call(comm& c, detail::tuned_op op, bool system_possible, SystemCall system_call,
                    Fallback fallback)
      : m_comm(c),
        m_op(op),
        m_system_possible(system_possible),
        m_system_call(system_call),
        m_fallback(fallback) {}
  automatic_in_call(const automatic_in_call&) = delete;
  automatic_in_call& operator=(const automatic_in_call&) = delete;
  ~automatic_in_call() = default;

  [[nodiscard]] bool system_possible() const override { return m_system_possible; }
  std::int8_t choose(std::size_t bytes, bool system_allowed) override {
    m_start = clock::now();
    m_bytes = bytes;
    m_plan = detail::plan_automatic_call(m_comm, m_op, bytes);
    if (m_plan.choice == detail::tuning_choices::system_mpi && !system_allowed) {
      m_plan.trial = false;
      return m_fallback(bytes);
    }
    return m_plan.choice;
  }
  void system_call(const std::size_t* incoming) override { m_system_call(incoming); }
  /// After the call: hands a trial call's time to online selection.
  void record() const {
    if (!m_plan.trial) return;
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - m_start);
    detail::record_trial(m_comm, m_op, m_bytes, static_cast<std::uint64_t>(elapsed.count()));
  }

 private:
  using clock = std::chrono::steady_clock;
  comm& m_comm;
  detail::tuned_op m_op;
  bool m_system_possible;
  SystemCall m_system_call;
  Fallback m_fallback;
  clock::time_point m_start;
  std::size_t m_bytes = 0;
  detail::automatic_plan m_plan;
};

}  // namespace

algorithm_choice explain_reduce_scatter(comm& c, std::size_t bytes) {
  auto& engine = engine_of(c);
  return explained(detail::select_reduce_scatter(selection_for(c, engine, bytes),
                                                 engine.tuning().reduce_scatter));
}
algorithm_choice explain_allgatherv(comm& c, std::size_t bytes) {
  auto& engine = engine_of(c);
  return detail::explain_automatic(
      c, detail::tuned_op::allgatherv, bytes,
      explained(
          detail::select_allgatherv(selection_for(c, engine, bytes), engine.tuning().allgatherv)));
}
algorithm_choice explain_gatherv(comm& c, std::size_t bytes) {
  auto& engine = engine_of(c);
  const detail::selection_input input = selection_for(c, engine, bytes);
  algorithm_choice rules = explained(detail::select_gatherv(input, engine.tuning().gatherv));
  // Only a pair whose rules take single copy chooses inside the call (gatherv_pair).
  if (c.size() != 2 || rules.algorithm != to_string(gatherv_algorithm::single_copy) ||
      bytes < detail::thresholds::pair_gatherv_planned_min_bytes)
    return rules;
  return detail::explain_automatic(c, detail::tuned_op::gatherv, bytes, std::move(rules));
}

algorithm_choice explain_alltoallv(comm& c, std::size_t bytes) {
  auto& engine = engine_of(c);
  return detail::explain_automatic(
      c, detail::tuned_op::alltoallv, bytes,
      explained(
          detail::select_alltoallv(selection_for(c, engine, bytes), engine.tuning().alltoallv)));
}

algorithm_choice explain_scatterv(comm& c, std::size_t bytes) {
  auto& engine = engine_of(c);
  return explained(
      detail::select_scatterv(selection_for(c, engine, bytes), engine.tuning().scatterv));
}

void reduce_scatter_block(comm& c, const void* send, void* receive, std::size_t count_per_rank,
                          datatype type, reduce_op op) {
  reduce_scatter_block(c, send, receive, count_per_rank, type, op,
                       reduce_scatter_algorithm::automatic);
}

void reduce_scatter_block(comm& c, const void* send, void* receive, std::size_t count_per_rank,
                          datatype type, reduce_op op, reduce_scatter_algorithm algorithm) {
  constexpr const char* what = "reduce_scatter_block";
  auto& engine = blocking_engine_of(c);
  const auto ranks = static_cast<std::size_t>(c.size());
  const std::size_t block = detail::check_reduce_scatter_block_arguments(what, c, send, receive,
                                                                         count_per_rank, type, op);
  if (block == 0) return;
  if (!c.impl().single_node()) {
    CACHECOMM_MPI(MPI_Reduce_scatter_block(
        send == in_place ? MPI_IN_PLACE : send, receive, mpi_count(count_per_rank, what),
        detail::mpi_datatype_of(type), detail::mpi_op_of(op), c.mpi_comm()));
    return;
  }
  if (algorithm == reduce_scatter_algorithm::automatic) {
    algorithm = detail::select_reduce_scatter(selection_for(c, engine, block),
                                              engine.tuning().reduce_scatter)
                    .algorithm;
  }
  // In place, single copy: the others read this rank's input while its result overwrites the
  // first block, so the input is copied aside (central stages each chunk before it writes).
  std::vector<std::byte> staged;
  const void* input = send == in_place ? receive : send;
  if (send == in_place && algorithm == reduce_scatter_algorithm::single_copy) {
    staged.assign(static_cast<const std::byte*>(receive),
                  static_cast<const std::byte*>(receive) + block * ranks);
    input = staged.data();
  }
  engine.reduce_scatter_block(input, receive, count_per_rank, type, op, algorithm);
}

void reduce_scatter(comm& c, const void* send, void* receive,
                    std::span<const std::size_t> receive_counts, datatype type, reduce_op op) {
  reduce_scatter(c, send, receive, receive_counts, type, op, reduce_scatter_algorithm::automatic);
}

void reduce_scatter(comm& c, const void* send, void* receive,
                    std::span<const std::size_t> receive_counts, datatype type, reduce_op op,
                    reduce_scatter_algorithm algorithm) {
  constexpr const char* what = "reduce_scatter";
  auto& engine = blocking_engine_of(c);
  const std::size_t element = element_size(what, type);
  if (op == reduce_op::replace) {
    throw unsupported_error(
        "cachecomm: reduce_scatter: reduce_op::replace is not supported by collectives (it is an "
        "accumulate operation)");
  }
  if (!supports(type, op)) {
    throw unsupported_error("cachecomm: reduce_scatter: operation " + std::string(to_string(op)) +
                            " is not supported on " + std::string(to_string(type)));
  }
  const auto ranks = static_cast<std::size_t>(c.size());
  if (receive_counts.size() != ranks) {
    throw invalid_argument("cachecomm: reduce_scatter: " + std::to_string(receive_counts.size()) +
                           " receive counts for a communicator of " + std::to_string(ranks) +
                           " ranks (one per rank)");
  }
  // Element offsets of the blocks in the input: the running sum of the counts, checked.
  std::array<std::size_t, stack_ranks> stack_offsets;  // NOLINT(*-member-init): written below
  std::size_t* offsets = stack_offsets.data();
  if (ranks > stack_ranks) {
    byte_layout& layout = reusable_layout();
    layout.offsets.resize(ranks);
    offsets = layout.offsets.data();
  }
  std::size_t total = 0;
  std::size_t largest = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    offsets[r] = total;
    if (__builtin_add_overflow(total, receive_counts[r], &total)) total = SIZE_MAX;
    largest = std::max(largest, receive_counts[r]);
  }
  std::size_t total_bytes = 0;
  if (total == SIZE_MAX || __builtin_mul_overflow(total, element, &total_bytes)) {
    throw invalid_argument(
        "cachecomm: reduce_scatter: the receive counts add up to more elements "
        "than an input can hold");
  }
  const auto me = static_cast<std::size_t>(c.rank());
  const std::size_t mine = receive_counts[me];
  if (mine != 0 || (send == in_place && total != 0)) check_buffer(what, "receive", receive);
  if (send != in_place && total != 0) check_buffer(what, "send", send);
  if (!c.impl().single_node()) {
    std::vector<int> mpi_receive_counts;
    mpi_receive_counts.reserve(ranks);
    for (std::size_t value : receive_counts) mpi_receive_counts.push_back(mpi_count(value, what));
    // In place, where this rank's block starts before its result ends (also at the same place),
    // MPICH 4's MPI_Reduce_scatter moves the block with an overlapping memcpy and aborts ("memcpy
    // argument memory ranges overlap"): such a rank passes a copy of its input instead.
    std::vector<std::byte> copy;
    const std::size_t own_offset = offsets[me] * element;
    if (send == in_place && own_offset < mine * element) {
      const auto* from = static_cast<const std::byte*>(receive);
      copy.assign(from, from + total_bytes);
      send = copy.data();
    }
    CACHECOMM_MPI(MPI_Reduce_scatter(send == in_place ? MPI_IN_PLACE : send, receive,
                                     mpi_receive_counts.data(), detail::mpi_datatype_of(type),
                                     detail::mpi_op_of(op), c.mpi_comm()));
    return;
  }
  if (algorithm == reduce_scatter_algorithm::automatic) {
    algorithm = detail::select_reduce_scatter(selection_for(c, engine, largest * element),
                                              engine.tuning().reduce_scatter)
                    .algorithm;
  }
  const auto* input = static_cast<const std::byte*>(send == in_place ? receive : send);
  const std::size_t my_offset = offsets[me] * element;
  const std::byte* own = input == nullptr ? nullptr : input + my_offset;
  // In place: with single copy the others read this rank's input while its result overwrites the
  // start of it, so the input is copied aside; central stages the others' parts before it writes,
  // and needs only this rank's own block aside where its result covers the block's start without
  // being the block itself (an element-wise fold may read and write the same element, not one
  // overlapping another).
  std::vector<std::byte> staged;
  if (send == in_place && algorithm == reduce_scatter_algorithm::single_copy && total != 0) {
    staged.assign(input, input + total_bytes);
    input = staged.data();
    own = input + my_offset;
  } else if (send == in_place && my_offset != 0 && my_offset < mine * element) {
    staged.assign(own, own + mine * element);
    own = staged.data();
  }
  detail::reduce_scatter_call call;
  call.input = input;
  call.own = own;
  call.output = receive;
  call.counts = receive_counts.data();
  call.offsets = offsets;
  call.total = total;
  call.largest = largest;
  call.type = type;
  call.op = op;
  // The call's description: the total in the high bits (so a mismatch names both totals), a digest
  // of the per-rank counts in the low 24.
  const std::uint64_t description =
      static_cast<std::uint64_t>(total_bytes) << 24U | (counts_digest(receive_counts) & 0xffffffU);
  engine.reduce_scatter_counts(call, description, algorithm);
}

void allgatherv(comm& c, const void* send, std::size_t send_count, void* receive,
                std::span<const std::size_t> counts, std::span<const std::size_t> displacements,
                datatype type) {
  allgatherv(c, send, send_count, receive, counts, displacements, type,
             allgatherv_algorithm::automatic);
}

void allgatherv(comm& c, const void* send, std::size_t send_count, void* receive,
                std::span<const std::size_t> counts, std::span<const std::size_t> displacements,
                datatype type, allgatherv_algorithm algorithm) {
  constexpr const char* what = "allgatherv";
  auto& engine = blocking_engine_of(c);
  const std::size_t element = element_size(what, type);
  byte_layout& layout = reusable_layout();
  fill_layout(layout, what, c, counts, displacements, element);
  const auto me = static_cast<std::size_t>(c.rank());
  if (layout.largest == 0 && (send == in_place || send_count == 0)) return;
  check_buffer(what, "receive", receive);
  auto* out = static_cast<std::byte*>(receive);
  const std::size_t own =
      send == in_place ? layout.bytes[me] : checked_bytes(what, send_count, element, 1);
  if (send != in_place && own != 0) check_buffer(what, "send", send);
  const void* input = send == in_place ? out + layout.offsets[me] : send;
  if (!c.impl().single_node()) {
    const std::vector<int> mpi_bytes = mpi_counts(layout.bytes, what);
    const std::vector<int> mpi_offsets = mpi_counts(layout.offsets, what);
    CACHECOMM_MPI(MPI_Allgatherv(send == in_place ? MPI_IN_PLACE : send, mpi_count(own, what),
                                 MPI_BYTE, receive, mpi_bytes.data(), mpi_offsets.data(), MPI_BYTE,
                                 c.mpi_comm()));
    return;
  }
  // A rank whose own count disagrees with counts[rank] takes part with what it sends: its counts
  // then differ from the others', and every rank's description comparison reports it.
  const std::size_t expected = layout.bytes[me];
  layout.bytes[me] = own;
  // The plan's size is the largest block, the same on every rank (counts[] is).
  constexpr auto op = detail::tuned_op::allgatherv;
  detail::automatic_plan plan{static_cast<std::int8_t>(algorithm), false};
  if (algorithm == allgatherv_algorithm::automatic)
    plan = detail::plan_automatic_call(c, op, layout.largest);
  const detail::trial_timer timer(plan.trial);
  if (plan.choice == detail::tuning_choices::system_mpi) {
    // The handshake compares the counts as this rank sees them (its own count included), so a
    // rank whose count disagrees fails on every rank instead of leaving the others in MPI's call.
    detail::agree_before_system_call(c, op, fingerprint_of(layout.bytes));
    layout.bytes[me] = expected;
    const std::vector<int> mpi_bytes = mpi_counts(layout.bytes, what);
    const std::vector<int> mpi_offsets = mpi_counts(layout.offsets, what);
    CACHECOMM_MPI(MPI_Allgatherv(send == in_place ? MPI_IN_PLACE : send, mpi_count(own, what),
                                 MPI_BYTE, receive, mpi_bytes.data(), mpi_offsets.data(), MPI_BYTE,
                                 c.mpi_comm()));
    timer.finish(c, op, layout.largest);
    return;
  }
  algorithm = static_cast<allgatherv_algorithm>(plan.choice);
  // Such a rank receives into scratch: its view of the blocks does not fit the caller's buffer.
  std::vector<std::byte> scratch;
  void* output = receive;
  if (own != expected) {
    std::size_t end = 0;
    for (std::size_t r = 0; r < layout.bytes.size(); ++r)
      end = std::max(end, layout.offsets[r] + layout.bytes[r]);
    scratch.resize(end);
    if (send == in_place) {
      detail::copy_memory(scratch.data() + layout.offsets[me], input, std::min(own, expected));
      input = scratch.data() + layout.offsets[me];
    }
    output = scratch.data();
  }
  const detail::vector_call call{input, own, output, layout.bytes.data(), layout.offsets.data(),
                                 -1};
  auto own_count_error = [&] {
    return detail::mismatch_error("cachecomm: allgatherv: this rank (rank " + std::to_string(me) +
                                      ") sends " + std::to_string(own) + " bytes, but counts[" +
                                      std::to_string(me) + "] gives " + std::to_string(expected),
                                  detail::mismatch_error::field::size);
  };
  try {
    engine.allgatherv(call, fingerprint_of(layout.bytes), algorithm);
  } catch (const detail::mismatch_error&) {
    if (own != expected) throw own_count_error();
    throw;
  }
  if (own != expected) throw own_count_error();
  timer.finish(c, op, layout.largest);
}

void gatherv(comm& c, const void* send, std::size_t send_count, void* receive,
             std::span<const std::size_t> counts, std::span<const std::size_t> displacements,
             datatype type, int root) {
  gatherv(c, send, send_count, receive, counts, displacements, type, root,
          gatherv_algorithm::automatic);
}

void gatherv(comm& c, const void* send, std::size_t send_count, void* receive,
             std::span<const std::size_t> counts, std::span<const std::size_t> displacements,
             datatype type, int root, gatherv_algorithm algorithm) {
  constexpr const char* what = "gatherv";
  auto& engine = blocking_engine_of(c);
  const std::size_t element = element_size(what, type);
  if (root < 0 || root >= c.size()) {
    throw invalid_argument("cachecomm: gatherv: root " + std::to_string(root) +
                           " is not a rank of the communicator (size " + std::to_string(c.size()) +
                           ")");
  }
  const bool is_root = c.rank() == root;
  if (send == in_place && !is_root) {
    throw invalid_argument("cachecomm: gatherv: send is in_place on a rank that is not the root");
  }
  // Only the root has counts (this thread's layout: looked up there alone, a thread-local access
  // from a shared library costs a call). In place is the root's alone (refused above elsewhere).
  byte_layout* layout = is_root ? &reusable_layout() : nullptr;
  if (is_root) fill_layout(*layout, what, c, counts, displacements, element);
  auto* out = static_cast<std::byte*>(receive);
  if (is_root && layout->largest != 0) check_buffer(what, "receive", receive);
  const std::size_t own = send == in_place ? layout->bytes[static_cast<std::size_t>(root)]
                                           : checked_bytes(what, send_count, element, 1);
  if (send != in_place && own != 0) check_buffer(what, "send", send);
  const void* input =
      send == in_place ? out + layout->offsets[static_cast<std::size_t>(root)] : send;
  // The system MPI's call, with the caller's arguments as bytes.
  auto system_call = [&] {
    std::vector<int> mpi_bytes;
    std::vector<int> mpi_offsets;
    if (is_root) {
      mpi_bytes = mpi_counts(layout->bytes, what);
      mpi_offsets = mpi_counts(layout->offsets, what);
    }
    CACHECOMM_MPI(MPI_Gatherv(send == in_place ? MPI_IN_PLACE : send, mpi_count(own, what),
                              MPI_BYTE, receive, mpi_bytes.data(), mpi_offsets.data(), MPI_BYTE,
                              root, c.mpi_comm()));
  };
  if (!c.impl().single_node()) {
    system_call();
    return;
  }
  bool automatic = false;  // a pair's automatic choice, taken inside the call
  if (algorithm == gatherv_algorithm::automatic) {
    // Not from the sizes: only the root knows them, and every rank must choose the same (a pair
    // chooses inside the call, below).
    algorithm =
        detail::select_gatherv(selection_for(c, engine, 0), engine.tuning().gatherv).algorithm;
    // The rules' single copy (2 ranks on their own cores, cross-memory attach works), not a forced
    // one (CACHECOMM_GATHERV keeps its algorithm's own path).
    automatic = c.size() == 2 && engine.tuning().gatherv == gatherv_algorithm::automatic &&
                algorithm == gatherv_algorithm::single_copy;
  }
  const detail::vector_call call{input,
                                 own,
                                 receive,
                                 is_root ? layout->bytes.data() : nullptr,
                                 is_root ? layout->offsets.data() : nullptr,
                                 root};
  if (!automatic) {
    engine.gatherv(call, algorithm);
    return;
  }
  const bool system_possible =
      fit_mpi_int(&own, 1) &&
      (!is_root || (fit_mpi_int(layout->bytes.data(), layout->bytes.size()) &&
                    fit_mpi_int(layout->offsets.data(), layout->offsets.size())));
  automatic_in_call plan(
      c, detail::tuned_op::gatherv, system_possible, [&](const std::size_t*) { system_call(); },
      [](std::size_t) { return detail::tuning_choices::system_mpi; });
  engine.gatherv_pair(call, plan);
  plan.record();
}

void scatterv(comm& c, const void* send, std::span<const std::size_t> counts,
              std::span<const std::size_t> displacements, void* receive, std::size_t receive_count,
              datatype type, int root) {
  scatterv(c, send, counts, displacements, receive, receive_count, type, root,
           scatterv_algorithm::automatic);
}

void scatterv(comm& c, const void* send, std::span<const std::size_t> counts,
              std::span<const std::size_t> displacements, void* receive, std::size_t receive_count,
              datatype type, int root, scatterv_algorithm algorithm) {
  constexpr const char* what = "scatterv";
  auto& engine = blocking_engine_of(c);
  const std::size_t element = element_size(what, type);
  if (root < 0 || root >= c.size()) {
    throw invalid_argument("cachecomm: scatterv: root " + std::to_string(root) +
                           " is not a rank of the communicator (size " + std::to_string(c.size()) +
                           ")");
  }
  const bool is_root = c.rank() == root;
  const bool keep_in_place = receive == in_place_receive;
  if (keep_in_place && !is_root) {
    throw invalid_argument(
        "cachecomm: scatterv: receive is in_place on a rank that is not the root");
  }
  // Only the root has counts (its layout looked up there alone, as in gatherv); keeping its block
  // in place is the root's alone (refused above elsewhere).
  byte_layout* layout = is_root ? &reusable_layout() : nullptr;
  if (is_root) fill_layout(*layout, what, c, counts, displacements, element);
  if (is_root && layout->largest != 0) check_buffer(what, "send", send);
  const auto me = static_cast<std::size_t>(c.rank());
  const std::size_t own =
      keep_in_place ? layout->bytes[me] : checked_bytes(what, receive_count, element, 1);
  if (!keep_in_place && own != 0) check_buffer(what, "receive", receive);
  if (!c.impl().single_node()) {
    std::vector<int> mpi_bytes;
    std::vector<int> mpi_offsets;
    if (is_root) {
      mpi_bytes = mpi_counts(layout->bytes, what);
      mpi_offsets = mpi_counts(layout->offsets, what);
    }
    CACHECOMM_MPI(MPI_Scatterv(send, mpi_bytes.data(), mpi_offsets.data(), MPI_BYTE,
                               keep_in_place ? MPI_IN_PLACE : receive, mpi_count(own, what),
                               MPI_BYTE, root, c.mpi_comm()));
    return;
  }
  if (algorithm == scatterv_algorithm::automatic) {
    // The root's choice is the one taken (it travels in its slot).
    algorithm = detail::select_scatterv(selection_for(c, engine, is_root ? layout->largest : 0),
                                        engine.tuning().scatterv)
                    .algorithm;
  }
  const detail::vector_call call{send,
                                 own,
                                 keep_in_place ? nullptr : receive,
                                 is_root ? layout->bytes.data() : nullptr,
                                 is_root ? layout->offsets.data() : nullptr,
                                 root};
  engine.scatterv(call, algorithm);
}

void alltoallv(comm& c, const void* send, std::span<const std::size_t> send_counts,
               std::span<const std::size_t> send_displacements, void* receive,
               std::span<const std::size_t> receive_counts,
               std::span<const std::size_t> receive_displacements, datatype type) {
  alltoallv(c, send, send_counts, send_displacements, receive, receive_counts,
            receive_displacements, type, alltoallv_algorithm::automatic);
}

void alltoallv(comm& c, const void* send, std::span<const std::size_t> send_counts,
               std::span<const std::size_t> send_displacements, void* receive,
               std::span<const std::size_t> receive_counts,
               std::span<const std::size_t> receive_displacements, datatype type,
               alltoallv_algorithm algorithm) {
  constexpr const char* what = "alltoallv";
  auto& engine = blocking_engine_of(c);
  const std::size_t element = element_size(what, type);
  const bool in_place_call = send == in_place;
  // Bytes and byte offsets per rank: the caller's own arrays when the elements are bytes (the
  // preload passes bytes: no copy on its small calls), otherwise converted into this thread's
  // layouts.
  const auto ranks = static_cast<std::size_t>(c.size());
  // This thread's layouts, looked up (a thread-local access from a shared library costs a call)
  // only when counts are converted: never on the preload's calls.
  std::array<byte_layout, 2>* layouts = nullptr;
  auto view_of = [&](std::size_t side, std::span<const std::size_t> counts,
                     std::span<const std::size_t> displacements) {
    if (element != 1 || counts.size() != ranks || displacements.size() != ranks) {
      if (layouts == nullptr) layouts = &reusable_layouts();
      byte_layout& layout = (*layouts)[side];
      // Throws on counts or displacements of another size than the communicator, naming them.
      fill_layout(layout, what, c, counts, displacements, element);
      return byte_view{layout.bytes.data(), layout.offsets.data(), layout.largest};
    }
    return byte_view{counts.data(), displacements.data(),
                     ranks == 0 ? 0 : *std::max_element(counts.begin(), counts.end())};
  };
  const byte_view received = view_of(1, receive_counts, receive_displacements);
  const byte_view sent = in_place_call ? received : view_of(0, send_counts, send_displacements);
  if (received.largest != 0) check_buffer(what, "receive", receive);
  if (!in_place_call && sent.largest != 0) check_buffer(what, "send", send);
  auto as_mpi = [&](const std::size_t* values) {
    return mpi_counts(std::vector<std::size_t>(values, values + ranks), what);
  };
  // The system MPI's call, with the caller's arguments as bytes.
  auto system_call = [&](const void* mpi_send) {
    const std::vector<int> mpi_receive_bytes = as_mpi(received.bytes);
    const std::vector<int> mpi_receive_offsets = as_mpi(received.offsets);
    std::vector<int> mpi_send_bytes;
    std::vector<int> mpi_send_offsets;
    if (mpi_send != MPI_IN_PLACE) {
      mpi_send_bytes = as_mpi(sent.bytes);
      mpi_send_offsets = as_mpi(sent.offsets);
    }
    CACHECOMM_MPI(MPI_Alltoallv(mpi_send, mpi_send_bytes.data(), mpi_send_offsets.data(), MPI_BYTE,
                                receive, mpi_receive_bytes.data(), mpi_receive_offsets.data(),
                                MPI_BYTE, c.mpi_comm()));
  };
  if (!c.impl().single_node()) {
    system_call(in_place_call ? MPI_IN_PLACE : send);
    return;
  }
  // Where this rank's receive counts disagree with what the others send it, MPI's call (chosen
  // inside the call) receives exactly what they send into scratch, and this rank keeps the smaller
  // part of each block, as cachecomm's paths do (the engine then reports the disagreement).
  auto system_call_receiving = [&](const std::size_t* incoming) {
    if (incoming == nullptr) {
      system_call(send);
      return;
    }
    std::vector<std::size_t> offsets(ranks);
    std::size_t total = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      offsets[r] = total;
      total += incoming[r];
    }
    std::vector<std::byte> scratch(total);
    const std::vector<int> mpi_receive_bytes = as_mpi(incoming);
    const std::vector<int> mpi_receive_offsets = as_mpi(offsets.data());
    const std::vector<int> mpi_send_bytes = as_mpi(sent.bytes);
    const std::vector<int> mpi_send_offsets = as_mpi(sent.offsets);
    CACHECOMM_MPI(MPI_Alltoallv(send, mpi_send_bytes.data(), mpi_send_offsets.data(), MPI_BYTE,
                                scratch.data(), mpi_receive_bytes.data(),
                                mpi_receive_offsets.data(), MPI_BYTE, c.mpi_comm()));
    for (std::size_t r = 0; r < ranks; ++r) {
      const std::size_t n = std::min(incoming[r], received.bytes[r]);
      if (n != 0)
        detail::copy_memory(static_cast<std::byte*>(receive) + received.offsets[r],
                            scratch.data() + offsets[r], n);
    }
  };
  const void* input = in_place_call ? receive : send;
  // In place, a rank whose blocks leave its slot still sends them (pulled, or through the region)
  // after it has begun to receive into the same buffer: it sends from a copy of them instead (one
  // whose blocks fit in its slot has sent them all before it receives anything).
  std::vector<std::byte> staged;
  if (in_place_call && c.size() > 1) {
    const auto me = static_cast<std::size_t>(c.rank());
    std::size_t outgoing = 0;
    std::size_t end = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      if (r != me) outgoing += sent.bytes[r];
      if (sent.bytes[r] != 0) end = std::max(end, sent.offsets[r] + sent.bytes[r]);
    }
    if (outgoing > engine.alltoallv_inline_bytes()) {
      const auto* from = static_cast<const std::byte*>(receive);
      staged.assign(from, from + end);
      input = staged.data();
    }
  }
  const detail::exchange_call call{input,   sent.bytes,     sent.offsets,
                                   receive, received.bytes, received.offsets};
  if (algorithm != alltoallv_algorithm::automatic) {
    engine.alltoallv(call, algorithm);
    return;
  }
  // In place, the first step has already received blocks over the ones this rank sends, so MPI's
  // call cannot start from the buffer: the rules' path instead.
  const bool system_possible =
      !in_place_call && fit_mpi_int(sent.bytes, ranks) && fit_mpi_int(sent.offsets, ranks) &&
      fit_mpi_int(received.bytes, ranks) && fit_mpi_int(received.offsets, ranks);
  automatic_in_call plan(
      c, detail::tuned_op::alltoallv, system_possible, system_call_receiving,
      [&](std::size_t bytes) {
        return static_cast<std::int8_t>(detail::select_alltoallv(selection_for(c, engine, bytes),
                                                                 alltoallv_algorithm::automatic)
                                            .algorithm);
      });
  engine.alltoallv(call, plan);
  plan.record();
}

}  // namespace cachecomm
