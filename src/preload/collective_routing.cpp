// The mapping of MPI reductions to cachecomm's (shared by every intercepted reduction), and the
// automatic choice of a data collective (plan_call).
#include "preload/collective_routing.hpp"

#include "coll/system_mpi_choice.hpp"
#include "preload/handle_mapping.hpp"

namespace cachecomm::detail::preload {

namespace {

/// MPI_BYTE with a bitwise operation and MPI_C_BOOL with a logical one (the only operations MPI
/// defines on them) reduce exactly as bytes: cachecomm's logical operations give 0 or 1.
std::optional<cachecomm::reduce_op> byte_reduction(MPI_Datatype datatype, MPI_Op op) {
  if (datatype == MPI_BYTE) {
    if (op == MPI_BAND) return cachecomm::reduce_op::bitwise_and;
    if (op == MPI_BOR) return cachecomm::reduce_op::bitwise_or;
    if (op == MPI_BXOR) return cachecomm::reduce_op::bitwise_xor;
  }
  if (datatype == MPI_C_BOOL && sizeof(bool) == 1) {
    if (op == MPI_LAND) return cachecomm::reduce_op::logical_and;
    if (op == MPI_LOR) return cachecomm::reduce_op::logical_or;
    if (op == MPI_LXOR) return cachecomm::reduce_op::logical_xor;
  }
  return std::nullopt;
}

/// The reduction of (`datatype`, `op`), or nothing with the reason in `why`. The last pair served
/// is kept per thread (programs repeat the same reduction every step): the next call with both
/// skips the look-ups. Predefined datatypes only: their handles are never freed.
std::optional<served_reduction> reduction_of(MPI_Datatype datatype, MPI_Op op, outcome& why) {
  thread_local served_reduction last __attribute__((tls_model("initial-exec")));
  if (datatype == last.mpi_type && op == last.mpi_op && datatype != MPI_DATATYPE_NULL) return last;
  if (auto bytes = byte_reduction(datatype, op)) {
    last = {datatype, op, cachecomm::datatype::uint8, *bytes};
    return last;
  }
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

// MPI requires the same operation on every rank and, for a predefined operation, the same
// predefined datatype (Open MPI and MPICH refuse a derived one with MPI_ERR_OP), so this decision
// takes every rank the same way. Derived datatypes go to MPI, which reports them as it would.
std::optional<served_reduction> reduction_for(MPI_Datatype datatype, MPI_Op op, outcome& why) {
  auto reduction = reduction_of(datatype, op, why);
  // A user-defined operation is the first reason (it would pass with any datatype).
  if (!reduction && why == outcome::derived_datatype) (void)preload::as_reduce_op(op, why);
  return reduction;
}

planned_call plan_call(call_kind kind, const char* call, MPI_Comm comm, cachecomm::comm& c,
                       cachecomm::detail::tuned_op op, std::size_t bytes, int& error,
                       cachecomm::datatype type, cachecomm::reduce_op operation) {
  cachecomm_scope scope;
  try {
    const auto plan = cachecomm::detail::plan_automatic_call(c, op, bytes, type, operation);
    if (plan.choice != cachecomm::detail::tuning_choices::system_mpi)
      return {false, plan.choice, plan.trial, plan.warm_up};
    cachecomm::detail::agree_before_system_call(c, op, bytes, type, operation);
    return {true, 0, plan.trial, plan.warm_up};
  } catch (...) {
    stats().count(kind, outcome::cachecomm_error);
    error = report_failure(comm, call);
    return {};
  }
}

}  // namespace cachecomm::detail::preload
