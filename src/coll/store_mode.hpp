// Per-rank choice between streaming and ordinary stores for the copies a rank stages into shared
// memory (gather-reduce), from the measured time of its own copies. The store mode changes where
// the staged lines go, never their bits, so each rank decides alone: no agreement, no deadlock.
//
// Why it must be measured: on a 2-core AMD EPYC VM, ordinary stores into a ring deeper than the
// reader's L2 ran at memory-copy speed in one vCPU placement (the lines left the reader's L2 and
// the write found them in the shared L3) and 4-5x slower in the other (every write waits for the
// other core again), while streaming stores keep their times in both; the placement changes from
// minute to minute and from process to process (docs/architecture.md, "Intel MPI's allreduce at 2
// ranks").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cachecomm::detail {

enum class store_mode : std::uint8_t { streaming = 0, ordinary = 1 };

/// gather-reduce walks its allreduce staging through the whole region, and chooses the store mode
/// per call, from this message size. At 32 KiB the deep ring cost more than it gave: OSU's per-call
/// allreduce on the EPYC VM took 8.5-14 us through it in either mode against 4.9-5.7 through two
/// positions per half (with streaming stores), while from 64 KiB it won (64 KiB 6.4-7.4 against
/// 8.0-15.1, 128 KiB 9.8-10.9 against 21.9-25.9).
inline constexpr std::size_t adaptive_store_min_bytes = 64U << 10;

[[nodiscard]] constexpr store_mode other_mode(store_mode mode) {
  return mode == store_mode::streaming ? store_mode::ordinary : store_mode::streaming;
}
[[nodiscard]] const char* to_string(store_mode mode);

/// The chooser's constants (a test may pass others).
struct store_mode_policy {
  /// Calls in the settled mode before the first probe of the other one.
  std::uint32_t first_probe_after = 16;
  /// Probe intervals double while probes confirm the settled mode, up to this many calls: a probe
  /// of the slow mode costs a few slow calls (1 MiB: ~3 x 400 us), at most ~1 % of the calls.
  std::uint32_t longest_probe_interval = 2048;
  /// Calls per probe; the median of their times is compared with the settled mode's.
  std::uint32_t probe_calls = 3;
  /// Switch when the other mode's median time is below this fraction of the settled one's, in a
  /// probe, or when the settled mode's recent median has become worse than the other mode's last
  /// known median by the same factor (the placement changed).
  double switch_below = 0.8;
};

/// One chooser: per call, mode() says which stores to use; record() takes that call's copy time
/// per KiB (any unit, as long as it is the same for both modes). A pure state machine: no clock.
class store_mode_chooser {
 public:
  /// Samples kept per mode; decisions use their median (one preempted call does not switch).
  static constexpr std::size_t window = 3;

  store_mode_chooser() : store_mode_chooser(store_mode_policy{}) {}
  /// Starting ordinary: the faster mode in the EPYC VM's usual state once the rings run through
  /// halves of twice the L2 (gather-reduce's staging at 1 MiB: 62-70 against 120-139 ns per KiB).
  explicit store_mode_chooser(store_mode_policy policy, store_mode start = store_mode::ordinary)
      : m_policy(policy),
        m_settled(start),
        m_until_probe(policy.first_probe_after),
        m_interval(policy.first_probe_after) {}

  /// The mode of the next call: the settled one, or the other while a probe runs.
  [[nodiscard]] store_mode mode() const {
    return m_probe_left > 0 ? other_mode(m_settled) : m_settled;
  }
  /// The mode the chooser keeps between probes.
  [[nodiscard]] store_mode settled() const { return m_settled; }
  /// Takes the copy time per KiB of the call just made in mode() and decides the next.
  void record(double cost_per_kib);

  /// Median of the recent samples of `mode` (0 when there are none yet).
  [[nodiscard]] double median_cost(store_mode mode) const;
  [[nodiscard]] std::uint64_t calls() const { return m_calls; }
  [[nodiscard]] std::uint32_t switches() const { return m_switches; }
  [[nodiscard]] std::uint32_t probes() const { return m_probes; }
  [[nodiscard]] std::uint32_t probe_interval() const { return m_interval; }

 private:
  struct samples {
    std::array<double, window> values{};
    std::size_t count = 0;  // samples taken (the last `window` are kept)
    void add(double value) { values[count++ % window] = value; }
    void clear() { count = 0; }
    [[nodiscard]] bool full() const { return count >= window; }
    [[nodiscard]] double median() const;
  };
  void switch_to(store_mode mode);

  store_mode_policy m_policy;
  store_mode m_settled;
  std::array<samples, 2> m_samples;  // indexed by store_mode
  std::uint32_t m_until_probe;       // settled calls before the next probe
  std::uint32_t m_interval;          // the current probe interval
  std::uint32_t m_probe_left = 0;    // calls left in the probe running
  std::uint64_t m_calls = 0;
  std::uint32_t m_switches = 0;
  std::uint32_t m_probes = 0;
};

/// How choosers split message sizes into classes: `quarters` (< 64 KiB, < 256 KiB, < 1 MiB,
/// more) or `octaves` (one per power of two from 16 KiB: < 32 KiB, < 64 KiB, ..., from 4 MiB), for
/// calls of a few microseconds whose times per KiB differ between neighbouring sizes.
enum class size_classes : std::uint8_t { quarters, octaves };

/// The choosers of one communicator's engine: one per message size class (copy times per KiB
/// differ with the size: a 32 KiB copy is mostly start-up, a 1 MiB one bandwidth), and the
/// conversion of the time stamp counter to nanoseconds for the report.
class store_mode_choosers {
 public:
  static constexpr std::size_t classes = 4;         // quarters
  static constexpr std::size_t octave_classes = 9;  // octaves
  /// `what` names the copies in the report; every chooser starts in `start` under `policy`.
  explicit store_mode_choosers(const char* what = "staging stores",
                               store_mode start = store_mode::ordinary,
                               store_mode_policy policy = {},
                               size_classes scheme = size_classes::quarters);
  [[nodiscard]] static std::size_t class_of(std::size_t message_bytes);
  [[nodiscard]] static std::size_t octave_of(std::size_t message_bytes);
  [[nodiscard]] store_mode_chooser& of(std::size_t message_bytes) {
    return m_choosers[m_scheme == size_classes::octaves ? octave_of(message_bytes)
                                                        : class_of(message_bytes)];
  }
  /// One line per size class used: the settled mode, both modes' median copy times and the
  /// switches and probes so far.
  [[nodiscard]] std::vector<std::string> report() const;

 private:
  const char* m_what;
  double m_switch_below;  // the policy's, for the report
  size_classes m_scheme;
  std::array<store_mode_chooser, octave_classes> m_choosers;  // the first `classes` in quarters
  std::uint64_t m_start_ticks = 0;
  std::int64_t m_start_nanoseconds = 0;
};

}  // namespace cachecomm::detail
