// MPI_Scan and MPI_Exscan: served by cachecomm (rank-ordered fold on one node) for the reductions
// MPI_Allreduce serves, otherwise passed to PMPI with the reason counted.
#include <mpi.h>

#include <cstddef>

#include "cachecomm/collectives.hpp"
#include "preload/collective_routing.hpp"

namespace preload = cachecomm::detail::preload;
using preload::call_kind;
using preload::outcome;

namespace {

template <typename Pass>
int prefix(call_kind kind, const char* call, const void* sendbuf, void* recvbuf, int count,
           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, Pass&& pass) {
  if (preload::inside_cachecomm()) return pass();
  if (count == 0 && preload::empty_passes(kind, comm)) return pass();
  preload::route r = preload::route_call(kind, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return preload::pass_through(kind, r.why_not, pass);
  outcome why = outcome::served;
  const auto reduction = preload::reduction_for(datatype, op, why);
  if (!reduction) return preload::pass_through(kind, why, pass);
  if (count < 0) return preload::pass_through(kind, outcome::invalid_argument, pass);
  const void* send = sendbuf == MPI_IN_PLACE ? cachecomm::in_place : sendbuf;
  return preload::serve(kind, comm, call, [&] {
    if (kind == call_kind::exscan) {
      cachecomm::exscan(*r.fast, send, recvbuf, static_cast<std::size_t>(count), reduction->type,
                        reduction->op);
    } else {
      cachecomm::scan(*r.fast, send, recvbuf, static_cast<std::size_t>(count), reduction->type,
                      reduction->op);
    }
  });
}

}  // namespace

extern "C" {

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm) {
  return prefix(call_kind::scan, "MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm,
                [&] { return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm); });
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm) {
  return prefix(call_kind::exscan, "MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm,
                [&] { return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm); });
}

}  // extern "C"
