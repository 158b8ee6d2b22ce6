#include "sync/waiter.hpp"

#include <sched.h>
#include <unistd.h>

#include <ctime>

#include "cachecomm/config.hpp"
#include "cachecomm/error.hpp"
#include "sync/futex.hpp"

namespace cachecomm {

std::string_view to_string(wait_mode mode) {
  switch (mode) {
    case wait_mode::automatic: return "auto";
    case wait_mode::spin: return "spin";
    case wait_mode::yield: return "yield";
    case wait_mode::sleep: return "sleep";
  }
  return "?";
}

wait_mode parse_wait_mode(std::string_view text) {
  if (text == "auto") return wait_mode::automatic;
  if (text == "spin") return wait_mode::spin;
  if (text == "yield") return wait_mode::yield;
  if (text == "sleep") return wait_mode::sleep;
  throw invalid_argument("cachecomm: CACHECOMM_WAIT='" + std::string(text) +
                         "' is not one of auto, spin, yield, sleep");
}

namespace detail {

double monotonic_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

namespace {

// The sleep is bounded so that a sleeper re-checks liveness and its deadline regularly; while MPI
// progress is requested a wait does not reach the sleep (slow_wait), but one that went to sleep
// just before it was requested sleeps briefly.
constexpr long futex_timeout_ns = 20'000'000;
constexpr long progress_futex_timeout_ns = 200'000;

}  // namespace

waiter::waiter(wait_policy policy, node_wait_area* area, peer_monitor monitor, int self_node_rank,
               std::vector<int> node_to_comm_rank)
    : m_policy(policy),
      m_area(area),
      m_monitor(std::move(monitor)),
      m_self(self_node_rank),
      m_node_to_comm_rank(std::move(node_to_comm_rank)) {}

std::string waiter::describe_rank(int node_rank) const {
  if (node_rank < 0 || static_cast<std::size_t>(node_rank) >= m_node_to_comm_rank.size()) {
    return "a peer";
  }
  return "rank " + std::to_string(m_node_to_comm_rank[static_cast<std::size_t>(node_rank)]) +
         " (pid " + std::to_string(m_monitor.pid_of(node_rank)) + ")";
}

void waiter::fail_dead_peer(int dead_node_rank, const char* what) const {
  std::uint32_t expected = 0;
  const_cast<node_wait_area*>(m_area)->failure.value.compare_exchange_strong(
      expected, static_cast<std::uint32_t>(dead_node_rank) + 1);
  int comm_rank = m_node_to_comm_rank.at(static_cast<std::size_t>(dead_node_rank));
  throw peer_failure("cachecomm: " + describe_rank(dead_node_rank) + " died while " +
                         describe_rank(m_self) + " waited in " + what,
                     comm_rank);
}

void waiter::check_peers(const char* what) const {
  std::uint32_t failed = m_area->failure.value.load(std::memory_order_acquire);
  if (failed != 0) fail_dead_peer(static_cast<int>(failed) - 1, what);
  int dead = m_monitor.find_dead_peer();
  if (dead >= 0) fail_dead_peer(dead, what);
}

void waiter::slow_wait(const std::uint32_t* futex_word, ready_function ready, void* context,
                       int waited_node_rank, const char* what, const wait_check* check) {
  const double start = monotonic_seconds();
  double next_liveness_check = start + m_policy.liveness_interval_seconds;
  auto check_time = [&](double now) {
    if (now >= next_liveness_check) {
      check_peers(what);
      next_liveness_check = now + m_policy.liveness_interval_seconds;
    }
    if (m_policy.timeout_seconds > 0 && now - start > m_policy.timeout_seconds) {
      int comm_rank = waited_node_rank >= 0
                          ? m_node_to_comm_rank.at(static_cast<std::size_t>(waited_node_rank))
                          : -1;
      throw peer_failure("cachecomm: " + describe_rank(m_self) + " waited more than " +
                             std::to_string(m_policy.timeout_seconds) + " s for " +
                             describe_rank(waited_node_rank) + " in " + what +
                             " (alive but not arriving: mismatched calls? raise CACHECOMM_TIMEOUT)",
                         comm_rank);
    }
  };

  // Not at once: oversubscribed ranks come here on most waits, and reading the peers' lines would
  // take them from their owners, which write them on every call.
  auto run_check = [&] {
    if (check != nullptr) check->inspect(check->context, waited_node_rank, ready, context);
  };
  // While MPI progress is requested the yielding goes on without end, no futex sleep: each sleep
  // let a passive-target put wait for its end, one chunk per sleep (IMB-RMA's Unidir_put of 4 MiB
  // under MPICH 5, target in a served barrier: 72 ms against 0.3 plain). MPI's own waits poll its
  // progress engine just so.
  for (unsigned round = 0; round < m_policy.yield_iterations || mpi_progress_requested(); ++round) {
    ::sched_yield();
    if (ready(context)) return;
    if (mpi_progress_requested()) poke_mpi_progress();
    run_wait_side_work();
    if ((round & 63U) == 63U) {
      check_time(monotonic_seconds());
      run_check();
    }
  }
  check_peers(what);
  while (true) {
    m_area->sleepers.value.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t seen = __atomic_load_n(futex_word, __ATOMIC_SEQ_CST);
    if (ready(context)) {
      m_area->sleepers.value.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
    const bool drive_progress = mpi_progress_requested();
    futex_wait(futex_word, seen, drive_progress ? progress_futex_timeout_ns : futex_timeout_ns);
    m_area->sleepers.value.fetch_sub(1, std::memory_order_seq_cst);
    if (ready(context)) return;
    if (drive_progress) poke_mpi_progress();
    run_wait_side_work();
    check_time(monotonic_seconds());
    run_check();
  }
}

void waiter::wake_slow(const std::uint32_t* word) {
  futex_wake_all(word);
}

}  // namespace detail
}  // namespace cachecomm
