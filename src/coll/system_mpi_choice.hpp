// The system MPI as a candidate of every collective: where the automatic choice (a tuning file or
// a built-in rule, selection.hpp) says MPI's own call wins, the C++ API calls MPI on the comm's
// communicator and the preload library passes the program's call through (counted as mpi-faster).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"
#include "coll/tuning_table.hpp"

namespace cachecomm::detail {

/// Why the automatic choice gives this call (`bytes`: message bytes; allgather: one rank's block)
/// to the system MPI, or empty when cachecomm serves it. Builds the comm's collective state on
/// first use, so every rank of the comm must ask (as for any collective call).
[[nodiscard]] std::string_view system_mpi_choice(comm& c, tuned_op op, std::size_t bytes);

/// Before the system MPI carries out a call the automatic choice gave it: every node rank announces
/// the call and checks that the others announced the same, so that ranks whose arguments differ
/// fail at once (mismatch_error) instead of one waiting in MPI forever. Reductions pass their type
/// and operation; the others' are ignored.
void agree_before_system_call(comm& c, tuned_op op, std::size_t bytes,
                              datatype type = datatype::byte, reduce_op operation = reduce_op::sum);

/// What the automatic choice runs for one call (`bytes`: message bytes; allgather: one rank's
/// block): tuning_choices::system_mpi or an algorithm id of `op`'s registry. Forced choices, the
/// tuning file and the built-in rules decide as above; where none of the first two does, on a
/// one-node communicator with online selection on, the online selection (online_selection.hpp).
/// Every rank of the comm must ask, once per call, in the same calls: a trial call advances the
/// bucket's counter and may agree with the other node ranks. Reductions pass type and operation
/// (the handshake checks them); the others' are ignored.
struct automatic_plan {
  std::int8_t choice = 0;
  bool trial = false;    ///< time the call and hand the time to record_trial
  bool warm_up = false;  ///< an untimed call of online selection's trial (counted as one)
};
[[nodiscard]] automatic_plan plan_automatic_call(comm& c, tuned_op op, std::size_t bytes,
                                                 datatype type = datatype::byte,
                                                 reduce_op operation = reduce_op::sum);
/// This rank's time of a trial call that plan_automatic_call planned.
void record_trial(comm& c, tuned_op op, std::size_t bytes, std::uint64_t nanoseconds);

/// Times a trial call: started at construction, recorded by finish() (a call that throws records
/// nothing). Inactive (no clock read) when the plan is no trial.
class trial_timer {
 public:
  explicit trial_timer(bool active)
      : m_active(active), m_start(active ? clock::now() : clock::time_point{}) {}
  void finish(comm& c, tuned_op op, std::size_t bytes) const {
    if (!m_active) return;
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - m_start);
    record_trial(c, op, bytes, static_cast<std::uint64_t>(elapsed.count()));
  }

 private:
  using clock = std::chrono::steady_clock;
  bool m_active;
  clock::time_point m_start;
};

}  // namespace cachecomm::detail
