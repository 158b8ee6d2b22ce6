// The C++ API's nonblocking block collectives and prefix reductions (nonblocking.hpp): igather,
// iscatter, ialltoall, ireduce_scatter_block, iscan, iexscan. The blocking calls' argument checks
// (block_arguments.hpp), the call in cachecomm's terms for the comm's channel, and the system
// MPI's nonblocking call for the other path (nonblocking_state.hpp chooses).
#include <mpi.h>

#include <cstddef>

#include "cachecomm/nonblocking.hpp"
#include "coll/block_arguments.hpp"
#include "coll/nonblocking_state.hpp"
#include "core/mpi_types.hpp"

namespace cachecomm {

using detail::nonblocking_call;
using detail::nonblocking_kind;
using detail::nonblocking_mpi_count;

namespace {

const void* mpi_buffer(const void* buffer) {
  return buffer == in_place ? MPI_IN_PLACE : buffer;
}
void* mpi_receive(void* buffer) {
  return buffer == in_place_receive ? MPI_IN_PLACE : buffer;
}

/// A reduction's call (reduce_scatter_block, scan, exscan): `bytes` of `count` elements.
nonblocking_call reduction_call(nonblocking_kind kind, const void* send, void* receive,
                                std::size_t count, std::size_t bytes, datatype type, reduce_op op) {
  nonblocking_call call;
  call.kind = kind;
  call.bytes = call.own_bytes = bytes;
  call.count = count;
  call.type = type;
  call.op = op;
  // In place: the input is the receive buffer, copied into the channel when the call starts.
  call.send = send == in_place ? receive : send;
  call.recv = receive;
  return call;
}

collective_request prefix(comm& c, const void* send, void* receive, std::size_t count,
                          datatype type, reduce_op op, bool exclusive) {
  const char* what = exclusive ? "iexscan" : "iscan";
  const std::size_t bytes = detail::check_prefix_arguments(what, send, receive, count, type, op);
  const nonblocking_call call =
      reduction_call(exclusive ? nonblocking_kind::exscan : nonblocking_kind::scan, send, receive,
                     count, bytes, type, op);
  const auto which = exclusive ? nonblocking_collective::exscan : nonblocking_collective::scan;
  return detail::start_nonblocking(c, which, bytes, call, [&](MPI_Request& r) {
    const int n = nonblocking_mpi_count(count, what);
    const MPI_Datatype mpi_type = detail::mpi_datatype_of(type);
    const MPI_Op mpi_op = detail::mpi_op_of(op);
    return exclusive ? MPI_Iexscan(mpi_buffer(send), receive, n, mpi_type, mpi_op, c.mpi_comm(), &r)
                     : MPI_Iscan(mpi_buffer(send), receive, n, mpi_type, mpi_op, c.mpi_comm(), &r);
  });
}

}  // namespace

collective_request igather(comm& c, const void* send, void* receive, std::size_t count_per_rank,
                           datatype type, int root) {
  const std::size_t block =
      detail::check_gather_arguments("igather", c, send, receive, count_per_rank, type, root);
  const bool is_root = c.rank() == root;
  nonblocking_call call;
  call.kind = nonblocking_kind::gather;
  call.bytes = call.own_bytes = block;
  call.root = c.topology().node_rank_of(root);
  // In place (the root only): its block is already at its place in receive.
  call.send = send == in_place ? static_cast<const std::byte*>(receive) +
                                     static_cast<std::size_t>(c.rank()) * block
                               : send;
  call.recv = is_root ? receive : nullptr;
  return detail::start_nonblocking(c, nonblocking_collective::gather, block, call,
                                   [&](MPI_Request& r) {
                                     const int n = nonblocking_mpi_count(block, "igather");
                                     return MPI_Igather(mpi_buffer(send), n, MPI_BYTE, receive, n,
                                                        MPI_BYTE, root, c.mpi_comm(), &r);
                                   });
}

collective_request iscatter(comm& c, const void* send, void* receive, std::size_t count_per_rank,
                            datatype type, int root) {
  const std::size_t block =
      detail::check_scatter_arguments("iscatter", c, send, receive, count_per_rank, type, root);
  nonblocking_call call;
  call.kind = nonblocking_kind::scatter;
  call.bytes = call.own_bytes = block;
  call.root = c.topology().node_rank_of(root);
  call.send = c.rank() == root ? send : nullptr;
  call.recv = receive == in_place_receive ? nullptr : receive;
  return detail::start_nonblocking(c, nonblocking_collective::scatter, block, call,
                                   [&](MPI_Request& r) {
                                     const int n = nonblocking_mpi_count(block, "iscatter");
                                     return MPI_Iscatter(send, n, MPI_BYTE, mpi_receive(receive), n,
                                                         MPI_BYTE, root, c.mpi_comm(), &r);
                                   });
}

collective_request ialltoall(comm& c, const void* send, void* receive, std::size_t count_per_rank,
                             datatype type) {
  const std::size_t block =
      detail::check_alltoall_arguments("ialltoall", c, send, receive, count_per_rank, type);
  nonblocking_call call;
  call.kind = nonblocking_kind::alltoall;
  call.bytes = call.own_bytes = block;
  // In place: the blocks to send are in receive, copied into the channel when the call starts.
  call.send = send == in_place ? receive : send;
  call.recv = receive;
  return detail::start_nonblocking(
      c, nonblocking_collective::alltoall, block * static_cast<std::size_t>(c.size()), call,
      [&](MPI_Request& r) {
        const int n = nonblocking_mpi_count(block, "ialltoall");
        return MPI_Ialltoall(mpi_buffer(send), n, MPI_BYTE, receive, n, MPI_BYTE, c.mpi_comm(), &r);
      });
}

collective_request ireduce_scatter_block(comm& c, const void* send, void* receive,
                                         std::size_t count_per_rank, datatype type, reduce_op op) {
  constexpr const char* what = "ireduce_scatter_block";
  const std::size_t block = detail::check_reduce_scatter_block_arguments(what, c, send, receive,
                                                                         count_per_rank, type, op);
  const nonblocking_call call = reduction_call(nonblocking_kind::reduce_scatter_block, send,
                                               receive, count_per_rank, block, type, op);
  return detail::start_nonblocking(
      c, nonblocking_collective::reduce_scatter_block, block * static_cast<std::size_t>(c.size()),
      call, [&](MPI_Request& r) {
        return MPI_Ireduce_scatter_block(
            mpi_buffer(send), receive, nonblocking_mpi_count(count_per_rank, what),
            detail::mpi_datatype_of(type), detail::mpi_op_of(op), c.mpi_comm(), &r);
      });
}

collective_request iscan(comm& c, const void* send, void* receive, std::size_t count, datatype type,
                         reduce_op op) {
  return prefix(c, send, receive, count, type, op, false);
}

collective_request iexscan(comm& c, const void* send, void* receive, std::size_t count,
                           datatype type, reduce_op op) {
  return prefix(c, send, receive, count, type, op, true);
}

}  // namespace cachecomm
