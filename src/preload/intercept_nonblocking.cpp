// Nonblocking collectives: MPI_Ibarrier, MPI_Ibcast, MPI_Ireduce, MPI_Iallreduce, MPI_Iallgather.
// Served through the communicator's nonblocking channel (nonblocking_requests.hpp) when it has one;
// otherwise, and for everything the channel does not carry, passed to PMPI.
//
// Every decision depends only on what MPI requires to match on all ranks (the communicator, its
// state, the signature's bytes, operation, root) and on the order of collectives on the
// communicator, so every rank takes the same path.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "preload/collective_routing.hpp"
#include "preload/nonblocking_requests.hpp"
#include "preload/runtime.hpp"
#include "preload/type_layout.hpp"

namespace preload = cachecomm::detail::preload;
using cachecomm::detail::nonblocking_call;
using cachecomm::detail::nonblocking_kind;
using preload::call_kind;
using preload::outcome;
using preload::pass_through;

namespace {

/// The channel to serve a nonblocking call of `bytes` with, or why not (`why`).
struct nonblocking_route {
  std::shared_ptr<cachecomm::detail::nonblocking_channel> channel;
  cachecomm::comm* fast = nullptr;
  outcome why = outcome::served;
};

/// The state of `comm`, through the one this thread looked up last when it is the same (an
/// attribute look-up costs as much as a small operation's data path). Stamped with the states'
/// generation: a deleted state (its handle may be reused) is never trusted.
preload::comm_state* state_of_comm(MPI_Comm comm) {
  struct last_state {
    MPI_Comm comm = MPI_COMM_NULL;
    preload::comm_state* state = nullptr;
    std::uint64_t generation = 0;
  };
  thread_local last_state last __attribute__((tls_model("initial-exec")));
  const std::uint64_t generation = preload::g_states_generation.load(std::memory_order_acquire);
  if (last.comm == comm && last.generation == generation && last.state != nullptr)
    return last.state;
  preload::comm_state* state = preload::state_for(comm);
  last = {comm, state, generation};
  return state;
}

nonblocking_route route_nonblocking(call_kind kind, MPI_Comm comm, std::size_t bytes) {
  nonblocking_route r;
  if (!preload::g_armed[static_cast<std::size_t>(kind)]) {
    r.why = preload::globally_blocked(kind).value_or(outcome::disabled);
    return r;
  }
  // The pending operations are process-wide: threads completing requests at once would race.
  if (preload::thread_level() == MPI_THREAD_MULTIPLE) {
    r.why = outcome::thread_multiple;
    return r;
  }
  preload::comm_state* state = comm == MPI_COMM_NULL ? nullptr : state_of_comm(comm);
  if (state == nullptr) {
    r.why = outcome::invalid_argument;  // MPI reports it
    return r;
  }
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
  if (bytes > preload::nonblocking_slot_bytes()) {
    r.why = outcome::beyond_slot;
    return r;
  }
  if (state->nonblocking_failed) {
    r.why = outcome::state_failed;
    return r;
  }
  if (!state->nonblocking) {
    if (!state->nonblocking_wanted) {
      state->nonblocking_wanted = true;
      preload::g_nonblocking_attention.fetch_add(1, std::memory_order_relaxed);
    }
    r.why = outcome::nonblocking_setup;
    return r;
  }
  r.channel = state->nonblocking;
  r.fast = state->fast.get();
  return r;
}

int serve_nonblocking(call_kind kind, MPI_Comm comm, const nonblocking_route& r,
                      const nonblocking_call& call, MPI_Request* request) {
  const int code = preload::start_nonblocking(kind, comm, r.channel, call, request);
  preload::stats().count(kind, code == MPI_SUCCESS ? outcome::served : outcome::cachecomm_error);
  return code;
}

}  // namespace

extern "C" {

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  auto pass = [&] { return PMPI_Ibarrier(comm, request); };
  if (preload::inside_cachecomm()) return pass();
  const nonblocking_route r = route_nonblocking(call_kind::ibarrier, comm, 0);
  if (!r.channel) return pass_through(call_kind::ibarrier, r.why, pass);
  nonblocking_call call;
  call.kind = nonblocking_kind::barrier;
  return serve_nonblocking(call_kind::ibarrier, comm, r, call, request);
}

