// The C++ API's nonblocking collectives (include/cachecomm/nonblocking.hpp): argument checks, the
// choice of path, and the start on the comm's channel (the shared layer) or on the system MPI.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "cachecomm/config.hpp"
#include "cachecomm/error.hpp"
#include "cachecomm/nonblocking.hpp"
#include "coll/coll_settings.hpp"
#include "coll/nonblocking_rules.hpp"
#include "coll/nonblocking_state.hpp"
#include "core/comm_impl.hpp"
#include "core/mpi_check.hpp"
#include "core/mpi_types.hpp"

namespace cachecomm {

namespace detail {

namespace {

const setting<long long> nonblocking_bytes_setting{
    "CACHECOMM_NONBLOCKING_BYTES", 0,
    "C++ API: the slot of a nonblocking collective's shared-memory channel (what one rank puts "
    "in: a block for iallgather, igather, iscatter, a block per rank for ialltoall and "
    "ireduce_scatter_block; 0: 256 KiB up to 8 ranks on the node, halved as ranks double, at "
    "least 64 KiB). Larger messages go in chunks of a slot, up to a whole ring of them "
    "(CACHECOMM_NONBLOCKING_SLOTS); larger still use the system MPI's nonblocking call.",
    nonblocking_slot_bytes_limits};
const setting<long long> nonblocking_slots_setting{
    "CACHECOMM_NONBLOCKING_SLOTS", 0,
    "C++ API: slots per rank a comm's nonblocking collectives cycle through, a power of two (0: "
    "spanning twice a core's L2 per rank, within 8 MiB per comm, or 4 when oversubscribed). More "
    "slots let more operations be in flight and rewrite each line later.",
    nonblocking_ring_limits};

nonblocking_state& state_of(comm& c) {
  std::shared_ptr<nonblocking_state>& state = c.impl().nonblocking();
  if (!state) {
    state = std::make_shared<nonblocking_state>();
    state->slot_bytes = nonblocking_slot_bytes(
        static_cast<std::size_t>(nonblocking_bytes_setting.read(c.settings())),
        c.topology().node_size);
    state->slots = static_cast<std::uint32_t>(nonblocking_slots_setting.read(c.settings()));
    const node_topology& topology = c.topology();
    state->ring =
        nonblocking_ring_slots(state->slot_bytes, topology.node_size, topology.l2_cache_bytes,
                               topology.oversubscribed, state->slots);
  }
  return *state;
}

const char* name_of(nonblocking_collective collective) {
  switch (collective) {
    case nonblocking_collective::barrier: return "ibarrier";
    case nonblocking_collective::broadcast: return "ibcast";
    case nonblocking_collective::reduce: return "ireduce";
    case nonblocking_collective::allreduce: return "iallreduce";
    case nonblocking_collective::allgather: return "iallgather";
    case nonblocking_collective::gather: return "igather";
    case nonblocking_collective::scatter: return "iscatter";
    case nonblocking_collective::alltoall: return "ialltoall";
    case nonblocking_collective::reduce_scatter_block: return "ireduce_scatter_block";
    case nonblocking_collective::scan: return "iscan";
    case nonblocking_collective::exscan: return "iexscan";
  }
  return "nonblocking collective";
}

/// The largest call of `collective` the comm's channel serves (nonblocking_largest_call).
std::size_t largest_call(comm& c, const nonblocking_state& state,
                         nonblocking_collective collective) {
  const bool block_per_rank = collective == nonblocking_collective::alltoall ||
                              collective == nonblocking_collective::reduce_scatter_block;
  return nonblocking_largest_call(state.slot_bytes, state.ring, c.topology().node_size,
                                  block_per_rank);
}

/// The channel's kind of `collective` (the kinds follow the collectives, from 1).
nonblocking_kind kind_of(nonblocking_collective collective) {
  static_assert(static_cast<std::uint32_t>(nonblocking_kind::bcast) ==
                    static_cast<std::uint32_t>(nonblocking_collective::broadcast) + 1 &&
                static_cast<std::uint32_t>(nonblocking_kind::exscan) ==
                    static_cast<std::uint32_t>(nonblocking_collective::exscan) + 1);
  return static_cast<nonblocking_kind>(static_cast<std::uint32_t>(collective) + 1);
}

/// The path of a call of `bytes`: depends only on what every rank agrees on (the comm, its state
/// after the same collectives, the call and its bytes), so every rank takes the same one.
nonblocking_choice choose(comm& c, nonblocking_state& state, nonblocking_collective collective,
                          std::size_t bytes) {
  if (collective != nonblocking_collective::barrier && bytes == 0)
    return {nonblocking_path::local, "no data to move"};
  const node_topology& topology = c.topology();
  if (topology.node_count != 1) {
    return {nonblocking_path::system_mpi, "the comm spans " + std::to_string(topology.node_count) +
                                              " nodes and the shared-memory channel is node-local"};
  }
  if (const std::string_view reason =
          nonblocking_mpi_faster(kind_of(collective), bytes, topology, running_mpi_family());
      !reason.empty())
    return {nonblocking_path::system_mpi, std::string(reason)};
  // Every call that fits the ring, broadcasts and gathers too: through the slots they are two
  // copies, and MPI's single copy lets its readers finish sooner, but OSU's osu_ibcast and
  // osu_igather (which wait for the whole call) took 1.6-4.8x longer passed to MPI at 32-64 KiB
  // under Open MPI 4.1 and 5, MPICH 5 and Intel MPI (2 ranks, session 27), and 1.4-4.5x at
  // 128-512 KiB with a larger slot. Until session 27 they passed from 16 KiB; until session 29
  // everything above one slot did.
  if (const std::size_t largest = largest_call(c, state, collective); bytes > largest) {
    return {nonblocking_path::system_mpi,
            std::to_string(bytes) + " bytes exceed the " + std::to_string(largest) +
                " the channel's ring of " + std::to_string(state.ring) + " slots of " +
                std::to_string(state.slot_bytes) +
                " holds (CACHECOMM_NONBLOCKING_BYTES, CACHECOMM_NONBLOCKING_SLOTS): MPI's "
                "nonblocking call moves it without staging"};
  }
  if (!state.unavailable.empty()) {
    return {nonblocking_path::system_mpi,
            "the comm's nonblocking channel could not be built (" + state.unavailable + ")"};
  }
  if (!state.channel) {
    return {nonblocking_path::system_mpi,
            "the comm's nonblocking channel is not built yet (prepare_nonblocking(), or the "
            "comm's next blocking collective, builds it)"};
  }
  const nonblocking_kind kind = kind_of(collective);
  // Alltoall's bytes here are all of a rank's blocks; single copy goes by the block.
  const std::size_t block = collective == nonblocking_collective::alltoall
                                ? bytes / static_cast<std::size_t>(std::max(1, topology.node_size))
                                : bytes;
  if (state.channel->single_copy_applies(kind, block)) {
    return {nonblocking_path::shared_memory,
            "the comm's shared-memory channel, single copy (alltoall: unless in place): the "
            "buffers' addresses go in at the start, and each block moves once by cross-memory "
            "attach, pulled by its reader or pushed by its owner, whichever comes first"};
  }
  return {nonblocking_path::shared_memory,
          "the comm's shared-memory channel: this rank's data is copied in at the start, the "
          "peers read it themselves"};
}

void build_channel(comm_impl& impl, nonblocking_state& state) {
  state.wanted = false;
  try {
    state.channel = make_nonblocking_channel(impl, state.slot_bytes, state.ring, impl.policy());
  } catch (const std::exception& e) {
    state.unavailable = e.what();
    std::fprintf(stderr,
                 "cachecomm: no shared memory for nonblocking collectives (%s); they use the "
                 "system MPI on this comm\n",
                 e.what());
  }
}

std::unique_ptr<request_state> new_state(comm& c, nonblocking_collective collective,
                                         nonblocking_choice choice) {
  auto state = std::make_unique<request_state>();
  state->what = name_of(collective);
  state->path = choice.path;
  state->reason = std::move(choice.reason);
  state->policy = c.waiting();
  return state;
}

}  // namespace

int nonblocking_mpi_count(std::size_t count, const char* what) {
  return mpi_int_count<unsupported_error>(count, [what] {
    return std::string("cachecomm: ") + what +
           " through the system MPI is limited to INT_MAX elements per call";
  });
}

std::unique_ptr<request_state> begin_nonblocking(comm& c, nonblocking_collective collective,
                                                 std::size_t bytes, const nonblocking_call& call) {
  nonblocking_state& comm_state = state_of(c);
  nonblocking_choice choice = choose(c, comm_state, collective, bytes);
  if (choice.path == nonblocking_path::system_mpi && c.topology().node_count == 1 &&
      !comm_state.channel && comm_state.unavailable.empty() &&
      bytes <= largest_call(c, comm_state, collective)) {
    comm_state.wanted = true;  // built at the comm's next blocking collective (collective there)
  }
  std::unique_ptr<request_state> state = new_state(c, collective, std::move(choice));
  if (state->path == nonblocking_path::shared_memory) {
    comm_state.channel->prepare(call);  // may throw: nothing is queued yet
    state->operation.channel = comm_state.channel;
    state->operation.call = call;
    start_operation(state->operation);
  }
  // local: complete, the first test or wait reports it; system_mpi: the caller starts MPI's call.
  return state;
}

void settle_nonblocking(comm_impl& impl) {
  nonblocking_state& state = *impl.nonblocking();
  if (state.channel) settle_channel(state.channel.get());
  if (state.wanted && !state.channel && state.unavailable.empty()) build_channel(impl, state);
}

}  // namespace detail

using detail::nonblocking_call;
using detail::nonblocking_kind;

nonblocking_choice explain_nonblocking(comm& c, nonblocking_collective collective,
                                       std::size_t bytes) {
  return detail::choose(c, detail::state_of(c), collective, bytes);
}

void prepare_nonblocking(comm& c) {
  detail::nonblocking_state& state = detail::state_of(c);
  if (state.channel) detail::settle_channel(state.channel.get());
  if (c.topology().node_count == 1 && !state.channel && state.unavailable.empty())
    detail::build_channel(c.impl(), state);
}

collective_request ibarrier(comm& c) {
  nonblocking_call call;
  call.kind = nonblocking_kind::barrier;
  return detail::start_nonblocking(c, nonblocking_collective::barrier, 0, call,
                                   [&](MPI_Request& r) { return MPI_Ibarrier(c.mpi_comm(), &r); });
}

collective_request ibcast(comm& c, void* buffer, std::size_t count, datatype type, int root) {
  const auto which = nonblocking_collective::broadcast;
  detail::check_nonblocking_arguments(c, which, nullptr, buffer, count, type, reduce_op::sum, root);
  nonblocking_call call;
  call.kind = nonblocking_kind::bcast;
  call.bytes = call.own_bytes = count * size_of(type);
  call.root = c.topology().node_rank_of(root);
  call.send = buffer;
  call.recv = buffer;
  return detail::start_nonblocking(c, which, call.bytes, call, [&](MPI_Request& r) {
    return MPI_Ibcast(buffer, detail::nonblocking_mpi_count(count, "ibcast"),
                      detail::mpi_datatype_of(type), root, c.mpi_comm(), &r);
  });
}

collective_request ireduce(comm& c, const void* send, void* receive, std::size_t count,
                           datatype type, reduce_op op, int root) {
  const auto which = nonblocking_collective::reduce;
  detail::check_nonblocking_arguments(c, which, send, receive, count, type, op, root);
  const bool is_root = c.rank() == root;
  nonblocking_call call;
  call.kind = nonblocking_kind::reduce;
  call.bytes = call.own_bytes = count * size_of(type);
  call.count = count;
  call.type = type;
  call.op = op;
  call.root = c.topology().node_rank_of(root);
  // In place: the input is the receive buffer (at a non-root too, as the blocking reduce has it).
  call.send = send == in_place ? receive : send;
  call.recv = is_root ? receive : nullptr;
  return detail::start_nonblocking(c, which, call.bytes, call, [&](MPI_Request& r) {
    // MPI allows MPI_IN_PLACE at the root only; elsewhere the input is named directly.
    const void* mpi_send = send == in_place ? (is_root ? MPI_IN_PLACE : receive) : send;
    return MPI_Ireduce(mpi_send, receive, detail::nonblocking_mpi_count(count, "ireduce"),
                       detail::mpi_datatype_of(type), detail::mpi_op_of(op), root, c.mpi_comm(),
                       &r);
  });
}

collective_request iallreduce(comm& c, const void* send, void* receive, std::size_t count,
                              datatype type, reduce_op op) {
  const auto which = nonblocking_collective::allreduce;
  detail::check_nonblocking_arguments(c, which, send, receive, count, type, op, 0);
  nonblocking_call call;
  call.kind = nonblocking_kind::allreduce;
  call.bytes = call.own_bytes = count * size_of(type);
  call.count = count;
  call.type = type;
  call.op = op;
  call.send = send == in_place ? receive : send;
  call.recv = receive;
  return detail::start_nonblocking(c, which, call.bytes, call, [&](MPI_Request& r) {
    return MPI_Iallreduce(send == in_place ? MPI_IN_PLACE : send, receive,
                          detail::nonblocking_mpi_count(count, "iallreduce"),
                          detail::mpi_datatype_of(type), detail::mpi_op_of(op), c.mpi_comm(), &r);
  });
}

collective_request iallgather(comm& c, const void* send, void* receive, std::size_t count_per_rank,
                              datatype type) {
  const auto which = nonblocking_collective::allgather;
  detail::check_nonblocking_arguments(c, which, send, receive, count_per_rank, type, reduce_op::sum,
                                      0);
  const std::size_t block = count_per_rank * size_of(type);
  nonblocking_call call;
  call.kind = nonblocking_kind::allgather;
  call.bytes = call.own_bytes = block;
  // A rank's block sits at its place in receive: on one node, node ranks follow comm ranks.
  call.send = send == in_place ? static_cast<const std::byte*>(receive) +
                                     static_cast<std::size_t>(c.rank()) * block
                               : send;
  call.recv = receive;
  return detail::start_nonblocking(c, which, block, call, [&](MPI_Request& r) {
    const int count = detail::nonblocking_mpi_count(count_per_rank, "iallgather");
    const MPI_Datatype mpi_type = detail::mpi_datatype_of(type);
    return MPI_Iallgather(send == in_place ? MPI_IN_PLACE : send, count, mpi_type, receive, count,
                          mpi_type, c.mpi_comm(), &r);
  });
}

}  // namespace cachecomm
