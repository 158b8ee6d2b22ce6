// MPI-4's large-count entry points (MPI_Bcast_c, MPI_Win_create_c...), which MPICH 4-5, Intel MPI
// and the MPI-5 ABI export and which mpi4py calls whenever the library has them. Without these a
// program using them would bypass the preload: no fast path, and worse, a window made by
// MPI_Win_create_c would not be known to drive MPI's progress from cachecomm's waits, so a served
// MPI_Barrier on a passive target deadlocked with MPI_Win_lock_all on its origin (mpi4py's
// test_rma under MPICH 5).
//
// A call whose counts fit the int call takes the int call's route (and is counted under its name);
// one that does not goes to MPI's own large-count call. Every rank must take the same route, so
// the test is on what MPI requires to match across ranks: the bytes of one block (count times the
// type's size; a block of 2 GiB or more goes to MPI everywhere), and for MPI_Allgatherv and
// MPI_Reduce_scatter the receive counts, which every rank passes. The counts of MPI_Gatherv,
// MPI_Scatterv and MPI_Alltoallv are the root's alone or each rank's own, so no rank could decide
// for the others: their large-count forms always go to MPI, as do the nonblocking v-calls (MPI
// keeps their count arrays until completion) and the request-based accesses (MPI's in any case).
// One-sided accesses decide per call, as the int ones do.
#include <mpi.h>

#if MPI_VERSION >= 4

#include <climits>
#include <span>
#include <vector>

#include "preload/program_windows.hpp"
#include "preload/runtime.hpp"
#include "preload/served_windows.hpp"

namespace preload = cachecomm::detail::preload;
using preload::call_kind;

namespace {

bool fits_int(MPI_Count value) {
  return value >= INT_MIN && value <= INT_MAX;
}

/// The size of `type` in bytes, or -1 when there is none to take (no type, or MPI cannot say).
MPI_Count size_of(MPI_Datatype type) {
  MPI_Count size = -1;
  if (type == MPI_DATATYPE_NULL || PMPI_Type_size_c(type, &size) != MPI_SUCCESS) return -1;
  return size;
}

/// Whether `count` elements of `size` bytes are under 2 GiB: the same answer on every rank (MPI's
/// type-signature rule), and then `count` fits an int too. An empty block always fits (an
/// intercommunicator root's insignificant side may name no type); an unknown size never does.
bool block_fits(MPI_Count count, MPI_Count size) {
  if (count < 0 || count > INT_MAX) return false;
  if (count == 0) return true;
  if (size < 0) return false;
  return size == 0 || count <= INT_MAX / size;
}

bool block_fits(MPI_Count count, MPI_Datatype type) {
  return count == 0 || block_fits(count, size_of(type));
}

/// A count that is not significant on this rank (MPI ignores it) may be anything: one that does
/// not fit is given to the int call as 0, which it ignores as well.
int narrow(MPI_Count count) {
  return fits_int(count) ? static_cast<int>(count) : 0;
}

/// Gather and scatter: the block significant on every rank fits (this rank's own block, or the
/// root's when the root works in place).
bool rooted_block_fits(const void* own_buffer, MPI_Count own_count, MPI_Datatype own_type,
                       MPI_Count root_count, MPI_Datatype root_type) {
  return own_buffer == MPI_IN_PLACE ? block_fits(root_count, root_type)
                                    : block_fits(own_count, own_type);
}

/// This thread's int copies of a large-count call's arrays; blocking calls only.
std::vector<int>& int_scratch(int which) {
  thread_local std::vector<int> arrays[2];
  return arrays[which];
}

/// Copies `values` (counts or displacements) into scratch `which` when every one fits an int; else
/// null. (MPI_Count and MPI_Aint are the same type in the MPI-5 ABI.)
template <typename Value>
const int* as_ints(std::span<const Value> values, int which) {
  std::vector<int>& out = int_scratch(which);
  out.clear();
  for (Value value : values) {
    if (!fits_int(value)) return nullptr;
    out.push_back(static_cast<int>(value));
  }
  return out.data();
}

/// The number of entries in a v-call's count arrays: the group (the remote one of an
/// intercommunicator), or -1 when MPI cannot say.
int array_length(MPI_Comm comm) {
  int inter = 0;
  int size = -1;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return -1;
  if ((inter != 0 ? PMPI_Comm_remote_size(comm, &size) : PMPI_Comm_size(comm, &size)) !=
      MPI_SUCCESS)
    return -1;
  return size;
}

/// Every receive block under 2 GiB (the same answer on every rank: all pass these counts).
bool blocks_fit(std::span<const MPI_Count> counts, MPI_Datatype type) {
  const MPI_Count size = size_of(type);
  for (MPI_Count count : counts)
    if (!block_fits(count, size)) return false;
  return true;
}

/// A one-sided access whose counts do not fit an int: inside a cachecomm epoch on a served window
/// MPI does it under a lock (as the int call does what cachecomm cannot express), else it is MPI's.
template <typename Pass>
int large_access(call_kind kind, MPI_Win win, int target_rank, Pass pass) {
  if (preload::inside_cachecomm() || preload::find_window(win) == nullptr) return pass();
  preload::served_window* record = preload::window_in_epoch(kind, win);
  if (record == nullptr) return pass();
  if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
  return preload::through_mpi(kind, *record, target_rank, pass);
}

}  // namespace

