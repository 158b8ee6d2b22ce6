// Windows from MPI_Win_allocate served by cachecomm::window: fence, post/start/complete/wait/test,
// put/get/accumulate. Each such window is also an MPI window over the same memory
// (PMPI_Win_create), so everything cachecomm does not do - passive target (lock/unlock),
// attributes, groups, a put with a derived datatype - is MPI's, on the same bytes.
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "cachecomm/error.hpp"
#include "cachecomm/window.hpp"
#include "preload/handle_mapping.hpp"
#include "preload/runtime.hpp"

namespace preload = cachecomm::detail::preload;
using preload::call_kind;
using preload::outcome;

namespace {

struct served_window {
  MPI_Win win = MPI_WIN_NULL;              ///< the MPI window over the cachecomm region
  MPI_Group comm_group = MPI_GROUP_NULL;   ///< for translating post/start groups to ranks
  std::shared_ptr<cachecomm::comm> owner;  ///< keeps the cachecomm communicator alive
  std::unique_ptr<cachecomm::window> window;
  bool fence_epoch = false;   ///< a fence opened an epoch (not closed by MPI_MODE_NOSUCCEED)
  bool access_epoch = false;  ///< between start and complete
};

// Few windows live at once: a vector searched from the back (the newest is the likeliest).
std::vector<std::unique_ptr<served_window>>& windows() {
  static std::vector<std::unique_ptr<served_window>> all;
  return all;
}

served_window* find(MPI_Win win) {
  if (preload::inside_cachecomm()) return nullptr;
  auto& all = windows();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if ((*it)->win == win) return it->get();
  }
  return nullptr;
}

void destroy(served_window& record) {
  preload::cachecomm_scope scope;
  if (record.win != MPI_WIN_NULL) PMPI_Win_free(&record.win);
  if (record.comm_group != MPI_GROUP_NULL) PMPI_Group_free(&record.comm_group);
  record.window.reset();
}

// Windows the program never freed go before the communicator states (MPI_Finalize).
void free_all_windows() {
  for (auto& record : windows()) destroy(*record);
  windows().clear();
}

std::vector<int> ranks_of(served_window& record, MPI_Group group) {
  int count = 0;
  PMPI_Group_size(group, &count);
  std::vector<int> in(static_cast<std::size_t>(count));
  std::vector<int> out(in.size());
  for (int i = 0; i < count; ++i) in[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(group, count, in.data(), record.comm_group, out.data());
  return out;
}

template <typename Body>
int serve_window(call_kind kind, served_window& record, const char* call, Body&& body) {
  try {
    preload::cachecomm_scope scope;
    body();
  } catch (...) {
    preload::stats().count(kind, outcome::cachecomm_error);
    return preload::report_window_failure(record.win, call);
  }
  preload::stats().count_served(kind);
  return MPI_SUCCESS;
}

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

/// The window of a put, get or accumulate that cachecomm serves, or nullptr (the reason counted)
/// when the call passes through: the window is MPI's own, or no epoch is open on it.
served_window* window_in_epoch(call_kind kind, MPI_Win win) {
  served_window* record = find(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm()) preload::stats().count(kind, outcome::mpi_window);
    return nullptr;
  }
  if (!record->fence_epoch && !record->access_epoch) {
    preload::stats().count(kind, outcome::outside_epoch);
    return nullptr;
  }
  return record;
}

// An access cachecomm cannot express, inside a cachecomm epoch: MPI does it under a shared lock on
// the MPI window over the same memory, after cachecomm has seen the target's post (PSCW), so it
// lands when the epoch allows it; the closing fence or complete orders it like the rest.
template <typename Access>
int through_mpi(call_kind kind, served_window& record, int target, Access&& access) {
  if (record.access_epoch) {
    try {
      preload::cachecomm_scope scope;
      char nothing = 0;
      record.window->put(&nothing, 0, target, 0);  // waits for the target's post
    } catch (...) {
      preload::stats().count(kind, outcome::cachecomm_error);
      return preload::report_window_failure(record.win, "waiting for the target's post");
    }
  }
  preload::stats().count(kind, outcome::packed_through_mpi);
  int code = PMPI_Win_lock(MPI_LOCK_SHARED, target, 0, record.win);
  if (code != MPI_SUCCESS) return code;
  code = access();
  const int unlock = PMPI_Win_unlock(target, record.win);
  return code != MPI_SUCCESS ? code : unlock;
}

}  // namespace

extern "C" {

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                     MPI_Win* win) {
  auto pass = [&] { return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win); };
  if (preload::inside_cachecomm()) return pass();
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
  static const bool cleanup_registered = [] {
    preload::set_window_cleanup(free_all_windows);
    return true;
  }();
  (void)cleanup_registered;
  auto record = std::make_unique<served_window>();
  try {
    preload::cachecomm_scope scope;
    record->owner = preload::shared_fast_comm(comm);
    record->window = std::make_unique<cachecomm::window>(*fast, static_cast<std::size_t>(size),
                                                         static_cast<std::size_t>(disp_unit));
    void* base = record->window->local().data();
    // MPI may be unable to expose this memory (Open MPI's osc components at one rank): then the
    // window stays MPI's. Its failure must not reach the program's error handler.
    MPI_Errhandler program_handler = MPI_ERRHANDLER_NULL;
    PMPI_Comm_get_errhandler(comm, &program_handler);
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    const int code = PMPI_Win_create(base, size, disp_unit, info, comm, &record->win);
    PMPI_Comm_set_errhandler(comm, program_handler);
    PMPI_Errhandler_free(&program_handler);
    if (code != MPI_SUCCESS) {
      record->win = MPI_WIN_NULL;
      destroy(*record);
      preload::stats().count(kind, outcome::no_mpi_window);
      return pass();
    }
    PMPI_Comm_group(comm, &record->comm_group);
    *static_cast<void**>(baseptr) = base;
    *win = record->win;
  } catch (...) {
    preload::stats().count(kind, outcome::cachecomm_error);
    destroy(*record);
    return preload::report_failure(comm, "MPI_Win_allocate");
  }
  windows().push_back(std::move(record));
  preload::stats().count_served(kind);
  return MPI_SUCCESS;
}

