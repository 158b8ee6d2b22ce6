// Communicator creation and destruction. A communicator's cachecomm state is cached on it as an
// attribute; freeing the communicator frees the state (or keeps it for the next one of its group).
// The blocking creation calls build it at once for the first few children of each parent (where
// nonblocking collectives may be served: build_child_state); other communicators get it lazily,
// after the warm-up collective calls.
#include <mpi.h>

#include "preload/runtime.hpp"

namespace preload = cachecomm::detail::preload;
using preload::call_kind;
using preload::outcome;

namespace {
void count_management(call_kind kind) {
  if (!preload::inside_cachecomm()) preload::stats().count(kind, outcome::communicator_management);
}

/// After a creation call on `parent` that returned `code`, on every rank of `parent` (`child` is
/// read only on success: a null pointer is MPI's error to report).
int made(int code, MPI_Comm parent, const MPI_Comm* child, const char* call) {
  if (code == MPI_SUCCESS) preload::build_child_state(parent, *child, call);
  return code;
}
}  // namespace

extern "C" {

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  count_management(call_kind::comm_dup);
  return made(PMPI_Comm_dup(comm, newcomm), comm, newcomm, "MPI_Comm_dup");
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  count_management(call_kind::comm_dup);
  return made(PMPI_Comm_dup_with_info(comm, info, newcomm), comm, newcomm,
              "MPI_Comm_dup_with_info");
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  count_management(call_kind::comm_split);
  return made(PMPI_Comm_split(comm, color, key, newcomm), comm, newcomm, "MPI_Comm_split");
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  count_management(call_kind::comm_split_type);
  return made(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), comm, newcomm,
              "MPI_Comm_split_type");
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  count_management(call_kind::comm_create);
  return made(PMPI_Comm_create(comm, group, newcomm), comm, newcomm, "MPI_Comm_create");
}

int MPI_Comm_free(MPI_Comm* comm) {
  if (preload::inside_cachecomm()) return PMPI_Comm_free(comm);
  count_management(call_kind::comm_free);
  // Free cachecomm's state (its shared memory, its communicators) first, while the communicator is
  // intact; the attribute's delete callback would do the same inside PMPI_Comm_free.
  if (comm != nullptr && *comm != MPI_COMM_WORLD && *comm != MPI_COMM_SELF) preload::forget(*comm);
  return PMPI_Comm_free(comm);
}

}  // extern "C"
