// What every intercepted collective shares: the route to a cachecomm communicator (or the reason to
// pass through), counting, running the cachecomm implementation under the re-entrancy guard with
// failures reported the MPI way, and the mapping of MPI reductions to cachecomm's.
#pragma once

#include <mpi.h>

#include <optional>

#include "cachecomm/comm.hpp"
#include "cachecomm/datatype.hpp"
#include "coll/system_mpi_choice.hpp"
#include "coll/tuning_table.hpp"
#include "preload/call_stats.hpp"
#include "preload/nonblocking_requests.hpp"
#include "preload/runtime.hpp"
#include "sync/mpi_progress.hpp"

namespace cachecomm::detail::preload {

// The decision for one call: the cachecomm communicator to serve it with, or why not.
struct route {
  cachecomm::comm* fast = nullptr;
  outcome why_not = outcome::served;
  int error_code = MPI_SUCCESS;  ///< building the state failed and was reported: return this
};

inline route route_call(call_kind kind, MPI_Comm comm) {
  // Nonblocking collectives pending on this communicator finish first (MPI orders collectives per
  // communicator), and a channel they asked for is built here, where every rank is.
  if (nonblocking_needs_attention()) settle_before_blocking(comm);
  route r;
  r.fast = hot_comm(kind, comm);
  if (r.fast != nullptr) return r;
  if (auto blocked = globally_blocked(kind)) {
    r.why_not = *blocked;
    return r;
  }
  r.fast = fast_comm(comm, r.why_not, r.error_code, false, kind);
  if (r.error_code != MPI_SUCCESS) stats().count(kind, outcome::cachecomm_error);
  return r;
}

// Counts and forwards: `pass` is the PMPI call.
template <typename Pass>
int pass_through(call_kind kind, outcome why, Pass&& pass) {
  stats().count(kind, why);
  return pass();
}

// A call that moves no data on any rank goes to MPI before any lookup: the count that says so is
// one MPI makes agree across ranks, so every rank passes. Nonblocking collectives pending on the
// communicator settle first, as in route_call. Counts the pass; true, so that the caller's
// condition reads `count == 0 && empty_passes(...)` and calls PMPI itself, building nothing.
inline bool empty_passes(call_kind kind, MPI_Comm comm) {
  if (nonblocking_needs_attention()) settle_before_blocking(comm);
  stats().count(kind, outcome::empty);
  return true;
}

// Runs the cachecomm implementation; a failure goes through the communicator's error handler.
// MPI's own collectives turn its progress engine; while the program holds MPI windows a served one
// does too, before and after, so that one-sided traffic MPI delivers only from inside MPI (MPICH's
// MPI_Win_complete and unlock messages) is not held up by a collective MPI never saw.
template <typename Serve>
int serve(call_kind kind, MPI_Comm comm, const char* call, Serve&& body) {
  const bool drive_progress = mpi_progress_requested();
  if (drive_progress) poke_mpi_progress();
  try {
    cachecomm_scope scope;
    body();
    if (drive_progress) poke_mpi_progress();
  } catch (...) {
    stats().count(kind, outcome::cachecomm_error);
    return report_failure(comm, call);
  }
  stats().count_served(kind);
  return MPI_SUCCESS;
}

/// The automatic choice of one data collective (plan_automatic_call: a forced choice, the tuning
/// file, online selection or the built-in rules), taken once per call on every rank. Where it is
/// the system MPI the ranks agree on the call first (as in mpi_wins). `error`: set when planning or
/// agreeing failed (reported through the communicator's error handler).
struct planned_call {
  bool mpi = false;           ///< pass through, counted as mpi-faster
  std::int8_t algorithm = 0;  ///< otherwise the algorithm to serve it with
  bool trial = false;         ///< an online trial: time it
  bool warm_up = false;       ///< an untimed call of the trial (counted with the trial)
};
planned_call plan_call(call_kind kind, const char* call, MPI_Comm comm, cachecomm::comm& c,
                       cachecomm::detail::tuned_op op, std::size_t bytes, int& error,
                       cachecomm::datatype type = cachecomm::datatype::byte,
                       cachecomm::reduce_op operation = cachecomm::reduce_op::sum);

/// Runs a planned call (`pass`: the PMPI call, `body`: cachecomm's) and times it when it is an
/// online trial (a failed call records nothing).
template <typename Pass, typename Body>
int run_planned(call_kind kind, const char* call, MPI_Comm comm, cachecomm::comm& c,
                const planned_call& plan, cachecomm::detail::tuned_op op, std::size_t bytes,
                Pass&& pass, Body&& body) {
  const cachecomm::detail::trial_timer timer(plan.trial);
  const int result =
      plan.mpi
          ? pass_through(
                kind, plan.trial || plan.warm_up ? outcome::mpi_trial : outcome::mpi_faster, pass)
          : serve(kind, comm, call, body);
  if (result == MPI_SUCCESS) timer.finish(c, op, bytes);
  return result;
}

inline bool valid_root(const cachecomm::comm& c, int root) {
  return root >= 0 && root < c.size();
}

/// cachecomm's type and operation for an MPI reduction.
struct served_reduction {
  MPI_Datatype mpi_type = MPI_DATATYPE_NULL;
  MPI_Op mpi_op = MPI_OP_NULL;
  cachecomm::datatype type{};
  cachecomm::reduce_op op{};
};

/// The reduction of (`datatype`, `op`) when cachecomm serves it, or nothing with the reason in
/// `why`. MPI requires the same operation on every rank and, for a predefined operation, the same
/// predefined datatype, so this decision takes every rank the same way.
std::optional<served_reduction> reduction_for(MPI_Datatype datatype, MPI_Op op, outcome& why);

}  // namespace cachecomm::detail::preload
