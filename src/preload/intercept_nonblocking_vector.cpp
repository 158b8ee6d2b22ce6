// Nonblocking collectives with per-rank counts that every rank knows: MPI_Iallgatherv and
// MPI_Ireduce_scatter (every rank passes every count, so each decides the path from the same
// numbers). Served through the communicator's nonblocking channel (nonblocking_requests.hpp) when
// the largest block (Iallgatherv) or the whole vector (Ireduce_scatter) fits the slot; otherwise,
// and for everything the channel does not carry, passed to PMPI with the reason counted.
//
// Both run on a channel protocol of uniform blocks and go through the request's buffers
// (nonblocking_staging.hpp): MPI_Iallgatherv as an allgather of blocks padded to the largest, each
// block then copied (or unpacked) to its displacement; MPI_Ireduce_scatter as an allreduce of the
// whole vector, of which a rank keeps its own segment.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

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
using preload::result_block;
using preload::serve_nonblocking;
using preload::typed_side;

namespace {

/// The blocks of one call's result, reused by the next (the request keeps a copy).
std::vector<result_block>& blocks_of_call() {
  thread_local std::vector<result_block> blocks;
  return blocks;
}

/// The largest and the total of `size` counts, or nothing when one is negative (MPI reports it).
struct count_totals {
  std::size_t largest = 0;
  std::size_t total = 0;
};
std::optional<count_totals> totals_of(const int* counts, int size) {
  count_totals t;
  for (int i = 0; i < size; ++i) {
    if (counts[i] < 0) return std::nullopt;
    const auto count = static_cast<std::size_t>(counts[i]);
    t.largest = std::max(t.largest, count);
    t.total += count;
  }
  return t;
}

}  // namespace

extern "C" {

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request) {
  auto pass = [&] {
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            comm, request);
  };
  if (preload::inside_cachecomm()) return pass();
  constexpr call_kind kind = call_kind::iallgatherv;
  nonblocking_route r = preload::route_communicator(kind, comm);
  if (r.fast == nullptr) return pass_through(kind, r.why, pass);
  outcome why = outcome::served;
  const auto element = preload::side_of(recvtype, 1, why);
  if (!element) return pass_through(kind, why, pass);
  const int size = r.fast->size();
  const auto rank = static_cast<std::size_t>(r.fast->rank());
  const auto totals = totals_of(recvcounts, size);
  if (!totals) return pass_through(kind, outcome::invalid_argument, pass);
  if (totals->total == 0 || element->layout.size == 0)
    return pass_through(kind, outcome::empty, pass);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  std::optional<typed_side> sent;
  if (!in_place) {
    sent = preload::side_of(sendtype, sendcount, why);
    if (!sent) return pass_through(kind, why, pass);
  }
  // Every block takes the largest one's room in the channel: the same bytes on every rank.
  const std::size_t stride = totals->largest * element->layout.size;
  preload::admit_nonblocking(r, stride);
  if (!r.channel) return pass_through(kind, r.why, pass);

  // Equal counts at displacements one block apart, dense: an allgather, served as one.
  bool as_allgather = element->dense() && (in_place || sent->dense());
  for (int i = 0; i < size && as_allgather; ++i) {
    const auto at = static_cast<std::size_t>(i);
    as_allgather = static_cast<std::size_t>(recvcounts[i]) == totals->largest &&
                   static_cast<std::size_t>(displs[i]) == at * totals->largest;
  }
  if (as_allgather) {
    nonblocking_call call;
    call.kind = nonblocking_kind::allgather;
    call.bytes = stride;
    call.own_bytes = in_place ? stride : sent->bytes();
    call.send = in_place ? static_cast<const std::byte*>(recvbuf) + rank * stride : sendbuf;
    call.recv = recvbuf;
    return serve_nonblocking(kind, comm, r, call, request);
  }

  auto* const out = static_cast<std::byte*>(recvbuf);
  auto place = [&](std::size_t i) {
    return out + static_cast<MPI_Aint>(displs[i]) * element->layout.extent;
  };
  const auto own_count = static_cast<std::size_t>(recvcounts[rank]);
  nonblocking_call call;
  call.kind = nonblocking_kind::allgather;
  call.bytes = stride;
  // A block of another size than its count says (an erroneous program) makes every rank report it.
  const std::size_t own = in_place ? own_count * element->layout.size : sent->bytes();
  call.own_bytes = own == own_count * element->layout.size ? stride : stride + 1;
  nonblocking_staging staging;
  staging.result = element->staged(recvbuf);
  staging.result_bytes = static_cast<std::size_t>(size) * stride;
  std::vector<result_block>& blocks = blocks_of_call();
  blocks.clear();
  for (int i = 0; i < size; ++i) {
    const auto at = static_cast<std::size_t>(i);
    blocks.push_back({at * stride, place(at), static_cast<std::size_t>(recvcounts[i])});
  }
  staging.blocks = blocks.data();
  staging.block_count = blocks.size();
  if (in_place) {
    // The rank's block is at its displacement in recvbuf: into its place in the result.
    staging.send = element->staged(place(rank));
    staging.send->count = own_count;
    staging.send_into_result = true;
    staging.send_at = rank * stride;
  } else {
    staging.send = sent->staged(sendbuf);
    staging.send_bytes = stride;
  }
  return serve_nonblocking(kind, comm, r, call, request, &staging);
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  auto pass = [&] {
    return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
  };
  if (preload::inside_cachecomm()) return pass();
  constexpr call_kind kind = call_kind::ireduce_scatter;
  outcome why = outcome::served;
  const auto reduction = preload::reduction_for(datatype, op, why);
  if (!reduction) return pass_through(kind, why, pass);
  nonblocking_route r = preload::route_communicator(kind, comm);
  if (r.fast == nullptr) return pass_through(kind, r.why, pass);
  const auto totals = totals_of(recvcounts, r.fast->size());
  if (!totals) return pass_through(kind, outcome::invalid_argument, pass);
  if (totals->total == 0) return pass_through(kind, outcome::empty, pass);
  const std::size_t element = cachecomm::size_of(reduction->type);
  // Every rank puts in the whole vector.
  preload::admit_nonblocking(r, totals->total * element);
  if (!r.channel) return pass_through(kind, r.why, pass);
  const auto rank = static_cast<std::size_t>(r.fast->rank());
  std::size_t offset = 0;
  for (std::size_t i = 0; i < rank; ++i) offset += static_cast<std::size_t>(recvcounts[i]);
  nonblocking_call call;
  call.kind = nonblocking_kind::allreduce;
  call.count = totals->total;
  call.type = reduction->type;
  call.op = reduction->op;
  call.bytes = call.own_bytes = totals->total * element;
  // In place, the whole vector is in recvbuf; the result goes to the request's buffer first.
  call.send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  nonblocking_staging staging;
  preload::type_layout layout;
  layout.size = element;
  layout.extent = static_cast<MPI_Aint>(element);
  layout.dense = layout.predefined = true;
  staging.result =
      preload::staged_data{recvbuf, static_cast<std::size_t>(recvcounts[rank]), datatype, layout};
  staging.result_bytes = call.bytes;
  const result_block own{offset * element, recvbuf, static_cast<std::size_t>(recvcounts[rank])};
  staging.blocks = &own;
  staging.block_count = 1;
  return serve_nonblocking(kind, comm, r, call, request, &staging);
}

}  // extern "C"
