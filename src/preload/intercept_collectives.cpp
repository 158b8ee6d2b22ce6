// Collective calls: served by cachecomm when it handles the case, otherwise passed to PMPI.
//
// Every decision below depends only on what MPI requires to match on all ranks (communicator, the
// type signature's bytes, operation, root; for predefined reductions the datatype itself), never on
// the datatype a rank used where MPI lets it differ:
// one rank may send 4 x MPI_INT while another receives 1 x contiguous(4, MPI_INT). A datatype that
// is not dense is packed into a scratch buffer (type_layout.hpp).
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "preload/collective_routing.hpp"
#include "preload/handle_mapping.hpp"
#include "preload/runtime.hpp"
#include "preload/type_layout.hpp"

#include "cachecomm/collectives.hpp"
#include "cachecomm/error.hpp"
#include "coll/system_mpi_choice.hpp"

namespace preload = cachecomm::detail::preload;
using preload::call_kind;
using preload::outcome;
using preload::pass_through;
using preload::plan_call;
using preload::planned_call;
using preload::reduction_for;
using preload::route;
using preload::route_call;
using preload::run_planned;
using preload::serve;
using preload::valid_root;

namespace {

/// Whether the automatic choice gives this call to the system MPI (measured faster, or a built-in
/// rule): it then passes through, counted as mpi-faster. The same answer on every rank, once the
/// ranks agreed on the call (a rank whose arguments took cachecomm's path would leave the others
/// in MPI's call forever; agreeing turns that into an error on every rank at once). Asking may
/// build the comm's collective state (MPI calls of cachecomm's own: inside the scope). `error`:
/// set when agreeing failed (reported through the communicator's error handler).
bool mpi_wins(call_kind kind, const char* call, MPI_Comm comm, cachecomm::comm& c,
              cachecomm::detail::tuned_op op, std::size_t bytes, int& error,
              cachecomm::datatype type = cachecomm::datatype::byte,
              cachecomm::reduce_op operation = cachecomm::reduce_op::sum) {
  preload::cachecomm_scope scope;
  try {
    if (cachecomm::detail::system_mpi_choice(c, op, bytes).empty()) return false;
  } catch (...) {
    return false;  // served instead, which reports the failure
  }
  try {
    cachecomm::detail::agree_before_system_call(c, op, bytes, type, operation);
  } catch (...) {
    preload::stats().count(kind, outcome::cachecomm_error);
    error = preload::report_failure(comm, call);
  }
  return true;
}

}  // namespace

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
  using cachecomm::detail::tuned_op;
  if (preload::nonblocking_needs_attention() && !preload::inside_cachecomm())
    preload::settle_before_blocking(comm);
  if (cachecomm::comm* hot = preload::hot_comm(call_kind::barrier, comm)) {
    int error = MPI_SUCCESS;
    if (mpi_wins(call_kind::barrier, "MPI_Barrier", comm, *hot, tuned_op::barrier, 0, error)) {
      return pass_through(call_kind::barrier, outcome::mpi_faster,
                          [&] { return PMPI_Barrier(comm); });
    }
    return serve(call_kind::barrier, comm, "MPI_Barrier", [hot] { hot->barrier(); });
  }
  if (preload::inside_cachecomm()) return PMPI_Barrier(comm);
  route r = route_call(call_kind::barrier, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr)
    return pass_through(call_kind::barrier, r.why_not, [&] { return PMPI_Barrier(comm); });
  int error = MPI_SUCCESS;
  if (mpi_wins(call_kind::barrier, "MPI_Barrier", comm, *r.fast, tuned_op::barrier, 0, error))
    return pass_through(call_kind::barrier, outcome::mpi_faster,
                        [&] { return PMPI_Barrier(comm); });
  return serve(call_kind::barrier, comm, "MPI_Barrier", [&] { r.fast->barrier(); });
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  if (preload::inside_cachecomm() || (count == 0 && preload::empty_passes(call_kind::bcast, comm)))
    return PMPI_Bcast(buffer, count, datatype, root, comm);
  auto pass = [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); };
  route r = route_call(call_kind::bcast, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(call_kind::bcast, r.why_not, pass);
  outcome why = outcome::served;
  const auto layout = preload::layout_of(datatype, why);
  if (!layout) return pass_through(call_kind::bcast, why, pass);
  if (count < 0 || !valid_root(*r.fast, root))
    return pass_through(call_kind::bcast, outcome::invalid_argument, pass);
  // The signature's bytes are the same on every rank, whatever datatype each one used.
  const std::size_t bytes = static_cast<std::size_t>(count) * layout->size;
  if (bytes == 0) return pass_through(call_kind::bcast, outcome::empty, pass);
  int error = MPI_SUCCESS;
  constexpr auto op = cachecomm::detail::tuned_op::broadcast;
  const planned_call plan =
      plan_call(call_kind::bcast, "MPI_Bcast", comm, *r.fast, op, bytes, error);
  if (error != MPI_SUCCESS) return error;
  const auto algorithm = static_cast<cachecomm::broadcast_algorithm>(plan.algorithm);
  return run_planned(call_kind::bcast, "MPI_Bcast", comm, *r.fast, plan, op, bytes, pass, [&] {
    if (layout->dense) {
      cachecomm::broadcast(*r.fast, buffer, bytes, cachecomm::datatype::byte, root, algorithm);
      return;
    }
    std::vector<std::byte>& packed = preload::scratch(0);
    packed.resize(bytes);
    const bool is_root = r.fast->rank() == root;
    const auto items = static_cast<std::size_t>(count);
    if (is_root) preload::pack(buffer, items, datatype, *layout, packed.data(), comm);
    cachecomm::broadcast(*r.fast, packed.data(), bytes, cachecomm::datatype::byte, root, algorithm);
    if (!is_root) preload::unpack(packed.data(), items, datatype, *layout, buffer, comm);
  });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  if (preload::inside_cachecomm() || (count == 0 && preload::empty_passes(call_kind::reduce, comm)))
    return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
  auto pass = [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); };
  route r = route_call(call_kind::reduce, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(call_kind::reduce, r.why_not, pass);
  outcome why = outcome::served;
  const auto reduction = reduction_for(datatype, op, why);
  if (!reduction) return pass_through(call_kind::reduce, why, pass);
  if (count < 0 || !valid_root(*r.fast, root))
    return pass_through(call_kind::reduce, outcome::invalid_argument, pass);
  int error = MPI_SUCCESS;
  constexpr auto tuned = cachecomm::detail::tuned_op::reduce;
  const std::size_t bytes = static_cast<std::size_t>(count) * cachecomm::size_of(reduction->type);
  const planned_call plan = plan_call(call_kind::reduce, "MPI_Reduce", comm, *r.fast, tuned, bytes,
                                      error, reduction->type, reduction->op);
  if (error != MPI_SUCCESS) return error;
  const void* send = sendbuf == MPI_IN_PLACE ? cachecomm::in_place : sendbuf;
  return run_planned(call_kind::reduce, "MPI_Reduce", comm, *r.fast, plan, tuned, bytes, pass, [&] {
    cachecomm::reduce(*r.fast, send, recvbuf, static_cast<std::size_t>(count), reduction->type,
                      reduction->op, root,
                      static_cast<cachecomm::reduce_algorithm>(plan.algorithm));
  });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  if (preload::inside_cachecomm() ||
      (count == 0 && preload::empty_passes(call_kind::allreduce, comm)))
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  auto pass = [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); };
  route r = route_call(call_kind::allreduce, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(call_kind::allreduce, r.why_not, pass);
  outcome why = outcome::served;
  const auto reduction = reduction_for(datatype, op, why);
  if (!reduction) return pass_through(call_kind::allreduce, why, pass);
  if (count < 0) return pass_through(call_kind::allreduce, outcome::invalid_argument, pass);
  int error = MPI_SUCCESS;
  constexpr auto tuned = cachecomm::detail::tuned_op::allreduce;
  const std::size_t bytes = static_cast<std::size_t>(count) * cachecomm::size_of(reduction->type);
  const planned_call plan = plan_call(call_kind::allreduce, "MPI_Allreduce", comm, *r.fast, tuned,
                                      bytes, error, reduction->type, reduction->op);
  if (error != MPI_SUCCESS) return error;
  const void* send = sendbuf == MPI_IN_PLACE ? cachecomm::in_place : sendbuf;
  return run_planned(
      call_kind::allreduce, "MPI_Allreduce", comm, *r.fast, plan, tuned, bytes, pass, [&] {
        cachecomm::allreduce(*r.fast, send, recvbuf, static_cast<std::size_t>(count),
                             reduction->type, reduction->op,
                             static_cast<cachecomm::reduce_algorithm>(plan.algorithm));
      });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (preload::inside_cachecomm() ||
      (recvcount == 0 && preload::empty_passes(call_kind::allgather, comm)))
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  auto pass = [&] {
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  };
  route r = route_call(call_kind::allgather, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(call_kind::allgather, r.why_not, pass);
  outcome why = outcome::served;
  const auto received = preload::layout_of(recvtype, why);
  if (!received) return pass_through(call_kind::allgather, why, pass);
  if (recvcount < 0) return pass_through(call_kind::allgather, outcome::invalid_argument, pass);
  // Every rank receives every block, so the block's byte size is the same on every rank.
  const std::size_t bytes_per_rank = static_cast<std::size_t>(recvcount) * received->size;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  std::optional<preload::type_layout> sent;
  if (!in_place) {
    sent = preload::layout_of(sendtype, why);
    if (!sent) return pass_through(call_kind::allgather, why, pass);
    if (sendcount < 0) return pass_through(call_kind::allgather, outcome::invalid_argument, pass);
  }
  if (bytes_per_rank == 0) return pass_through(call_kind::allgather, outcome::empty, pass);
  int error = MPI_SUCCESS;
  constexpr auto tuned = cachecomm::detail::tuned_op::allgather;
  const planned_call plan =
      plan_call(call_kind::allgather, "MPI_Allgather", comm, *r.fast, tuned, bytes_per_rank, error);
  if (error != MPI_SUCCESS) return error;
  const auto algorithm = static_cast<cachecomm::allgather_algorithm>(plan.algorithm);
  return run_planned(
      call_kind::allgather, "MPI_Allgather", comm, *r.fast, plan, tuned, bytes_per_rank, pass, [&] {
        // This rank's own signature must match the block every rank receives; a mismatch is an
        // erroneous program: it takes part (the others are waiting) and then reports it.
        const std::size_t own_bytes =
            in_place ? bytes_per_rank : static_cast<std::size_t>(sendcount) * sent->size;
        const auto ranks = static_cast<std::size_t>(r.fast->size());
        const auto rank = static_cast<std::size_t>(r.fast->rank());
        const void* send =
            in_place ? cachecomm::in_place
                     : preload::dense_send_block(sendbuf, static_cast<std::size_t>(sendcount),
                                                 sendtype, *sent, bytes_per_rank, comm);
        if (received->dense) {
          cachecomm::allgather(*r.fast, send, recvbuf, bytes_per_rank, cachecomm::datatype::byte,
                               algorithm);
        } else {
          std::vector<std::byte>& blocks = preload::scratch(1);
          blocks.resize(ranks * bytes_per_rank);
          const auto items = static_cast<std::size_t>(recvcount);
          if (in_place) {
            // This rank's block sits at its place in recvbuf, in the receive type's layout.
            const auto* mine = static_cast<const std::byte*>(recvbuf) +
                               static_cast<std::ptrdiff_t>(rank * items) * received->extent;
            preload::pack(mine, items, recvtype, *received, blocks.data() + rank * bytes_per_rank,
                          comm);
          }
          cachecomm::allgather(*r.fast, send, blocks.data(), bytes_per_rank,
                               cachecomm::datatype::byte, algorithm);
          preload::unpack(blocks.data(), ranks * items, recvtype, *received, recvbuf, comm);
        }
        if (own_bytes != bytes_per_rank)
          preload::throw_truncate("MPI_Allgather", "this rank sends", own_bytes, bytes_per_rank);
      });
}

}  // extern "C"
