// cachecomm::request and its completion calls (include/cachecomm/nonblocking.hpp).
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

#include "cachecomm/error.hpp"
#include "cachecomm/nonblocking.hpp"
#include "coll/mismatch_error.hpp"
#include "coll/nonblocking_state.hpp"
#include "core/mpi_check.hpp"
#include "sync/waiter.hpp"

namespace cachecomm {

namespace detail {
namespace {

/// One poll of `state` (no progress pass): true when complete; then marks it reported and throws
/// its error, if any.
bool poll(request_state& state) {
  if (state.reported) return true;
  switch (state.path) {
    case nonblocking_path::none:
    case nonblocking_path::local: state.reported = true; return true;
    case nonblocking_path::shared_memory: {
      if (!state.operation.finished.load(std::memory_order_acquire)) return false;
      state.reported = true;
      if (state.operation.error != MPI_SUCCESS) {
        const bool size = state.operation.error == MPI_ERR_TRUNCATE;
        throw mismatch_error(
            std::string("cachecomm: ") + state.what + ": " + state.operation.problem,
            size ? mismatch_error::field::size : mismatch_error::field::collective);
      }
      return true;
    }
    case nonblocking_path::system_mpi: {
      int flag = 0;
      const int code = MPI_Test(&state.mpi, &flag, MPI_STATUS_IGNORE);
      if (code != MPI_SUCCESS) {
        state.reported = true;
        throw mpi_error(state.what, code);
      }
      if (flag == 0) return false;
      state.reported = true;
      return true;
    }
  }
  return true;
}

/// A request on the system MPI's path, when nothing of the shared layer is pending (so no peer can
/// be waiting on this rank's contribution): MPI's own blocking wait, which drives MPI's schedule
/// itself. Polling it with the back-off's sleeps between tests starved that schedule: Open MPI
/// 4.1's ireduce_scatter_block of 1 MiB per rank took 1.4x its MPI_Wait time. True when done.
bool wait_in_mpi(request_state& state) {
  if (state.reported || state.path != nonblocking_path::system_mpi || operations_pending())
    return false;
  state.reported = true;
  if (const int code = MPI_Wait(&state.mpi, MPI_STATUS_IGNORE); code != MPI_SUCCESS)
    throw mpi_error(state.what, code);
  return true;
}

/// Runs the shared layer's pass when something of it is pending: a rank waiting here may hold a
/// contribution a peer waits for (on this comm or another).
void progress_pass() {
  if (operations_pending()) progress_operations();
}

/// Waits in passes until `done()`; throws peer_failure past the policy's timeout.
template <typename Done>
void wait_until(const wait_policy& policy, const char* what, Done&& done) {
  double start = 0;
  for (unsigned round = 0;; ++round) {
    progress_pass();
    if (done()) return;
    if (policy.timeout_seconds > 0 && round >= policy.spin_iterations) {
      const double now = monotonic_seconds();
      if (start == 0) start = now;
      if (now - start > policy.timeout_seconds) {
        throw peer_failure(std::string("cachecomm: waited more than ") +
                               std::to_string(policy.timeout_seconds) + " s for " + what +
                               " to complete (CACHECOMM_TIMEOUT): a peer never started it?",
                           -1);
      }
    }
    progress_back_off(round);
  }
}

}  // namespace
}  // namespace detail

using detail::request_state;

std::string_view to_string(nonblocking_path path) {
  switch (path) {
    case nonblocking_path::none: return "none";
    case nonblocking_path::local: return "local";
    case nonblocking_path::shared_memory: return "shared-memory";
    case nonblocking_path::system_mpi: return "system-mpi";
  }
  return "unknown";
}

collective_request::collective_request() noexcept = default;
collective_request::collective_request(std::unique_ptr<request_state> state) noexcept
    : m_state(std::move(state)) {}
collective_request::collective_request(collective_request&& other) noexcept = default;

collective_request& collective_request::operator=(collective_request&& other) noexcept {
  if (this != &other) {
    complete_before_release();
    m_state = std::move(other.m_state);
  }
  return *this;
}

collective_request::~collective_request() {
  complete_before_release();
}

void collective_request::complete_before_release() noexcept {
  if (!m_state || m_state->reported) return;
  // After MPI_Finalize nothing can complete it (the program broke MPI's rules); leave it.
  if (detail::mpi_finalized()) {
    (void)m_state.release();  // the shared layer may still point at it: never freed
    return;
  }
  try {
    wait();
  } catch (const usage_error& e) {
    // The collective finished (the ranks' calls differed): nothing is in flight any more.
    std::fprintf(stderr, "%s (reported by a request's destructor)\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "%s\ncachecomm: a request's destructor could not complete %s; its buffers are "
                 "still in use, so the job is aborted\n",
                 e.what(), m_state->what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

bool collective_request::test() {
  if (!m_state || m_state->reported) return true;
  detail::progress_pass();
  return detail::poll(*m_state);
}

void collective_request::wait() {
  if (!m_state || m_state->reported) return;
  request_state& state = *m_state;
  bool complete = false;
  detail::wait_until(state.policy, state.what, [&] {
    complete = detail::wait_in_mpi(state) || detail::poll(state);
    return complete;
  });
}

bool collective_request::active() const noexcept {
  return m_state && !m_state->reported;
}

nonblocking_path collective_request::path() const noexcept {
  return m_state ? m_state->path : nonblocking_path::none;
}

std::string_view collective_request::reason() const noexcept {
  return m_state ? std::string_view(m_state->reason) : std::string_view();
}

namespace {

/// Polls every active request once (after one pass); true when all are complete. The first
/// error (array order) goes to `first_error`; the others are still polled.
bool poll_all(std::span<collective_request> requests, std::exception_ptr& first_error) {
  detail::progress_pass();
  bool all = true;
  for (collective_request& r : requests) {
    if (!r.active()) continue;
    try {
      // test() runs a pass of its own only when something is pending: cheap next to the poll.
      if (!r.test()) all = false;
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  return all;
}

/// The first active request's policy (its comm's): a process's comms normally share one.
wait_policy policy_of(std::span<collective_request> requests) {
  for (const collective_request& r : requests) {
    if (r.active()) return r.state()->policy;
  }
  return {};
}

}  // namespace

void wait_all(std::span<collective_request> requests) {
  std::exception_ptr first_error;
  detail::wait_until(policy_of(requests), "wait_all", [&] {
    if (poll_all(requests, first_error)) return true;
    // What is left on the system MPI's path, once the shared layer has nothing pending.
    for (collective_request& r : requests) {
      if (!r.active() || r.path() != nonblocking_path::system_mpi || detail::operations_pending())
        continue;
      try {
        r.wait();  // MPI's own wait (wait_in_mpi)
      } catch (...) {
        if (!first_error) first_error = std::current_exception();
      }
    }
    return poll_all(requests, first_error);
  });
  if (first_error) std::rethrow_exception(first_error);
}

bool test_all(std::span<collective_request> requests) {
  std::exception_ptr first_error;
  const bool all = poll_all(requests, first_error);
  if (first_error) std::rethrow_exception(first_error);
  return all;
}

std::size_t wait_any(std::span<collective_request> requests) {
  bool any_active = false;
  for (const collective_request& r : requests) any_active = any_active || r.active();
  if (!any_active) return requests.size();
  std::size_t found = requests.size();
  detail::wait_until(policy_of(requests), "wait_any", [&] {
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].active() && requests[i].test()) {
        found = i;
        return true;
      }
    }
    return false;
  });
  return found;
}

}  // namespace cachecomm