int MPI_Win_free(MPI_Win* win) {
  served_window* record = win != nullptr ? find(*win) : nullptr;
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_free, outcome::mpi_window);
    return PMPI_Win_free(win);
  }
  destroy(*record);
  auto& all = windows();
  all.erase(
      std::remove_if(all.begin(), all.end(), [record](const auto& r) { return r.get() == record; }),
      all.end());
  *win = MPI_WIN_NULL;
  preload::stats().count_served(call_kind::win_free);
  return MPI_SUCCESS;
}

int MPI_Win_fence(int assert_flags, MPI_Win win) {
  served_window* record = find(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_fence, outcome::mpi_window);
    return PMPI_Win_fence(assert_flags, win);
  }
  const bool last = (assert_flags & MPI_MODE_NOSUCCEED) != 0;
  return serve_window(call_kind::win_fence, *record, "MPI_Win_fence", [&] {
    record->window->fence(last ? cachecomm::fence_flag::last : cachecomm::fence_flag::next_epoch);
    record->fence_epoch = !last;
  });
}

int MPI_Win_post(MPI_Group group, int assert_flags, MPI_Win win) {
  served_window* record = find(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_pscw, outcome::mpi_window);
    return PMPI_Win_post(group, assert_flags, win);
  }
  return serve_window(call_kind::win_pscw, *record, "MPI_Win_post",
                      [&] { record->window->post(ranks_of(*record, group)); });
}

int MPI_Win_start(MPI_Group group, int assert_flags, MPI_Win win) {
  served_window* record = find(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_pscw, outcome::mpi_window);
    return PMPI_Win_start(group, assert_flags, win);
  }
  return serve_window(call_kind::win_pscw, *record, "MPI_Win_start", [&] {
    record->window->start(ranks_of(*record, group));
    record->access_epoch = true;
  });
}

int MPI_Win_complete(MPI_Win win) {
  served_window* record = find(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_pscw, outcome::mpi_window);
    return PMPI_Win_complete(win);
  }
  return serve_window(call_kind::win_pscw, *record, "MPI_Win_complete", [&] {
    record->access_epoch = false;
    record->window->complete();
  });
}

int MPI_Win_wait(MPI_Win win) {
  served_window* record = find(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_pscw, outcome::mpi_window);
    return PMPI_Win_wait(win);
  }
  return serve_window(call_kind::win_pscw, *record, "MPI_Win_wait",
                      [&] { record->window->wait(); });
}

int MPI_Win_test(MPI_Win win, int* flag) {
  served_window* record = find(win);
  if (record == nullptr) {
    if (!preload::inside_cachecomm())
      preload::stats().count(call_kind::win_pscw, outcome::mpi_window);
    return PMPI_Win_test(win, flag);
  }
  return serve_window(call_kind::win_pscw, *record, "MPI_Win_test",
                      [&] { *flag = record->window->test() ? 1 : 0; });
}

int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
            MPI_Win win) {
  auto pass = [&] {
    return PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win);
  };
  served_window* record = window_in_epoch(call_kind::win_put, win);
  if (record == nullptr) return pass();
  if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
  std::size_t bytes = 0;
  outcome why = outcome::served;
  if (target_disp < 0 ||
      !plain_bytes(origin_count, origin_datatype, target_count, target_datatype, bytes, why)) {
    return through_mpi(call_kind::win_put, *record, target_rank, pass);
  }
  return serve_window(call_kind::win_put, *record, "MPI_Put", [&] {
    record->window->put(origin_addr, bytes, target_rank, static_cast<std::size_t>(target_disp));
  });
}

int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  auto pass = [&] {
    return PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win);
  };
  served_window* record = window_in_epoch(call_kind::win_get, win);
  if (record == nullptr) return pass();
  if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
  std::size_t bytes = 0;
  outcome why = outcome::served;
  if (target_disp < 0 ||
      !plain_bytes(origin_count, origin_datatype, target_count, target_datatype, bytes, why)) {
    return through_mpi(call_kind::win_get, *record, target_rank, pass);
  }
  return serve_window(call_kind::win_get, *record, "MPI_Get", [&] {
    record->window->get(origin_addr, bytes, target_rank, static_cast<std::size_t>(target_disp));
  });
}

int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  auto pass = [&] {
    return PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                           target_count, target_datatype, op, win);
  };
  served_window* record = window_in_epoch(call_kind::win_accumulate, win);
  if (record == nullptr) return pass();
  if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
  outcome why = outcome::served;
  auto type = preload::as_reducible(origin_datatype, why);
  std::optional<cachecomm::reduce_op> operation = op == MPI_REPLACE
                                                      ? std::optional(cachecomm::reduce_op::replace)
                                                      : preload::as_reduce_op(op, why);
  const bool plain = type && operation && target_datatype == origin_datatype &&
                     origin_count == target_count && origin_count >= 0 && target_disp >= 0 &&
                     cachecomm::supports(*type, *operation);
  if (!plain) return through_mpi(call_kind::win_accumulate, *record, target_rank, pass);
  return serve_window(call_kind::win_accumulate, *record, "MPI_Accumulate", [&] {
    record->window->accumulate(origin_addr, static_cast<std::size_t>(origin_count), *type,
                               *operation, target_rank, static_cast<std::size_t>(target_disp));
  });
}

}  // extern "C"