extern "C" {

// Blocking collectives.

int MPI_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  if (!block_fits(count, datatype)) return PMPI_Bcast_c(buffer, count, datatype, root, comm);
  return MPI_Bcast(buffer, static_cast<int>(count), datatype, root, comm);
}

int MPI_Reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, int root, MPI_Comm comm) {
  if (!block_fits(count, datatype))
    return PMPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm);
  return MPI_Reduce(sendbuf, recvbuf, static_cast<int>(count), datatype, op, root, comm);
}

int MPI_Allreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm) {
  if (!block_fits(count, datatype))
    return PMPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm);
  return MPI_Allreduce(sendbuf, recvbuf, static_cast<int>(count), datatype, op, comm);
}

int MPI_Allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (!block_fits(recvcount, recvtype))
    return PMPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return MPI_Allgather(sendbuf, narrow(sendcount), sendtype, recvbuf, static_cast<int>(recvcount),
                       recvtype, comm);
}

int MPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (!block_fits(recvcount, recvtype))
    return PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return MPI_Alltoall(sendbuf, narrow(sendcount), sendtype, recvbuf, static_cast<int>(recvcount),
                      recvtype, comm);
}

int MPI_Gather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!rooted_block_fits(sendbuf, sendcount, sendtype, recvcount, recvtype)) {
    return PMPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return MPI_Gather(sendbuf, narrow(sendcount), sendtype, recvbuf, narrow(recvcount), recvtype,
                    root, comm);
}

int MPI_Scatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!rooted_block_fits(recvbuf, recvcount, recvtype, sendcount, sendtype)) {
    return PMPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  }
  return MPI_Scatter(sendbuf, narrow(sendcount), sendtype, recvbuf, narrow(recvcount), recvtype,
                     root, comm);
}

int MPI_Scan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
               MPI_Op op, MPI_Comm comm) {
  if (!block_fits(count, datatype)) return PMPI_Scan_c(sendbuf, recvbuf, count, datatype, op, comm);
  return MPI_Scan(sendbuf, recvbuf, static_cast<int>(count), datatype, op, comm);
}

int MPI_Exscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm) {
  if (!block_fits(count, datatype))
    return PMPI_Exscan_c(sendbuf, recvbuf, count, datatype, op, comm);
  return MPI_Exscan(sendbuf, recvbuf, static_cast<int>(count), datatype, op, comm);
}