// Broadcasts above cachecomm::detail::nonblocking_bcast_bytes go to MPI (`mpi-faster`).
int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request* request) {
  auto pass = [&] { return PMPI_Ibcast(buffer, count, datatype, root, comm, request); };
  if (preload::inside_cachecomm()) return pass();
  outcome why = outcome::served;
  const auto layout = preload::layout_of(datatype, why);
  if (!layout) return pass_through(call_kind::ibcast, why, pass);
  // The data is read when the operation finishes: packing would need the datatype then, and MPI
  // lets the program free it meanwhile.
  if (!layout->dense) return pass_through(call_kind::ibcast, outcome::derived_datatype, pass);
  if (count < 0) return pass_through(call_kind::ibcast, outcome::invalid_argument, pass);
  const std::size_t bytes = static_cast<std::size_t>(count) * layout->size;
  if (bytes == 0) return pass_through(call_kind::ibcast, outcome::empty, pass);
  if (bytes > cachecomm::detail::nonblocking_bcast_bytes)
    return pass_through(call_kind::ibcast, outcome::mpi_faster, pass);
  const nonblocking_route r = route_nonblocking(call_kind::ibcast, comm, bytes);
  if (!r.channel) return pass_through(call_kind::ibcast, r.why, pass);
  if (!preload::valid_root(*r.fast, root))
    return pass_through(call_kind::ibcast, outcome::invalid_argument, pass);
  nonblocking_call call;
  call.kind = nonblocking_kind::bcast;
  call.root = r.fast->topology().node_rank_of(root);
  call.bytes = call.own_bytes = bytes;
  call.send = buffer;
  call.recv = buffer;
  return serve_nonblocking(call_kind::ibcast, comm, r, call, request);
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  auto pass = [&] { return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request); };
  if (preload::inside_cachecomm()) return pass();
  outcome why = outcome::served;
  const auto reduction = preload::reduction_for(datatype, op, why);
  if (!reduction) return pass_through(call_kind::iallreduce, why, pass);
  if (count < 0) return pass_through(call_kind::iallreduce, outcome::invalid_argument, pass);
  if (count == 0) return pass_through(call_kind::iallreduce, outcome::empty, pass);
  const std::size_t bytes = static_cast<std::size_t>(count) * cachecomm::size_of(reduction->type);
  const nonblocking_route r = route_nonblocking(call_kind::iallreduce, comm, bytes);
  if (!r.channel) return pass_through(call_kind::iallreduce, r.why, pass);
  nonblocking_call call;
  call.kind = nonblocking_kind::allreduce;
  call.bytes = call.own_bytes = bytes;
  call.count = static_cast<std::size_t>(count);
  call.type = reduction->type;
  call.op = reduction->op;
  call.send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  call.recv = recvbuf;
  return serve_nonblocking(call_kind::iallreduce, comm, r, call, request);
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request* request) {
  auto pass = [&] {
    return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
  };
  if (preload::inside_cachecomm()) return pass();
  outcome why = outcome::served;
  const auto reduction = preload::reduction_for(datatype, op, why);
  if (!reduction) return pass_through(call_kind::ireduce, why, pass);
  if (count < 0) return pass_through(call_kind::ireduce, outcome::invalid_argument, pass);
  if (count == 0) return pass_through(call_kind::ireduce, outcome::empty, pass);
  const std::size_t bytes = static_cast<std::size_t>(count) * cachecomm::size_of(reduction->type);
  const nonblocking_route r = route_nonblocking(call_kind::ireduce, comm, bytes);
  if (!r.channel) return pass_through(call_kind::ireduce, r.why, pass);
  if (!preload::valid_root(*r.fast, root))
    return pass_through(call_kind::ireduce, outcome::invalid_argument, pass);
  nonblocking_call call;
  call.kind = nonblocking_kind::reduce;
  call.root = r.fast->topology().node_rank_of(root);
  call.bytes = call.own_bytes = bytes;
  call.count = static_cast<std::size_t>(count);
  call.type = reduction->type;
  call.op = reduction->op;
  const bool is_root = r.fast->rank() == root;
  call.send = sendbuf;
  if (sendbuf == MPI_IN_PLACE) {
    // MPI allows it at the root only; elsewhere the contribution is missing, which the root
    // reports as a size mismatch.
    call.send = is_root ? recvbuf : nullptr;
    if (!is_root) call.own_bytes = 0;
  }
  call.recv = is_root ? recvbuf : nullptr;
  return serve_nonblocking(call_kind::ireduce, comm, r, call, request);
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  auto pass = [&] {
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                           request);
  };
  if (preload::inside_cachecomm()) return pass();
  outcome why = outcome::served;
  const auto received = preload::layout_of(recvtype, why);
  if (!received) return pass_through(call_kind::iallgather, why, pass);
  if (!received->dense) return pass_through(call_kind::iallgather, outcome::derived_datatype, pass);
  if (recvcount < 0) return pass_through(call_kind::iallgather, outcome::invalid_argument, pass);
  const std::size_t block = static_cast<std::size_t>(recvcount) * received->size;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  std::optional<preload::type_layout> sent;
  if (!in_place) {
    sent = preload::layout_of(sendtype, why);
    if (!sent) return pass_through(call_kind::iallgather, why, pass);
    if (!sent->dense) return pass_through(call_kind::iallgather, outcome::derived_datatype, pass);
    if (sendcount < 0) return pass_through(call_kind::iallgather, outcome::invalid_argument, pass);
  }
  if (block == 0) return pass_through(call_kind::iallgather, outcome::empty, pass);
  const nonblocking_route r = route_nonblocking(call_kind::iallgather, comm, block);
  if (!r.channel) return pass_through(call_kind::iallgather, r.why, pass);
  nonblocking_call call;
  call.kind = nonblocking_kind::allgather;
  call.bytes = block;
  call.own_bytes = in_place ? block : static_cast<std::size_t>(sendcount) * sent->size;
  // A rank's block sits at its place in recvbuf: node ranks follow communicator ranks.
  call.send = in_place ? static_cast<const std::byte*>(recvbuf) +
                             static_cast<std::size_t>(r.fast->rank()) * block
                       : sendbuf;
  call.recv = recvbuf;
  return serve_nonblocking(call_kind::iallgather, comm, r, call, request);
}

}  // extern "C"
