// Nonblocking collectives: MPI_Ibarrier, MPI_Ibcast, MPI_Ireduce, MPI_Iallreduce, MPI_Iallgather
// (the block collectives and scans are in intercept_nonblocking_blocks.cpp). Served through the
// communicator's nonblocking channel (nonblocking_requests.hpp) when it has one; otherwise, and for
// everything the channel does not carry, passed to PMPI.
//
// Every decision depends only on what MPI requires to match on all ranks (the communicator, its
// state, the signature's bytes, operation, root) and on the order of collectives on the
// communicator, so every rank takes the same path.
#include <mpi.h>

#include <cstddef>
#include <optional>

#include "preload/collective_routing.hpp"
#include "preload/nonblocking_routing.hpp"

namespace preload = cachecomm::detail::preload;
using cachecomm::detail::nonblocking_call;
using cachecomm::detail::nonblocking_kind;
using preload::call_kind;
using preload::nonblocking_route;
using preload::nonblocking_staging;
using preload::outcome;
using preload::pass_through;
using preload::route_nonblocking;
using preload::serve_nonblocking;
using preload::typed_side;

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

int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request* request) {
  auto pass = [&] { return PMPI_Ibcast(buffer, count, datatype, root, comm, request); };
  if (preload::inside_cachecomm()) return pass();
  outcome why = outcome::served;
  const auto side = preload::side_of(datatype, count, why);
  if (!side) return pass_through(call_kind::ibcast, why, pass);
  const std::size_t bytes = side->bytes();
  if (bytes == 0) return pass_through(call_kind::ibcast, outcome::empty, pass);
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
  if (side->dense()) return serve_nonblocking(call_kind::ibcast, comm, r, call, request);
  // The root's data is packed at the start; the others' result is unpacked at the finish.
  nonblocking_staging staging;
  if (r.fast->rank() == root)
    staging.send = side->staged(buffer);
  else
    staging.result = side->staged(buffer);
  return serve_nonblocking(call_kind::ibcast, comm, r, call, request, &staging);
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
  const auto received = preload::side_of(recvtype, recvcount, why);
  if (!received) return pass_through(call_kind::iallgather, why, pass);
  const std::size_t block = received->bytes();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  std::optional<typed_side> sent;
  if (!in_place) {
    sent = preload::side_of(sendtype, sendcount, why);
    if (!sent) return pass_through(call_kind::iallgather, why, pass);
  }
  if (block == 0) return pass_through(call_kind::iallgather, outcome::empty, pass);
  const nonblocking_route r = route_nonblocking(call_kind::iallgather, comm, block);
  if (!r.channel) return pass_through(call_kind::iallgather, r.why, pass);
  const auto rank = static_cast<std::size_t>(r.fast->rank());
  nonblocking_call call;
  call.kind = nonblocking_kind::allgather;
  call.bytes = block;
  call.own_bytes = in_place ? block : sent->bytes();
  // A rank's block sits at its place in recvbuf: node ranks follow communicator ranks.
  call.send = in_place ? static_cast<const std::byte*>(recvbuf) + rank * block : sendbuf;
  call.recv = recvbuf;
  const bool send_dense = in_place || sent->dense();
  if (received->dense() && send_dense)
    return serve_nonblocking(call_kind::iallgather, comm, r, call, request);
  nonblocking_staging staging;
  if (!received->dense()) {
    preload::stage_gathered_result(staging, *received, recvbuf,
                                   static_cast<std::size_t>(r.fast->size()), in_place, rank);
  }
  if (!send_dense) staging.send = sent->staged(sendbuf);
  return serve_nonblocking(call_kind::iallgather, comm, r, call, request, &staging);
}

}  // extern "C"