int MPI_Reduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (!block_fits(recvcount, datatype))
    return PMPI_Reduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm);
  return MPI_Reduce_scatter_block(sendbuf, recvbuf, static_cast<int>(recvcount), datatype, op,
                                  comm);
}

int MPI_Reduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  auto pass = [&] {
    return PMPI_Reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm);
  };
  const int ranks = array_length(comm);
  if (ranks < 0 || recvcounts == nullptr) return pass();
  const std::span<const MPI_Count> counts(recvcounts, static_cast<std::size_t>(ranks));
  if (!blocks_fit(counts, datatype)) return pass();
  return MPI_Reduce_scatter(sendbuf, recvbuf, as_ints(counts, 0), datatype, op, comm);
}

int MPI_Allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                     MPI_Comm comm) {
  auto pass = [&] {
    return PMPI_Allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                             comm);
  };
  const int ranks = array_length(comm);
  if (ranks < 0 || recvcounts == nullptr || displs == nullptr) return pass();
  const auto length = static_cast<std::size_t>(ranks);
  const std::span<const MPI_Count> counts(recvcounts, length);
  if (!blocks_fit(counts, recvtype)) return pass();
  const int* int_displs = as_ints(std::span<const MPI_Aint>(displs, length), 1);
  if (int_displs == nullptr) return pass();  // a receive buffer of over 2^31 elements
  return MPI_Allgatherv(sendbuf, narrow(sendcount), sendtype, recvbuf, as_ints(counts, 0),
                        int_displs, recvtype, comm);
}

// Nonblocking collectives (the request is the int call's: the preload's own or MPI's).

int MPI_Ibcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  if (!block_fits(count, datatype))
    return PMPI_Ibcast_c(buffer, count, datatype, root, comm, request);
  return MPI_Ibcast(buffer, static_cast<int>(count), datatype, root, comm, request);
}

int MPI_Ireduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  if (!block_fits(count, datatype))
    return PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, request);
  return MPI_Ireduce(sendbuf, recvbuf, static_cast<int>(count), datatype, op, root, comm, request);
}

int MPI_Iallreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (!block_fits(count, datatype))
    return PMPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, request);
  return MPI_Iallreduce(sendbuf, recvbuf, static_cast<int>(count), datatype, op, comm, request);
}

int MPI_Iallgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
  if (!block_fits(recvcount, recvtype)) {
    return PMPI_Iallgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             request);
  }
  return MPI_Iallgather(sendbuf, narrow(sendcount), sendtype, recvbuf, static_cast<int>(recvcount),
                        recvtype, comm, request);
}

int MPI_Ialltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  if (!block_fits(recvcount, recvtype)) {
    return PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            request);
  }
  return MPI_Ialltoall(sendbuf, narrow(sendcount), sendtype, recvbuf, static_cast<int>(recvcount),
                       recvtype, comm, request);
}

int MPI_Igather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  if (!rooted_block_fits(sendbuf, sendcount, sendtype, recvcount, recvtype)) {
    return PMPI_Igather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                          request);
  }
  return MPI_Igather(sendbuf, narrow(sendcount), sendtype, recvbuf, narrow(recvcount), recvtype,
                     root, comm, request);
}

int MPI_Iscatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request* request) {
  if (!rooted_block_fits(recvbuf, recvcount, recvtype, sendcount, sendtype)) {
    return PMPI_Iscatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                           request);
  }
  return MPI_Iscatter(sendbuf, narrow(sendcount), sendtype, recvbuf, narrow(recvcount), recvtype,
                      root, comm, request);
}

int MPI_Ireduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request* request) {
  if (!block_fits(recvcount, datatype)) {
    return PMPI_Ireduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
  }
  return MPI_Ireduce_scatter_block(sendbuf, recvbuf, static_cast<int>(recvcount), datatype, op,
                                   comm, request);
}

