// Collective calls: served by cachecomm when it handles the case, otherwise passed to PMPI.
//
// Every decision below depends only on arguments MPI requires to match on all ranks (communicator,
// counts x type sizes, operation, root), so every rank takes the same path through the same call.
// One exception, documented in docs/architecture.md: ranks describing the same data with different
// datatypes (a derived type on one rank, a predefined type on another).
#include <mpi.h>

#include <cstddef>
#include <optional>

#include "preload/handle_mapping.hpp"
#include "preload/runtime.hpp"

#include "cachecomm/collectives.hpp"

namespace preload = cachecomm::detail::preload;
using preload::call_kind;
using preload::outcome;

namespace {

// The decision for one call: the cachecomm communicator to serve it with, or why not.
struct route {
  cachecomm::comm* fast = nullptr;
  outcome why_not = outcome::served;
  int error_code = MPI_SUCCESS;  ///< building the state failed and was reported: return this
};

route route_call(call_kind kind, MPI_Comm comm) {
  route r;
  r.fast = preload::hot_comm(kind, comm);
  if (r.fast != nullptr) return r;
  if (auto blocked = preload::globally_blocked(kind)) {
    r.why_not = *blocked;
    return r;
  }
  r.fast = preload::fast_comm(comm, r.why_not, r.error_code);
  if (r.error_code != MPI_SUCCESS) preload::stats().count(kind, outcome::cachecomm_error);
  return r;
}

// Counts and forwards: `pass` is the PMPI call.
template <typename Pass>
int pass_through(call_kind kind, outcome why, Pass&& pass) {
  preload::stats().count(kind, why);
  return pass();
}

// Runs the cachecomm implementation; a failure goes through the communicator's error handler.
template <typename Serve>
int serve(call_kind kind, MPI_Comm comm, const char* call, Serve&& body) {
  try {
    preload::cachecomm_scope scope;
    body();
  } catch (...) {
    preload::stats().count(kind, outcome::cachecomm_error);
    return preload::report_failure(comm, call);
  }
  preload::stats().count_served(kind);
  return MPI_SUCCESS;
}

bool valid_root(const cachecomm::comm& c, int root) {
  return root >= 0 && root < c.size();
}

/// cachecomm's type and operation for an MPI reduction.
struct served_reduction {
  MPI_Datatype mpi_type = MPI_DATATYPE_NULL;
  MPI_Op mpi_op = MPI_OP_NULL;
  cachecomm::datatype type{};
  cachecomm::reduce_op op{};
};

/// The reduction of (`datatype`, `op`), or nothing with the reason in `why`. The last pair served
/// is kept (programs repeat the same reduction every step): the next call with both skips the three
/// look-ups. One thread, as for the mappings.
std::optional<served_reduction> reduction_of(MPI_Datatype datatype, MPI_Op op, outcome& why) {
  static served_reduction last;
  if (datatype == last.mpi_type && op == last.mpi_op && datatype != MPI_DATATYPE_NULL) return last;
  auto type = preload::as_reducible(datatype, why);
  if (!type) return std::nullopt;
  auto operation = preload::as_reduce_op(op, why);
  if (!operation) return std::nullopt;
  if (!cachecomm::supports(*type, *operation)) {
    why = outcome::unsupported_pair;
    return std::nullopt;
  }
  last = {datatype, op, *type, *operation};
  return last;
}

}  // namespace

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
  if (cachecomm::comm* hot = preload::hot_comm(call_kind::barrier, comm)) {
    return serve(call_kind::barrier, comm, "MPI_Barrier", [hot] { hot->barrier(); });
  }
  if (preload::inside_cachecomm()) return PMPI_Barrier(comm);
  route r = route_call(call_kind::barrier, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr)
    return pass_through(call_kind::barrier, r.why_not, [&] { return PMPI_Barrier(comm); });
  return serve(call_kind::barrier, comm, "MPI_Barrier", [&] { r.fast->barrier(); });
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  auto pass = [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); };
  if (preload::inside_cachecomm()) return pass();
  route r = route_call(call_kind::bcast, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(call_kind::bcast, r.why_not, pass);
  outcome why = outcome::served;
  auto moved = preload::as_movable(datatype, why);
  if (!moved) return pass_through(call_kind::bcast, why, pass);
  if (count < 0 || !valid_root(*r.fast, root))
    return pass_through(call_kind::bcast, outcome::invalid_argument, pass);
  if (count == 0) return pass_through(call_kind::bcast, outcome::empty, pass);
  const std::size_t bytes = static_cast<std::size_t>(count) * moved->element_bytes;
  return serve(call_kind::bcast, comm, "MPI_Bcast", [&] {
    cachecomm::broadcast(*r.fast, buffer, bytes, cachecomm::datatype::byte, root);
  });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  auto pass = [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); };
  if (preload::inside_cachecomm()) return pass();
  route r = route_call(call_kind::reduce, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(call_kind::reduce, r.why_not, pass);
  outcome why = outcome::served;
  const auto reduction = reduction_of(datatype, op, why);
  if (!reduction) return pass_through(call_kind::reduce, why, pass);
  if (count < 0 || !valid_root(*r.fast, root))
    return pass_through(call_kind::reduce, outcome::invalid_argument, pass);
  if (count == 0) return pass_through(call_kind::reduce, outcome::empty, pass);
  const void* send = sendbuf == MPI_IN_PLACE ? cachecomm::in_place : sendbuf;
  return serve(call_kind::reduce, comm, "MPI_Reduce", [&] {
    cachecomm::reduce(*r.fast, send, recvbuf, static_cast<std::size_t>(count), reduction->type,
                      reduction->op, root);
  });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  auto pass = [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); };
  if (preload::inside_cachecomm()) return pass();
  route r = route_call(call_kind::allreduce, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(call_kind::allreduce, r.why_not, pass);
  outcome why = outcome::served;
  const auto reduction = reduction_of(datatype, op, why);
  if (!reduction) return pass_through(call_kind::allreduce, why, pass);
  if (count < 0) return pass_through(call_kind::allreduce, outcome::invalid_argument, pass);
  if (count == 0) return pass_through(call_kind::allreduce, outcome::empty, pass);
  const void* send = sendbuf == MPI_IN_PLACE ? cachecomm::in_place : sendbuf;
  return serve(call_kind::allreduce, comm, "MPI_Allreduce", [&] {
    cachecomm::allreduce(*r.fast, send, recvbuf, static_cast<std::size_t>(count), reduction->type,
                         reduction->op);
  });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  auto pass = [&] {
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  };
  if (preload::inside_cachecomm()) return pass();
  route r = route_call(call_kind::allgather, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(call_kind::allgather, r.why_not, pass);
  outcome why = outcome::served;
  auto received = preload::as_movable(recvtype, why);
  if (!received) return pass_through(call_kind::allgather, why, pass);
  if (recvcount < 0) return pass_through(call_kind::allgather, outcome::invalid_argument, pass);
  const std::size_t bytes_per_rank = static_cast<std::size_t>(recvcount) * received->element_bytes;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place) {
    auto sent = preload::as_movable(sendtype, why);
    if (!sent) return pass_through(call_kind::allgather, why, pass);
    // Type signatures must match; a mismatch is MPI's to report (or to truncate).
    if (sendcount < 0 ||
        static_cast<std::size_t>(sendcount) * sent->element_bytes != bytes_per_rank) {
      return pass_through(call_kind::allgather, outcome::invalid_argument, pass);
    }
  }
  if (bytes_per_rank == 0) return pass_through(call_kind::allgather, outcome::empty, pass);
  const void* send = in_place ? cachecomm::in_place : sendbuf;
  return serve(call_kind::allgather, comm, "MPI_Allgather", [&] {
    cachecomm::allgather(*r.fast, send, recvbuf, bytes_per_rank, cachecomm::datatype::byte);
  });
}

}  // extern "C"
