// One-sided accesses on served windows: put, get, accumulate and the atomics (get_accumulate,
// fetch_and_op, compare_and_swap). Inside a fence or PSCW epoch cachecomm does them on the shared
// memory when the datatypes are predefined and gap-free; otherwise MPI does them under a shared
// lock on the same window. Every accumulate-like call with a type cachecomm maps is cachecomm's
// inside its epochs, so accumulates to one element stay atomic with respect to each other.
// Passive-target epochs and request-based operations (MPI_Rput...) are MPI's entirely.
#include <mpi.h>

#include <optional>

#include "cachecomm/window.hpp"
#include "preload/handle_mapping.hpp"
#include "preload/served_windows.hpp"

namespace preload = cachecomm::detail::preload;
using preload::call_kind;
using preload::outcome;
using preload::served_window;

namespace {

// Byte count when both sides are predefined, gap-free and the same length; else nothing.
bool plain_bytes(int origin_count, MPI_Datatype origin_type, int target_count,
                 MPI_Datatype target_type, std::size_t& bytes, outcome& why) {
  auto origin = preload::as_movable(origin_type, why);
  auto target = preload::as_movable(target_type, why);
  if (!origin || !target) return false;
  if (origin_count < 0 || target_count < 0) {
    why = outcome::invalid_argument;
    return false;
  }
  bytes = static_cast<std::size_t>(origin_count) * origin->element_bytes;
  if (bytes != static_cast<std::size_t>(target_count) * target->element_bytes) {
    why = outcome::invalid_argument;
    return false;
  }
  return true;
}

std::optional<cachecomm::reduce_op> accumulate_op(MPI_Op op, outcome& why) {
  if (op == MPI_REPLACE) return cachecomm::reduce_op::replace;
  return preload::as_reduce_op(op, why);
}

/// The element type of an accumulate-like call cachecomm does itself: every datatype the same
/// mapped type, the same count, a supported operation (none for MPI_NO_OP).
std::optional<cachecomm::datatype> atomic_type(MPI_Datatype type,
                                               std::initializer_list<MPI_Datatype> others,
                                               int count, std::initializer_list<int> other_counts,
                                               MPI_Aint target_disp, MPI_Op op,
                                               std::optional<cachecomm::reduce_op>& operation) {
  outcome why = outcome::served;
  auto mapped = preload::as_reducible(type, why);
  if (!mapped || count < 0 || target_disp < 0) return std::nullopt;
  for (MPI_Datatype other : others)
    if (other != type) return std::nullopt;
  for (int other : other_counts)
    if (other != count) return std::nullopt;
  if (op == MPI_NO_OP) return mapped;
  operation = accumulate_op(op, why);
  if (!operation || !cachecomm::supports(*mapped, *operation)) return std::nullopt;
  return mapped;
}

/// Whether cachecomm's atomics can reach the element (MPI accepts any alignment; cachecomm's CAS
/// needs the element's). The decision depends on the address only, the same in every process.
bool aligned(const served_window& record, int target, MPI_Aint target_disp,
             cachecomm::datatype type) {
  return target_disp >= 0 &&
         record.window->atomic_aligned(target, static_cast<std::size_t>(target_disp),
                                       cachecomm::window::atomic_alignment(type));
}

/// MPI_Put and MPI_Get: cachecomm copies the bytes inside its epochs when both datatypes are plain
/// (`access(window, bytes, displacement)`); otherwise MPI does the call (`pass`), under a shared
/// lock inside cachecomm's epochs.
template <typename Pass, typename Access>
int plain_access(call_kind kind, const char* name, MPI_Win win, int origin_count,
                 MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                 int target_count, MPI_Datatype target_datatype, Pass pass, Access access) {
  served_window* record = preload::window_in_epoch(kind, win);
  if (record == nullptr) return pass();
  if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
  std::size_t bytes = 0;
  outcome why = outcome::served;
  if (target_disp < 0 ||
      !plain_bytes(origin_count, origin_datatype, target_count, target_datatype, bytes, why)) {
    return preload::through_mpi(kind, *record, target_rank, pass);
  }
  return preload::serve_window(kind, *record, name, [&] {
    access(*record->window, bytes, static_cast<std::size_t>(target_disp));
  });
}

}  // namespace

extern "C" {

int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
            MPI_Win win) {
  return plain_access(
      call_kind::win_put, "MPI_Put", win, origin_count, origin_datatype, target_rank, target_disp,
      target_count, target_datatype,
      [&] {
        return PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                        target_count, target_datatype, win);
      },
      [&](cachecomm::window& window, std::size_t bytes, std::size_t displacement) {
        window.put(origin_addr, bytes, target_rank, displacement);
      });
}

