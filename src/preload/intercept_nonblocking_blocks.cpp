// Nonblocking block collectives and prefix reductions: MPI_Igather, MPI_Iscatter, MPI_Ialltoall,
// MPI_Ireduce_scatter_block, MPI_Iscan, MPI_Iexscan. Served through the communicator's nonblocking
// channel (nonblocking_requests.hpp) when what one rank puts in fits its slot (a block; for
// MPI_Ialltoall and MPI_Ireduce_scatter_block a block per rank); otherwise passed to PMPI with the
// reason counted (nonblocking_routing.hpp). Sides whose datatypes are not dense are packed and
// unpacked around the channel (nonblocking_staging.hpp): the path depends on the bytes only.
//
// As in intercept_gather_scatter.cpp, only the arguments MPI calls significant on a rank are read
// there (a non-root's receive buffer and type in MPI_Igather may be anything).
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
using preload::serve_nonblocking;
using preload::typed_side;

namespace {

/// A reduction's call in cachecomm's terms (the caller checked `reduction` and `count`).
nonblocking_call reduction_call(nonblocking_kind kind, const void* sendbuf, void* recvbuf,
                                int count, const preload::served_reduction& reduction) {
  nonblocking_call call;
  call.kind = kind;
  call.count = static_cast<std::size_t>(count);
  call.type = reduction.type;
  call.op = reduction.op;
  call.bytes = call.own_bytes = call.count * cachecomm::size_of(reduction.type);
  call.send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  call.recv = recvbuf;
  return call;
}

/// MPI_Iscan and MPI_Iexscan.
template <typename Pass>
int serve_prefix(call_kind kind, const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request,
                 Pass&& pass) {
  outcome why = outcome::served;
  const auto reduction = preload::reduction_for(datatype, op, why);
  if (!reduction) return pass_through(kind, why, pass);
  if (count < 0) return pass_through(kind, outcome::invalid_argument, pass);
  if (count == 0) return pass_through(kind, outcome::empty, pass);
  const nonblocking_call call =
      reduction_call(kind == call_kind::iscan ? nonblocking_kind::scan : nonblocking_kind::exscan,
                     sendbuf, recvbuf, count, *reduction);
  const nonblocking_route r = preload::route_nonblocking(kind, comm, call.bytes);
  if (!r.channel) return pass_through(kind, r.why, pass);
  return serve_nonblocking(kind, comm, r, call, request);
}

}  // namespace

