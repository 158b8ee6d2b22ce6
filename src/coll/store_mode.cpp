#include "coll/store_mode.hpp"

#include <x86intrin.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>

namespace cachecomm::detail {

const char* to_string(store_mode mode) {
  return mode == store_mode::streaming ? "streaming" : "ordinary";
}

double store_mode_chooser::samples::median() const {
  const std::size_t n = std::min(count, window);
  if (n == 0) return 0;
  std::array<double, window> sorted = values;
  std::sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n));
  return sorted[n / 2];
}

double store_mode_chooser::median_cost(store_mode mode) const {
  return m_samples[static_cast<std::size_t>(mode)].median();
}

void store_mode_chooser::switch_to(store_mode mode) {
  m_settled = mode;
  ++m_switches;
  // After a switch the next probe comes soon: the placement that caused it may change back.
  m_interval = m_policy.first_probe_after;
  m_until_probe = m_interval;
}

void store_mode_chooser::record(double cost_per_kib) {
  ++m_calls;
  const store_mode used = mode();
  m_samples[static_cast<std::size_t>(used)].add(cost_per_kib);
  const samples& settled = m_samples[static_cast<std::size_t>(m_settled)];
  const samples& other = m_samples[static_cast<std::size_t>(other_mode(m_settled))];
  if (m_probe_left > 0) {
    if (--m_probe_left > 0) return;
    // Probe over: both medians are fresh (the probe cleared the other mode's old samples).
    if (other.median() < m_policy.switch_below * settled.median()) {
      switch_to(other_mode(m_settled));
      return;
    }
    m_interval = std::min(m_interval * 2, m_policy.longest_probe_interval);
    m_until_probe = m_interval;
    return;
  }
  // The settled mode became slow (the placement changed): go back to the other mode when its last
  // known median is clearly better. Its samples stay, so the mode left is not taken back until the
  // new one is slower still, or a probe finds it faster.
  if (settled.full() && other.count > 0 &&
      other.median() < m_policy.switch_below * settled.median()) {
    switch_to(other_mode(m_settled));
    return;
  }
  if (m_until_probe > 0 && --m_until_probe > 0) return;
  m_probe_left = m_policy.probe_calls;
  ++m_probes;
  m_samples[static_cast<std::size_t>(other_mode(m_settled))].clear();
}

namespace {
std::int64_t steady_nanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

store_mode_choosers::store_mode_choosers(const char* what, store_mode start,
                                         store_mode_policy policy, size_classes scheme)
    : m_what(what),
      m_switch_below(policy.switch_below),
      m_scheme(scheme),
      m_start_ticks(__rdtsc()),
      m_start_nanoseconds(steady_nanoseconds()) {
  m_choosers.fill(store_mode_chooser(policy, start));
}

std::size_t store_mode_choosers::class_of(std::size_t message_bytes) {
  if (message_bytes < (64U << 10)) return 0;
  if (message_bytes < (256U << 10)) return 1;
  if (message_bytes < (1U << 20)) return 2;
  return 3;
}

std::size_t store_mode_choosers::octave_of(std::size_t message_bytes) {
  const auto octave = static_cast<std::size_t>(std::bit_width(message_bytes | 1U)) - 1;
  return std::clamp<std::size_t>(octave, 14, 14 + octave_classes - 1) - 14;
}

std::vector<std::string> store_mode_choosers::report() const {
  static constexpr std::array<const char*, classes> quarter_names = {"below 64 KiB", "64-256 KiB",
                                                                     "256 KiB-1 MiB", "from 1 MiB"};
  static constexpr std::array<const char*, octave_classes> octave_names = {
      "below 32 KiB",  "32-64 KiB", "64-128 KiB", "128-256 KiB", "256-512 KiB",
      "512 KiB-1 MiB", "1-2 MiB",   "2-4 MiB",    "from 4 MiB"};
  const bool octaves = m_scheme == size_classes::octaves;
  const double ticks = static_cast<double>(__rdtsc() - m_start_ticks);
  const auto nanoseconds = static_cast<double>(steady_nanoseconds() - m_start_nanoseconds);
  const double ns_per_tick = ticks > 0 && nanoseconds > 0 ? nanoseconds / ticks : 0;
  std::vector<std::string> lines;
  for (std::size_t c = 0; c < (octaves ? octave_classes : classes); ++c) {
    const store_mode_chooser& chooser = m_choosers[c];
    if (chooser.calls() == 0) continue;
    char line[320];
    std::snprintf(line, sizeof line,
                  "%s, messages %s: %s after %llu calls (time per KiB, median of the last %zu: "
                  "streaming %.0f ns, ordinary %.0f ns; %u switches, %u probes; a mode is taken "
                  "when it takes under %.0f %% of the other's time)",
                  m_what, octaves ? octave_names[c] : quarter_names[c],
                  to_string(chooser.settled()), static_cast<unsigned long long>(chooser.calls()),
                  store_mode_chooser::window,
                  chooser.median_cost(store_mode::streaming) * ns_per_tick,
                  chooser.median_cost(store_mode::ordinary) * ns_per_tick, chooser.switches(),
                  chooser.probes(), m_switch_below * 100);
    lines.emplace_back(line);
  }
  return lines;
}

}  // namespace cachecomm::detail