int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return plain_access(
      call_kind::win_get, "MPI_Get", win, origin_count, origin_datatype, target_rank, target_disp,
      target_count, target_datatype,
      [&] {
        return PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                        target_count, target_datatype, win);
      },
      [&](cachecomm::window& window, std::size_t bytes, std::size_t displacement) {
        window.get(origin_addr, bytes, target_rank, displacement);
      });
}

int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  auto pass = [&] {
    return PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                           target_count, target_datatype, op, win);
  };
  served_window* record = preload::window_in_epoch(call_kind::win_accumulate, win);
  if (record == nullptr) return pass();
  if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
  std::optional<cachecomm::reduce_op> operation;
  auto type = atomic_type(origin_datatype, {target_datatype}, origin_count, {target_count},
                          target_disp, op, operation);
  // MPI_NO_OP changes nothing (MPI checks its arguments); MPI takes any alignment.
  if (!type || !operation || !aligned(*record, target_rank, target_disp, *type)) {
    return preload::through_mpi(call_kind::win_accumulate, *record, target_rank, pass);
  }
  return preload::serve_window(call_kind::win_accumulate, *record, "MPI_Accumulate", [&] {
    record->window->accumulate(origin_addr, static_cast<std::size_t>(origin_count), *type,
                               *operation, target_rank, static_cast<std::size_t>(target_disp));
  });
}

int MPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void* result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  auto pass = [&] {
    return PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                               result_count, result_datatype, target_rank, target_disp,
                               target_count, target_datatype, op, win);
  };
  const call_kind kind = call_kind::win_get_accumulate;
  served_window* record = preload::window_in_epoch(kind, win);
  if (record == nullptr) return pass();
  if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
  std::optional<cachecomm::reduce_op> operation;
  // With MPI_NO_OP the origin buffer, count and type are ignored.
  auto type = op == MPI_NO_OP
                  ? atomic_type(target_datatype, {result_datatype}, target_count, {result_count},
                                target_disp, op, operation)
                  : atomic_type(target_datatype, {result_datatype, origin_datatype}, target_count,
                                {result_count, origin_count}, target_disp, op, operation);
  if (!type || !aligned(*record, target_rank, target_disp, *type))
    return preload::through_mpi(kind, *record, target_rank, pass);
  return preload::serve_window(kind, *record, "MPI_Get_accumulate", [&] {
    record->window->fetch_and_accumulate(op == MPI_NO_OP ? nullptr : origin_addr, result_addr,
                                         static_cast<std::size_t>(target_count), *type,
                                         operation.value_or(cachecomm::reduce_op::replace),
                                         target_rank, static_cast<std::size_t>(target_disp));
  });
}

int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  auto pass = [&] {
    return PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win);
  };
  const call_kind kind = call_kind::win_fetch_and_op;
  served_window* record = preload::window_in_epoch(kind, win);
  if (record == nullptr) return pass();
  if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
  std::optional<cachecomm::reduce_op> operation;
  auto type = atomic_type(datatype, {}, 1, {}, target_disp, op, operation);
  if (!type || !aligned(*record, target_rank, target_disp, *type))
    return preload::through_mpi(kind, *record, target_rank, pass);
  return preload::serve_window(kind, *record, "MPI_Fetch_and_op", [&] {
    record->window->fetch_and_accumulate(op == MPI_NO_OP ? nullptr : origin_addr, result_addr, 1,
                                         *type, operation.value_or(cachecomm::reduce_op::replace),
                                         target_rank, static_cast<std::size_t>(target_disp));
  });
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win) {
  auto pass = [&] {
    return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank,
                                 target_disp, win);
  };
  const call_kind kind = call_kind::win_compare_and_swap;
  served_window* record = preload::window_in_epoch(kind, win);
  if (record == nullptr) return pass();
  if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
  outcome why = outcome::served;
  // MPI allows integer, logical and byte types here; compared bit for bit like MPI does.
  auto type = preload::as_reducible(datatype, why);
  const bool word = type && cachecomm::supports(*type, cachecomm::reduce_op::bitwise_xor);
  if (!word || target_disp < 0 ||
      !record->window->atomic_aligned(target_rank, static_cast<std::size_t>(target_disp),
                                      cachecomm::size_of(*type)))
    return preload::through_mpi(kind, *record, target_rank, pass);
  return preload::serve_window(kind, *record, "MPI_Compare_and_swap", [&] {
    record->window->compare_and_swap(origin_addr, compare_addr, result_addr,
                                     cachecomm::size_of(*type), target_rank,
                                     static_cast<std::size_t>(target_disp));
  });
}

}  // extern "C"
