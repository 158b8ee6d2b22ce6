#include "preload/nonblocking_routing.hpp"

#include <cstdint>
#include <optional>

#include "coll/mpi_library.hpp"
#include "coll/nonblocking_rules.hpp"
#include "preload/collective_routing.hpp"
#include "preload/nonblocking_requests.hpp"
#include "preload/type_layout.hpp"

namespace cachecomm::detail::preload {

namespace {

/// The state of `comm`, through the one this thread looked up last when it is the same (an
/// attribute look-up costs as much as a small operation's data path). Stamped with the states'
/// generation: a deleted state (its handle may be reused) is never trusted.
comm_state* state_of_comm(MPI_Comm comm) {
  struct last_state {
    MPI_Comm comm = MPI_COMM_NULL;
    comm_state* state = nullptr;
    std::uint64_t generation = 0;
  };
  thread_local last_state last __attribute__((tls_model("initial-exec")));
  const std::uint64_t generation = g_states_generation.load(std::memory_order_acquire);
  if (last.comm == comm && last.generation == generation && last.state != nullptr)
    return last.state;
  comm_state* state = state_for(comm);
  last = {comm, state, generation};
  return state;
}

}  // namespace

nonblocking_route route_communicator(call_kind kind, MPI_Comm comm) {
  nonblocking_route r;
  r.kind = kind;
  if (!g_armed[static_cast<std::size_t>(kind)]) {
    r.why = globally_blocked(kind).value_or(outcome::disabled);
    return r;
  }
  comm_state* state = comm == MPI_COMM_NULL ? nullptr : state_of_comm(comm);
  if (state == nullptr) {
    r.why = outcome::invalid_argument;  // MPI reports it
    return r;
  }
  r.index = state->nonblocking_calls++;
  if (state->unusable) {
    r.why = *state->unusable;
    return r;
  }
  // The state is built by the communicator's blocking collectives (building it is collective, a
  // start must stay local).
  if (!state->fast) {
    r.why = outcome::warming_up;
    return r;
  }
  if (state->fast->topology().node_count != 1) {
    r.why = outcome::multi_node;
    return r;
  }
  r.fast = state->fast.get();
  r.state = state;
  return r;
}

namespace {
/// The channel's kind of a call the built-in rules know (nonblocking_rules.hpp), if any.
std::optional<nonblocking_kind> channel_kind(call_kind kind) {
  switch (kind) {
    case call_kind::ibcast: return nonblocking_kind::bcast;
    case call_kind::iscatter: return nonblocking_kind::scatter;
    default: return std::nullopt;
  }
}
}  // namespace

void admit_nonblocking(nonblocking_route& r, std::size_t bytes, bool block_per_rank) {
  comm_state* state = r.state;
  // The channel's own figure once it is built (the same: built from the same settings).
  const std::size_t largest = state->nonblocking
                                  ? state->nonblocking->largest_call(block_per_rank)
                                  : nonblocking_largest_call(r.fast->topology(), block_per_rank);
  if (bytes > largest) {
    r.why = outcome::beyond_slot;
    return;
  }
  if (const auto kind = channel_kind(r.kind);
      kind &&
      !nonblocking_mpi_faster(*kind, bytes, r.fast->topology(), running_mpi_family()).empty()) {
    r.why = outcome::mpi_faster;
    return;
  }
  if (state->nonblocking_failed) {
    r.why = outcome::state_failed;
    return;
  }
  // Calls numbered below nonblocking_first went to MPI on some rank (started before the channel
  // was built there): they go to MPI on every rank.
  if (!state->nonblocking || r.index < state->nonblocking_first) {
    r.why = outcome::nonblocking_setup;
    return;
  }
  r.channel = state->nonblocking;
}

std::optional<typed_side> side_of(MPI_Datatype type, int count, outcome& why) {
  const auto layout = layout_of(type, why);
  if (!layout) return std::nullopt;
  if (count < 0) {
    why = outcome::invalid_argument;
    return std::nullopt;
  }
  return typed_side{type, static_cast<std::size_t>(count), *layout};
}

void stage_gathered_result(nonblocking_staging& staging, const typed_side& received, void* recvbuf,
                           std::size_t ranks, bool in_place, std::size_t place) {
  staging.result = received.staged(recvbuf);
  staging.result->count *= ranks;
  if (in_place) {
    staging.send = received.staged_block(recvbuf, place);
    staging.send_into_result = true;
    staging.send_at = place * received.bytes();
  }
}

int serve_nonblocking(call_kind kind, MPI_Comm comm, const nonblocking_route& r,
                      const nonblocking_call& call, MPI_Request* request,
                      const nonblocking_staging* staging) {
  const int code = start_nonblocking(kind, comm, r.channel, call, request, staging);
  stats().count(kind, code == MPI_SUCCESS ? outcome::served : outcome::cachecomm_error);
  return code;
}

}  // namespace cachecomm::detail::preload
