// Windows from MPI_Win_allocate: creation, freeing, synchronization and queries.
//
// A served window is MPI's window from MPI_Win_allocate_shared on the program's communicator (one
// node, two ranks or more) with a cachecomm::window over the same memory, so MPI answers base,
// size, displacement unit, model, group, name, info and error handlers itself, and does every call
// cachecomm does not accelerate on the same bytes. Two answers differ from a shared window and are
// given here as Open MPI's MPI_Win_allocate window gives them: the create flavor (ALLOCATE) and
// MPI_Win_shared_query (MPI_ERR_RMA_FLAVOR, or MPI_ERR_WIN from Open MPI 5). cachecomm serves fence
// and PSCW; passive target (lock, lock_all, flush, sync) is MPI's and only tracked, so that the
// accesses inside it go to MPI.
#include <mpi.h>

#include <memory>
#include <vector>

#include "cachecomm/error.hpp"
#include "cachecomm/window.hpp"
#include "preload/program_windows.hpp"
#include "preload/runtime.hpp"
#include "preload/served_windows.hpp"
#include "rma/window_impl.hpp"

namespace preload = cachecomm::detail::preload;
using preload::call_kind;
using preload::outcome;
using preload::served_window;

namespace {

std::vector<int> ranks_of(served_window& record, MPI_Group group) {
  int count = 0;
  PMPI_Group_size(group, &count);
  std::vector<int> in(static_cast<std::size_t>(count));
  std::vector<int> out(in.size());
  for (int i = 0; i < count; ++i) in[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(group, count, in.data(), record.comm_group, out.data());
  return out;
}

// A fence followed by no access opens no epoch in MPI, so PSCW may follow it directly.
void leave_fence_epoch(served_window& record) {
  if (!record.fence_epoch) return;
  record.window->impl().leave_fence_epoch();
  record.fence_epoch = false;
}

// Unlocks pair with locks (MPI checks that); different targets may be unlocked by several threads.
void count_unlock(served_window& record) {
  int held = record.passive_locks.load();
  while (held > 0 && !record.passive_locks.compare_exchange_weak(held, held - 1)) {
  }
}

/// MPI_Win_allocate_shared with the program's arguments, its failure kept from the program's error
/// handler (MPI may have no shared memory for it, e.g. with another osc component selected).
int allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                    MPI_Win* win) {
  MPI_Errhandler program_handler = MPI_ERRHANDLER_NULL;
  PMPI_Comm_get_errhandler(comm, &program_handler);
  PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int code = PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
  PMPI_Comm_set_errhandler(comm, program_handler);
  PMPI_Errhandler_free(&program_handler);
  return code;
}

/// Every node rank's region in this process, in node-rank order, from MPI's shared window.
std::vector<std::byte*> node_regions(const cachecomm::comm& fast, MPI_Win win) {
  const auto& topology = fast.topology();
  std::vector<std::byte*> regions;
  for (int node_rank = 0; node_rank < topology.node_size; ++node_rank) {
    MPI_Aint bytes = 0;
    int unit = 0;
    void* base = nullptr;
    const int code = PMPI_Win_shared_query(win, topology.node_ranks[node_rank], &bytes, &unit,
                                           static_cast<void*>(&base));
    if (code != MPI_SUCCESS) {
      throw cachecomm::mpi_error("cachecomm preload: MPI_Win_shared_query failed", code);
    }
    regions.push_back(static_cast<std::byte*>(base));
  }
  return regions;
}

}  // namespace

extern "C" {

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                     MPI_Win* win) {
  if (preload::inside_cachecomm()) {
    return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
  }
  auto pass = [&] {
    return preload::track_program_window(
        PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win), win);
  };
  const call_kind kind = call_kind::win_allocate;
  if (auto blocked = preload::globally_blocked(kind)) {
    preload::stats().count(kind, *blocked);
    return pass();
  }
#if defined(MPICH_VERSION) || defined(MPI_ABI_VERSION)  // the ABI's MPIs today are MPICH-based
  // MPICH (ch3, no progress thread) applies passive-target accesses only while the target is inside
  // MPI; a target waiting in cachecomm's fence or PSCW would never let an origin's unlock finish.
  preload::stats().count(kind, outcome::needs_mpi_progress);
  return pass();
