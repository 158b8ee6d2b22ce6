// Communicator creation and destruction. New communicators get cachecomm state lazily (after the
// warm-up collective calls), cached as an attribute; freeing the communicator frees the state.
#include <mpi.h>

#include "preload/runtime.hpp"

namespace preload = cachecomm::detail::preload;
using preload::call_kind;
using preload::outcome;

namespace {
void count_management(call_kind kind) {
  if (!preload::inside_cachecomm()) preload::stats().count(kind, outcome::communicator_management);
}
}  // namespace

extern "C" {

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  count_management(call_kind::comm_dup);
  return PMPI_Comm_dup(comm, newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  count_management(call_kind::comm_split);
  return PMPI_Comm_split(comm, color, key, newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  count_management(call_kind::comm_split_type);
  return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  count_management(call_kind::comm_create);
  return PMPI_Comm_create(comm, group, newcomm);
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
