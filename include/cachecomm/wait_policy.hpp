// How a rank waits for its peers: spin, yield, then sleep on a shared futex.
#pragma once

#include <string>
#include <string_view>

namespace cachecomm {

enum class wait_mode {
  automatic,  ///< spin when every rank has a core, yield first when the node is oversubscribed
  spin,       ///< spin with pause for a long while before yielding and then sleeping
  yield,      ///< yield the core almost at once, then sleep
  sleep,      ///< go to sleep on the futex almost at once (lowest CPU use, highest latency)
};

[[nodiscard]] std::string_view to_string(wait_mode mode);
/// Parses "auto", "spin", "yield", "sleep"; throws invalid_argument otherwise.
[[nodiscard]] wait_mode parse_wait_mode(std::string_view text);

/// The resolved parameters every wait of a communicator uses.
struct wait_policy {
  wait_mode mode = wait_mode::automatic;  ///< as requested
  bool spinning = true;                   ///< resolved: spin phase enabled
  unsigned spin_iterations = 0;           ///< pause-loop polls before yielding
  unsigned yield_iterations = 0;          ///< sched_yield polls before sleeping
  double timeout_seconds = 0;             ///< a wait longer than this is an error (0: never)
  double liveness_interval_seconds = 0;   ///< how often a sleeping waiter checks peers are alive
};

/// While enabled, every cachecomm wait in this process also turns MPI's progress engine now and
/// then (and sleeps only briefly). A program needs this when it has MPI traffic that completes only
/// while the target rank is inside MPI (passive-target RMA under MPICH, Open MPI's point-to-point
/// windows) and that rank may be waiting in cachecomm meanwhile. Counted: each enable needs one
/// disable. The preload library turns it on while the program holds MPI windows of its own.
void drive_mpi_progress_while_waiting(bool enabled);

}  // namespace cachecomm