#endif
  if (size < 0 || disp_unit <= 0 || baseptr == nullptr || win == nullptr) {
    preload::stats().count(kind, outcome::invalid_argument);
    return pass();
  }
  outcome why = outcome::served;
  int error_code = MPI_SUCCESS;
  // Windows live long: build the communicator's state now rather than after the warm-up.
  cachecomm::comm* fast = preload::fast_comm(comm, why, error_code, true);
  if (error_code != MPI_SUCCESS) {
    preload::stats().count(kind, outcome::cachecomm_error);
    return error_code;
  }
  if (fast == nullptr) {
    preload::stats().count(kind, why);
    return pass();
  }
  if (fast->topology().node_count != 1) {
    preload::stats().count(kind, outcome::multi_node);
    return pass();
  }
  if (fast->size() == 1) {
    preload::stats().count(kind, outcome::one_rank);
    return pass();
  }
  auto record = std::make_unique<served_window>();
  {
    preload::cachecomm_scope scope;
    if (allocate_shared(size, disp_unit, info, comm, baseptr, &record->win) != MPI_SUCCESS) {
      record->win = MPI_WIN_NULL;
      preload::stats().count(kind, outcome::no_mpi_window);
      return pass();
    }
  }
  try {
    preload::cachecomm_scope scope;
    record->owner = preload::window_fast_comm(comm);
    const std::vector<std::byte*> regions = node_regions(*record->owner, record->win);
    record->window =
        std::make_unique<cachecomm::window>(*record->owner, static_cast<std::size_t>(size),
                                            static_cast<std::size_t>(disp_unit), regions);
    PMPI_Comm_group(comm, &record->comm_group);
  } catch (...) {
    preload::stats().count(kind, outcome::cachecomm_error);
    preload::destroy_window(*record);
    return preload::report_failure(comm, "MPI_Win_allocate");
  }
  *win = record->win;
  preload::add_window(std::move(record));
  preload::stats().count_served(kind);
  return MPI_SUCCESS;
}

int MPI_Win_free(MPI_Win* win) {
  served_window* record = win != nullptr ? preload::find_window(*win) : nullptr;
  if (record == nullptr) {
    if (!preload::inside_cachecomm()) {
      preload::stats().count(call_kind::win_free, outcome::mpi_window);
      if (win != nullptr) preload::forget_program_window(*win);
    }
    return PMPI_Win_free(win);
  }
  preload::free_window(*record);
  *win = MPI_WIN_NULL;
  preload::stats().count_served(call_kind::win_free);
  return MPI_SUCCESS;
}

// Windows cachecomm never serves; intercepted only to know that the program holds MPI windows.
int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win* win) {
  const int code = PMPI_Win_create(base, size, disp_unit, info, comm, win);
  return preload::inside_cachecomm() ? code : preload::track_program_window(code, win);
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  const int code = PMPI_Win_create_dynamic(info, comm, win);
  return preload::inside_cachecomm() ? code : preload::track_program_window(code, win);
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void* baseptr, MPI_Win* win) {
  const int code = PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
  return preload::inside_cachecomm() ? code : preload::track_program_window(code, win);
}

int MPI_Win_fence(int assert_flags, MPI_Win win) {
  served_window* record = preload::find_window(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_fence, outcome::mpi_window);
    return PMPI_Win_fence(assert_flags, win);
  }
  // MPI's own accesses in the epoch (derived types, get_accumulate of pair types...) were made
  // under a lock and are complete; cachecomm's fence completes its own and orders both.
  const bool last = (assert_flags & MPI_MODE_NOSUCCEED) != 0;
  return preload::serve_window(call_kind::win_fence, *record, "MPI_Win_fence", [&] {
    record->window->fence(last ? cachecomm::fence_flag::last : cachecomm::fence_flag::next_epoch);
    record->fence_epoch = !last;
  });
}

int MPI_Win_post(MPI_Group group, int assert_flags, MPI_Win win) {
  served_window* record = preload::find_window(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_pscw, outcome::mpi_window);
    return PMPI_Win_post(group, assert_flags, win);
  }
  return preload::serve_window(call_kind::win_pscw, *record, "MPI_Win_post", [&] {
    leave_fence_epoch(*record);
    record->window->post(ranks_of(*record, group));
  });
}