int MPI_Iscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (!block_fits(count, datatype))
    return PMPI_Iscan_c(sendbuf, recvbuf, count, datatype, op, comm, request);
  return MPI_Iscan(sendbuf, recvbuf, static_cast<int>(count), datatype, op, comm, request);
}

int MPI_Iexscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (!block_fits(count, datatype))
    return PMPI_Iexscan_c(sendbuf, recvbuf, count, datatype, op, comm, request);
  return MPI_Iexscan(sendbuf, recvbuf, static_cast<int>(count), datatype, op, comm, request);
}

// Windows: creation and the shared-memory query.

int MPI_Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                     MPI_Win* win) {
  const int code = PMPI_Win_create_c(base, size, disp_unit, info, comm, win);
  return preload::inside_cachecomm() ? code : preload::track_program_window(code, win);
}

int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                              void* baseptr, MPI_Win* win) {
  const int code = PMPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win);
  return preload::inside_cachecomm() ? code : preload::track_program_window(code, win);
}

int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                       void* baseptr, MPI_Win* win) {
  if (disp_unit > 0 && disp_unit <= INT_MAX)
    return MPI_Win_allocate(size, static_cast<int>(disp_unit), info, comm, baseptr, win);
  const int code = PMPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win);
  return preload::inside_cachecomm() ? code : preload::track_program_window(code, win);
}

int MPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint* size, MPI_Aint* disp_unit,
                           void* baseptr) {
  if (preload::find_window(win) == nullptr)
    return PMPI_Win_shared_query_c(win, rank, size, disp_unit, baseptr);
  int unit = 0;  // a served window answers as the int call does (its flavor is "allocate")
  const int code = MPI_Win_shared_query(win, rank, size, &unit, baseptr);
  if (code == MPI_SUCCESS && disp_unit != nullptr) *disp_unit = unit;
  return code;
}

// One-sided accesses.

int MPI_Put_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win) {
  if (fits_int(origin_count) && fits_int(target_count)) {
    return MPI_Put(origin_addr, static_cast<int>(origin_count), origin_datatype, target_rank,
                   target_disp, static_cast<int>(target_count), target_datatype, win);
  }
  return large_access(call_kind::win_put, win, target_rank, [&] {
    return PMPI_Put_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, win);
  });
}

int MPI_Get_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win) {
  if (fits_int(origin_count) && fits_int(target_count)) {
    return MPI_Get(origin_addr, static_cast<int>(origin_count), origin_datatype, target_rank,
                   target_disp, static_cast<int>(target_count), target_datatype, win);
  }
  return large_access(call_kind::win_get, win, target_rank, [&] {
    return PMPI_Get_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, win);
  });
}

int MPI_Accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  if (fits_int(origin_count) && fits_int(target_count)) {
    return MPI_Accumulate(origin_addr, static_cast<int>(origin_count), origin_datatype, target_rank,
                          target_disp, static_cast<int>(target_count), target_datatype, op, win);
  }
  return large_access(call_kind::win_accumulate, win, target_rank, [&] {
    return PMPI_Accumulate_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                             target_count, target_datatype, op, win);
  });
}

int MPI_Get_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                         MPI_Datatype origin_datatype, void* result_addr, MPI_Count result_count,
                         MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                         MPI_Win win) {
  if (fits_int(origin_count) && fits_int(result_count) && fits_int(target_count)) {
    return MPI_Get_accumulate(origin_addr, static_cast<int>(origin_count), origin_datatype,
                              result_addr, static_cast<int>(result_count), result_datatype,
                              target_rank, target_disp, static_cast<int>(target_count),
                              target_datatype, op, win);
  }
  return large_access(call_kind::win_get_accumulate, win, target_rank, [&] {
    return PMPI_Get_accumulate_c(origin_addr, origin_count, origin_datatype, result_addr,
                                 result_count, result_datatype, target_rank, target_disp,
                                 target_count, target_datatype, op, win);
  });
}

}  // extern "C"

#endif  // MPI_VERSION >= 4
