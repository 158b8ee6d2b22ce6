// The one wait policy every shared-memory operation uses: poll with pause, then yield, then sleep
// on a process-shared futex; every wait checks that peers are alive and has a deadline.
#pragma once

#include <immintrin.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "cachecomm/wait_policy.hpp"
#include "shm/cache_line.hpp"
#include "sync/mpi_progress.hpp"
#include "sync/peer_monitor.hpp"

namespace cachecomm::detail {

/// Node-wide words the waiters share, each on its own line (lives in the node's control segment).
struct node_wait_area {
  padded_flag sleepers;  ///< ranks currently asleep on some futex; writers wake only when non-zero
  padded_flag failure;   ///< 0, or 1 + node rank of a peer found dead (so others stop at once)
};

/// Sequence numbers wrap; `a` has reached `b` when the signed distance is non-negative.
[[nodiscard]] inline bool sequence_reached(std::uint32_t value, std::uint32_t target) {
  return static_cast<std::int32_t>(value - target) >= 0;
}

inline void cpu_relax() {
  _mm_pause();
}

[[nodiscard]] inline std::uint32_t load_word(const std::uint32_t* word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Seconds on the monotonic clock (deadlines of waits).
[[nodiscard]] double monotonic_seconds();

/// What a wait also runs, now and then, once it has stopped spinning (never on the fast path):
/// the collectives look there for peers that are in a different call than this rank (an
/// erroneous program whose ranks took different paths would otherwise wait for the timeout).
/// `inspect` throws when the wait can never end; `ready` tells it whether the wait is over.
struct wait_check {
  using ready_function = bool (*)(void*);
  void (*inspect)(void* context, int waited_node_rank, ready_function ready,
                  void* ready_context) = nullptr;
  void* context = nullptr;
};

class waiter {
 public:
  waiter() = default;
  /// `node_to_comm_rank` names peers in errors by their rank in the user's communicator.
  waiter(wait_policy policy, node_wait_area* area, peer_monitor monitor, int self_node_rank,
         std::vector<int> node_to_comm_rank);

  /// Waits until `ready()` is true. `futex_word` is the 32-bit word whose change makes it true;
  /// `waited_node_rank` (or -1) and `what` name the wait in error messages; `check` (optional)
  /// runs in the slow phase only.
  template <typename Ready>
  void wait(const std::uint32_t* futex_word, Ready&& ready, int waited_node_rank, const char* what,
            const wait_check* check = nullptr) {
    if (ready()) return;
    for (unsigned poll = 0; poll < m_policy.spin_iterations; ++poll) {
      cpu_relax();
      if (ready()) return;
      if ((poll & progress_poll_mask) == progress_poll_mask && mpi_progress_requested()) {
        poke_mpi_progress();
      }
    }
    auto trampoline = [](void* context) {
      return (*static_cast<std::remove_reference_t<Ready>*>(context))();
    };
    slow_wait(futex_word, trampoline, &ready, waited_node_rank, what, check);
  }

  /// Waits until the sequence number in `word` reaches `target`.
  void wait_reach(const std::atomic<std::uint32_t>& word, std::uint32_t target,
                  int waited_node_rank, const char* what, const wait_check* check = nullptr) {
    const auto* raw = reinterpret_cast<const std::uint32_t*>(&word);
    wait(
        raw, [&] { return sequence_reached(word.load(std::memory_order_acquire), target); },
        waited_node_rank, what, check);
  }

  /// Stores `value` and wakes any sleeper on `word`. The store is sequentially consistent so
  /// that it cannot pass the read of the sleeper count (a Dekker pair with the sleeper's side).
  void publish(std::atomic<std::uint32_t>& word, std::uint32_t value) {
    word.store(value, std::memory_order_seq_cst);
    wake(reinterpret_cast<const std::uint32_t*>(&word));
  }
  /// As publish(), without the full fence when ranks spin: the store is a release store, so the
  /// core does not stall until it owns the line (on the hot path of a broadcast root and of every
  /// reader finishing a step, that stall was most of the call). Without the fence, a rank that goes
  /// to sleep on `word` at the same instant may miss this wake; it then sleeps until its futex
  /// timeout and re-checks. When spinning, ranks sleep only after milliseconds of polling, so that
  /// rare, bounded delay is the price; the other wait modes sleep early and keep the fence.
  void publish_lazy(std::atomic<std::uint32_t>& word, std::uint32_t value) {
    word.store(value, std::memory_order_release);
    wake_lazy(reinterpret_cast<const std::uint32_t*>(&word));
  }
  /// Wakes sleepers on `word` after a release store to it, with publish_lazy's trade-off: the full
  /// fence of the Dekker pair only when the wait mode sleeps early.
  void wake_lazy(const std::uint32_t* word) {
    if (!m_policy.spinning) std::atomic_thread_fence(std::memory_order_seq_cst);
    if (m_area->sleepers.value.load(std::memory_order_relaxed) != 0) wake_slow(word);
  }
  /// Stores `value` into `word`, and when some rank sleeps, advances `bell` and wakes its sleepers:
  /// for data a receiver may find in one of several places, all of which ring the same bell. A
  /// sleeper on `bell` reads it after announcing itself and before checking readiness, so it either
  /// sees `value` or finds `bell` changed (futex_wait then returns at once).
  void publish_and_ring(std::atomic<std::uint32_t>& word, std::uint32_t value,
                        std::atomic<std::uint32_t>& bell) {
    word.store(value, std::memory_order_seq_cst);
    if (m_area->sleepers.value.load(std::memory_order_seq_cst) != 0) {
      bell.fetch_add(1, std::memory_order_seq_cst);
      wake_slow(reinterpret_cast<const std::uint32_t*>(&bell));
    }
  }
  /// Wakes sleepers on `word` after a sequentially consistent write to it (or to a byte within it).
  void wake(const std::uint32_t* word) {
    if (m_area->sleepers.value.load(std::memory_order_seq_cst) != 0) wake_slow(word);
  }

  [[nodiscard]] const wait_policy& policy() const { return m_policy; }
  /// Throws peer_failure if a peer on this node has died (also used before collective set-up).
  void check_peers(const char* what) const;

 private:
  /// Spinning waits poke MPI's progress engine (when asked to) once per this many + 1 polls. Not
  /// 255 (until session 25): a passive-target put moves a chunk per turn of the target's engine,
  /// and IMB-RMA's Unidir_put of 64-512 KiB under MPICH 5 took 10-20x plain's time with the
  /// target in a served barrier (15: as plain; 0, every poll: no faster).
  static constexpr unsigned progress_poll_mask = 15;

  using ready_function = wait_check::ready_function;
  void slow_wait(const std::uint32_t* futex_word, ready_function ready, void* context,
                 int waited_node_rank, const char* what, const wait_check* check);
  void wake_slow(const std::uint32_t* word);
  [[noreturn]] void fail_dead_peer(int dead_node_rank, const char* what) const;
  [[nodiscard]] std::string describe_rank(int node_rank) const;

  wait_policy m_policy;
  node_wait_area* m_area = nullptr;
  peer_monitor m_monitor;
  int m_self = 0;
  std::vector<int> m_node_to_comm_rank;
};

}  // namespace cachecomm::detail