extern "C" {

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request* request) {
  auto pass = [&] {
    return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        request);
  };
  if (preload::inside_cachecomm()) return pass();
  constexpr call_kind kind = call_kind::igather;
  nonblocking_route r = preload::route_communicator(kind, comm);
  if (r.fast == nullptr) return pass_through(kind, r.why, pass);
  if (!preload::valid_root(*r.fast, root))
    return pass_through(kind, outcome::invalid_argument, pass);
  const bool is_root = r.fast->rank() == root;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && !is_root) return pass_through(kind, outcome::invalid_argument, pass);
  outcome why = outcome::served;
  std::optional<typed_side> sent;
  if (!in_place) {
    sent = preload::side_of(sendtype, sendcount, why);
    if (!sent) return pass_through(kind, why, pass);
  }
  std::optional<typed_side> received;
  if (is_root) {
    received = preload::side_of(recvtype, recvcount, why);
    if (!received) return pass_through(kind, why, pass);
  }
  // Every rank's block is the root's receive block: the same bytes everywhere.
  const std::size_t block = is_root ? received->bytes() : sent->bytes();
  if (block == 0) return pass_through(kind, outcome::empty, pass);
  preload::admit_nonblocking(r, block);
  if (!r.channel) return pass_through(kind, r.why, pass);
  nonblocking_call call;
  call.kind = nonblocking_kind::gather;
  call.root = r.fast->topology().node_rank_of(root);
  call.bytes = block;
  call.own_bytes = in_place ? block : sent->bytes();
  // In place, the root's block is at its place in recvbuf (node ranks follow communicator ranks).
  const auto root_place = static_cast<std::size_t>(root);
  call.send = in_place ? static_cast<const std::byte*>(recvbuf) + root_place * block : sendbuf;
  call.recv = is_root ? recvbuf : nullptr;
  const bool send_dense = in_place || sent->dense();
  const bool result_dense = !is_root || received->dense();
  if (send_dense && result_dense) return serve_nonblocking(kind, comm, r, call, request);
  nonblocking_staging staging;
  if (!result_dense) {
    preload::stage_gathered_result(staging, *received, recvbuf,
                                   static_cast<std::size_t>(r.fast->size()), in_place, root_place);
  }
  if (!send_dense) staging.send = sent->staged(sendbuf);
  return serve_nonblocking(kind, comm, r, call, request, &staging);
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  auto pass = [&] {
    return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                         request);
  };
  if (preload::inside_cachecomm()) return pass();
  constexpr call_kind kind = call_kind::iscatter;
  nonblocking_route r = preload::route_communicator(kind, comm);
  if (r.fast == nullptr) return pass_through(kind, r.why, pass);
  if (!preload::valid_root(*r.fast, root))
    return pass_through(kind, outcome::invalid_argument, pass);
  const bool is_root = r.fast->rank() == root;
  const bool in_place = recvbuf == MPI_IN_PLACE;
  if (in_place && !is_root) return pass_through(kind, outcome::invalid_argument, pass);
  outcome why = outcome::served;
  std::optional<typed_side> received;
  if (!in_place) {
    received = preload::side_of(recvtype, recvcount, why);
    if (!received) return pass_through(kind, why, pass);
  }
  std::optional<typed_side> sent;
  if (is_root) {
    sent = preload::side_of(sendtype, sendcount, why);
    if (!sent) return pass_through(kind, why, pass);
    // The root copies a whole block into its receive buffer: a shorter one is MPI's to report.
    if (!in_place && received->bytes() != sent->bytes())
      return pass_through(kind, outcome::invalid_argument, pass);
  }
  // Every block is the root's send block: the same bytes everywhere.
  const std::size_t block = is_root ? sent->bytes() : received->bytes();
  if (block == 0) return pass_through(kind, outcome::empty, pass);
  preload::admit_nonblocking(r, block);
  if (!r.channel) return pass_through(kind, r.why, pass);
  nonblocking_call call;
  call.kind = nonblocking_kind::scatter;
  call.root = r.fast->topology().node_rank_of(root);
  call.bytes = call.own_bytes = block;
  call.send = is_root ? sendbuf : nullptr;
  call.recv = in_place ? nullptr : recvbuf;
  const bool send_dense = !is_root || sent->dense();
  const bool result_dense = in_place || received->dense();
  if (send_dense && result_dense) return serve_nonblocking(kind, comm, r, call, request);
  nonblocking_staging staging;
  if (!send_dense) {
    staging.send = sent->staged(sendbuf);
    staging.send->count *= static_cast<std::size_t>(r.fast->size());
  }
  if (!result_dense) staging.result = received->staged(recvbuf);
  return serve_nonblocking(kind, comm, r, call, request, &staging);
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  auto pass = [&] {
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                          request);
  };
  if (preload::inside_cachecomm()) return pass();
  constexpr call_kind kind = call_kind::ialltoall;
  outcome why = outcome::served;
  // Every rank receives blocks of this size from every rank.
  const auto received = preload::side_of(recvtype, recvcount, why);
  if (!received) return pass_through(kind, why, pass);
  const std::size_t block = received->bytes();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  std::optional<typed_side> sent = received;
  if (!in_place) {
    sent = preload::side_of(sendtype, sendcount, why);
    if (!sent) return pass_through(kind, why, pass);
  }
  if (block == 0) return pass_through(kind, outcome::empty, pass);
  nonblocking_route r = preload::route_communicator(kind, comm);
  if (r.fast == nullptr) return pass_through(kind, r.why, pass);
  const auto size = static_cast<std::size_t>(r.fast->size());
  // A rank puts a block for every rank in its slot.
  preload::admit_nonblocking(r, block * size, true);
  if (!r.channel) return pass_through(kind, r.why, pass);
  nonblocking_call call;
  call.kind = nonblocking_kind::alltoall;
  call.bytes = block;
  call.own_bytes = sent->bytes();  // another size: zeros go in, and every rank reports the mismatch
  // In place: the blocks to send are in recvbuf, copied into the channel when the call starts.
  call.send = in_place ? recvbuf : sendbuf;
  call.recv = recvbuf;
  if (received->dense() && sent->dense()) return serve_nonblocking(kind, comm, r, call, request);
  nonblocking_staging staging;
  if (!received->dense()) {
    staging.result = received->staged(recvbuf);
    staging.result->count *= size;
  }
  if (!sent->dense()) {
    // In place, sent is received: the blocks are packed into the result buffer.
    staging.send = sent->staged(in_place ? recvbuf : sendbuf);
    staging.send->count *= size;
    staging.send_into_result = in_place;
  }
  return serve_nonblocking(kind, comm, r, call, request, &staging);
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request* request) {
  auto pass = [&] {
    return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
  };
  if (preload::inside_cachecomm()) return pass();
  constexpr call_kind kind = call_kind::ireduce_scatter_block;
  outcome why = outcome::served;
  const auto reduction = preload::reduction_for(datatype, op, why);
  if (!reduction) return pass_through(kind, why, pass);
  if (recvcount < 0) return pass_through(kind, outcome::invalid_argument, pass);
  if (recvcount == 0) return pass_through(kind, outcome::empty, pass);
  const nonblocking_call call = reduction_call(nonblocking_kind::reduce_scatter_block, sendbuf,
                                               recvbuf, recvcount, *reduction);
  nonblocking_route r = preload::route_communicator(kind, comm);
  if (r.fast == nullptr) return pass_through(kind, r.why, pass);
  preload::admit_nonblocking(r, call.bytes * static_cast<std::size_t>(r.fast->size()), true);
  if (!r.channel) return pass_through(kind, r.why, pass);
  return serve_nonblocking(kind, comm, r, call, request);
}

int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request* request) {
  auto pass = [&] { return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request); };
  if (preload::inside_cachecomm()) return pass();
  return serve_prefix(call_kind::iscan, sendbuf, recvbuf, count, datatype, op, comm, request, pass);
}

// Rank 0's recvbuf is left alone (MPI leaves its result undefined).
int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request* request) {
  auto pass = [&] { return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request); };
  if (preload::inside_cachecomm()) return pass();
  return serve_prefix(call_kind::iexscan, sendbuf, recvbuf, count, datatype, op, comm, request,
                      pass);
}

}  // extern "C"