int MPI_Win_start(MPI_Group group, int assert_flags, MPI_Win win) {
  served_window* record = preload::find_window(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_pscw, outcome::mpi_window);
    return PMPI_Win_start(group, assert_flags, win);
  }
  return preload::serve_window(call_kind::win_pscw, *record, "MPI_Win_start", [&] {
    leave_fence_epoch(*record);
    record->window->start(ranks_of(*record, group));
    record->access_epoch = true;
  });
}

int MPI_Win_complete(MPI_Win win) {
  served_window* record = preload::find_window(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_pscw, outcome::mpi_window);
    return PMPI_Win_complete(win);
  }
  return preload::serve_window(call_kind::win_pscw, *record, "MPI_Win_complete", [&] {
    record->access_epoch = false;
    record->window->complete();
  });
}

int MPI_Win_wait(MPI_Win win) {
  served_window* record = preload::find_window(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_pscw, outcome::mpi_window);
    return PMPI_Win_wait(win);
  }
  return preload::serve_window(call_kind::win_pscw, *record, "MPI_Win_wait",
                               [&] { record->window->wait(); });
}

int MPI_Win_test(MPI_Win win, int* flag) {
  served_window* record = preload::find_window(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_pscw, outcome::mpi_window);
    return PMPI_Win_test(win, flag);
  }
  return preload::serve_window(call_kind::win_pscw, *record, "MPI_Win_test",
                               [&] { *flag = record->window->test() ? 1 : 0; });
}

// Passive target is MPI's on the same memory; the preload only notes that an epoch is open, so
// that the accesses inside it go to MPI too.
int MPI_Win_lock(int lock_type, int rank, int assert_flags, MPI_Win win) {
  served_window* record = preload::find_window(win);
  const int code = PMPI_Win_lock(lock_type, rank, assert_flags, win);
  if (record != nullptr) {
    preload::stats().count(call_kind::win_passive, outcome::passive_target);
    if (code == MPI_SUCCESS) ++record->passive_locks;
  }
  return code;
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  served_window* record = preload::find_window(win);
  const int code = PMPI_Win_unlock(rank, win);
  if (record != nullptr) {
    preload::stats().count(call_kind::win_passive, outcome::passive_target);
    if (code == MPI_SUCCESS) count_unlock(*record);
  }
  return code;
}

int MPI_Win_lock_all(int assert_flags, MPI_Win win) {
  served_window* record = preload::find_window(win);
  const int code = PMPI_Win_lock_all(assert_flags, win);
  if (record != nullptr) {
    preload::stats().count(call_kind::win_passive, outcome::passive_target);
    if (code == MPI_SUCCESS) ++record->passive_locks;
  }
  return code;
}

int MPI_Win_unlock_all(MPI_Win win) {
  served_window* record = preload::find_window(win);
  const int code = PMPI_Win_unlock_all(win);
  if (record != nullptr) {
    preload::stats().count(call_kind::win_passive, outcome::passive_target);
    if (code == MPI_SUCCESS) count_unlock(*record);
  }
  return code;
}

int MPI_Win_get_attr(MPI_Win win, int keyval, void* attribute_val, int* flag) {
  if (keyval == MPI_WIN_CREATE_FLAVOR && attribute_val != nullptr && flag != nullptr &&
      preload::find_window(win) != nullptr) {
    static int allocate_flavor = MPI_WIN_FLAVOR_ALLOCATE;  // MPI hands out a pointer to an int
    *static_cast<int**>(attribute_val) = &allocate_flavor;
    *flag = 1;
    return MPI_SUCCESS;
  }
  return PMPI_Win_get_attr(win, keyval, attribute_val, flag);
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  if (preload::find_window(win) == nullptr)
    return PMPI_Win_shared_query(win, rank, size, disp_unit, baseptr);
    // What Open MPI answers for a window of flavor MPI_WIN_FLAVOR_ALLOCATE: MPI_ERR_RMA_FLAVOR up
    // to 4.1, MPI_ERR_WIN from 5.0 (this library only serves under the MPI it was built for).
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
  constexpr int not_shared = MPI_ERR_WIN;
#else
  constexpr int not_shared = MPI_ERR_RMA_FLAVOR;
#endif
  PMPI_Win_call_errhandler(win, not_shared);
  return not_shared;
}

}  // extern "C"
