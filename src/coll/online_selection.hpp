// Online selection (issue 12, item 4): where neither a tuning file nor a forced choice decides an
// (operation, size bucket) of a one-node communicator, its first calls try the candidates in turn
// (the registry's algorithms that run as themselves on the node, and the system MPI's own call),
// time them, agree on the fastest and keep it for the life of the communicator.
//
// Lockstep without messages: every rank calls a comm's collectives in the same order with the same
// byte count, so a per-(operation, bucket) call counter is the same on every rank and so is the
// candidate it names. The only data the ranks exchange are their timings, at a few handshakes
// (through shared memory, coll_engine::agree_on_trial); everything decided from them is computed
// by every rank from the same numbers, so every rank takes the same decision.
//
// Comparisons in blocks: the rounds alternate candidates, and what a call leaves behind can make
// the next one look 2x faster or slower than it runs in a loop (Intel MPI's allgather of 16 KiB:
// 3.4 us in the rounds, 8.2 us settled, against 3.2 for cachecomm's central, which then ran at 3.0;
// a pair's gatherv of 1 MiB: the region path 163-294 us in the rounds, 66-72 settled). So the
// rounds end in a confirmation: their winner and its closest rival each run a block of consecutive
// calls, as a loop runs them, and the block's mean decides, its slowest call left out
// (comparison_calls, block_figure): what a loop of those calls pays.
//
// Re-checks: a settled bucket is compared again the same way, rarely (after recheck_first_calls
// more calls, then after recheck_growth times as many each time), between its choice and the
// runner-up only, and only where the two give the same bytes (a reduction never swaps the system
// MPI's call for a rank-order algorithm or back), so a re-check can change how long a call takes,
// never its result. It catches a trial that the VM's placement, a first touch or an oversubscribed
// scheduler misled. The confirmation may cross that line: the bucket is not settled before it ends.
//
// An MPI still warming up: where the system MPI's call lost a comparison on its block's mean but
// its block's lower quartile was clearly faster than the choice (a few slow calls in a fast
// series, as Intel MPI 2021 runs the first few hundred calls of an operation), the bucket's first
// re-check, after recheck_first_calls more calls (a long-running program), runs recheck_warm_calls
// untimed calls of MPI's before its block, once per operation: a short program keeps what its
// calls cost now, a long one gets the MPI's call if it is faster once warm.
//
// The key is (operation, power-of-two size bucket): whether the caller's buffers are in cache
// cannot be known per call, so both share a bucket (a loop reusing its buffers measures hot).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "coll/tuning_table.hpp"

namespace cachecomm::detail {

/// Why an (operation, size bucket) of a communicator takes its algorithm.
enum class choice_source : std::uint8_t {
  unused,       ///< no call of this bucket yet
  builtin,      ///< the built-in rules (online selection off or not possible here)
  tuning_file,  ///< the node's tuning file
  forced,       ///< CACHECOMM_<OP>
  trial,        ///< online selection still trying candidates
  online,       ///< measured online on this communicator
};

/// CACHECOMM_ONLINE_SELECTION: which calls online selection decides.
enum class online_mode : std::uint8_t {
  off,        ///< none: the tuning file or the built-in rules
  automatic,  ///< the default: messages from online_selector::automatic_min_bytes
  on,         ///< every size
};

/// CACHECOMM_ONLINE_METRIC: what "fastest" means when online selection compares candidates.
enum class online_metric : std::uint8_t {
  slowest,  ///< the slowest node rank's time (the default: everyone has the data)
  /// The average node rank's time in the call (what OSU and IMB's t_avg report, and the time the
  /// ranks together spend in the call), among the candidates whose slowest rank is within
  /// online_selector::slowest_margin_percent of the best slowest rank.
  average,
};

/// What the ranks agree on for one candidate: its best call as the slowest rank and as the
/// average rank saw it (ns; online_selector::no_time where a rank has none).
struct trial_view {
  std::uint64_t slowest = ~std::uint64_t{0};
  std::uint64_t average = ~std::uint64_t{0};
};

/// One candidate's agreed time (ns): by the metric (estimate) and the slowest rank's.
struct agreed_time {
  std::uint64_t estimate = ~std::uint64_t{0};
  std::uint64_t slowest = ~std::uint64_t{0};
};

/// What one call runs: an algorithm id of the operation's registry, or tuning_choices::system_mpi.
struct online_plan {
  std::int8_t choice = tuning_choices::none;
  bool trial = false;    ///< a sample of the trial: time the call and pass it to record()
  bool warm_up = false;  ///< an untimed trial call before a sample (warm_calls_per_sample)
};

class online_selector {
 public:
  /// Calls of each candidate, one per round (each rank keeps its best; the ranks agree on the
  /// slowest and the average of those). Round 0 runs the candidates in the registry's order, the
  /// built-in choice first; every later round in a new order, the same on every rank, so no
  /// candidate always follows the same one (what a call leaves behind, MPI's spinning or lines in
  /// the other core's cache, weighed on the next one: up to 1.8x in cachecomm-bench with a fixed
  /// order).
  static constexpr unsigned samples_per_candidate = 3;
  /// A candidate whose best of its first prune_after_calls calls (the second one warmed) took
  /// more than this many times the fastest candidate's (at the slowest rank) gets no more calls:
  /// the confirmation would not compare it with the winner anyway (confirm_rival_factor). Not 4
  /// (until session 21): the candidates 2-4x behind ran every round, and OSU's and a back-to-back
  /// loop's 60-110 calls of a large size carried them (broadcast of 128-512 KiB at 2 ranks: 53
  /// trial calls, tree, slots and double-buffer 2.5-3x single copy's time in each of their 5; the
  /// loop took 2x what single copy takes).
  static constexpr std::uint64_t prune_factor = 2;
  /// Where the fastest candidate's call takes large_call_ns or more (mostly bytes moved, not the
  /// few microseconds of set-up in which the candidates differ), one of cachecomm's own algorithms
  /// more than this many percent of its time after prune_after_calls calls gets no more: each of
  /// its trial calls costs the program tens of microseconds. Programs that make few calls of each
  /// large size pay for the trial most (a back-to-back loop of 59 calls of 4 MiB, 46 of them in
  /// the trial, under Intel MPI: single copy and central at 1.7-1.8x the ring's 77 us ran five
  /// calls each, session 26). The system MPI's call keeps prune_factor (its first calls of a size
  /// run slow).
  static constexpr std::uint64_t large_call_ns = 20'000;
  static constexpr std::uint64_t large_call_prune_percent = 150;
  /// One of cachecomm's own algorithms whose first call took more than this many times the
  /// fastest candidate's gets no second. On a 16-core Xeon at 16 ranks the single-copy broadcast
  /// took 8-12x the double-buffer's time at 16 KiB-8 MiB (every reader pins the root's pages) and
  /// kept its second call, and the trial of each broadcast bucket cost OSU's 110 calls of a size
  /// 10-25 % (osu_bcast 16 KiB-1 MiB at 0.76-0.89x plain Intel MPI, preloaded). cachecomm's first
  /// calls carry no set-up of that size (the rules' choice, run first, takes the communicator's
  /// and is never pruned); 8x, not prune_factor, since a call timed right after another
  /// candidate's took up to 4.1x its settled time (a pair's gatherv of 1 MiB through the region:
  /// 163-294 us against 66-72 settled). The system MPI's first call: early_prune_factor.
  static constexpr std::uint64_t own_first_call_prune_factor = 8;
  /// The system MPI's call gets two calls before prune_factor applies, not one: its first call of
  /// a size can take 10-30x its steady time (Intel MPI 2021's broadcast at 1 MiB: 1.5 ms, then
  /// 90-130 us; MPICH 5's at 256 KiB: 5-10x), and a candidate pruned on that lost a bucket it
  /// would have won (osu_bcast 1-4 MiB 0.74-0.82x plain Intel MPI, preloaded). Must not exceed
  /// samples_per_candidate.
  static constexpr unsigned prune_after_calls = 2;
  /// From the second round on, each timed call of a candidate follows this many untimed calls of
  /// the same candidate, so that it is timed as a loop runs it, after itself, not after another
  /// candidate: alternating candidates, the trial measured 1.5-2.5x the settled calls (osu_gatherv
  /// at 1 MiB under Intel MPI, 2 ranks: region 163-294 us against 66-72 settled, so the rules'
  /// pull at 175 stayed in 2 jobs of 4; MPI's own calls 2-3x). Round 0 stays unwarmed: its early
  /// prune needs no precision, and it spares an oversubscribed node a second call of an MPI that
  /// spins (early_prune_factor).
  static constexpr unsigned warm_calls_per_sample = 1;

  /// After the first call, the system MPI's call is dropped only when this many times slower than
  /// the fastest: beyond any first-call effect seen (10-30x), and it spares the program the second
  /// call of an MPI that spins on an oversubscribed node (MPICH 5's own reduce of 64 KiB at 8 ranks
  /// on 2 cores: 0.33 s a call).
  static constexpr std::uint64_t early_prune_factor = 64;
  /// On an oversubscribed node (online selection forced `on` there: automatic_off_here) the first
  /// call prunes at prune_factor instead: there every trial
  /// call of a slow candidate costs whole scheduler slices (Open MPI 4.1's broadcast of 16-64 KiB
  /// at 4 ranks on 2 cores: 20-30 us a call, single copy and the tree 14-29, against 0.7-4.6 for
  /// the central and double-buffer broadcasts), and an OSU run of 20-100 calls a size paid two
  /// calls of each: 2x slower preloaded than settled. An MPI's slow first call (the reason for
  /// early_prune_factor) does not matter there: MPIs that spin lose oversubscribed anyway.
  static constexpr std::uint64_t oversubscribed_first_prune_factor = 4;
  /// A bucket's trial skips the candidates of cachecomm's own that the next smaller bucket's trial
  /// pruned at least inherit_factor times behind its fastest, where that fastest call took at
  /// least inherit_min_ns, and that the bucket below that pruned too: a trial prunes on two calls,
  /// and a passing slowdown made central and single copy 5x slower than MPI's gather in them at 1-2
  /// MiB (Intel MPI, 2 ranks), where central had been the fastest at 512 KiB-1 MiB (22-28 us). A
  /// call of 20 us or more is mostly bytes moved, not the few microseconds of set-up (a handshake,
  /// a system call) in which the candidates differ. Programs that make few calls of each large size
  /// paid for hopeless candidates most: IMB runs 10-40 calls of 1-4 MiB, all of them inside the
  /// trial (about 40 calls a bucket), and preloaded Intel MPI broadcast 4 MiB at 0.80x plain (hot),
  /// double-buffer and tree at 3-4x the fastest tried twice in every bucket. 3x, not prune_factor:
  /// the ranking still moves as the data leaves the cache (Intel MPI's gatherv trial, 2 ranks:
  /// central 2.6x single copy's time at 256-512 KiB, 0.5-0.7x of it at 1-4 MiB; skipped from 512
  /// KiB, IMB's 4 MiB gatherv went from 0.69x plain to 0.58x). The system MPI's call is never
  /// skipped: an MPI changes protocol with the size (Intel MPI's gatherv: 536 us at 512 KiB-1 MiB,
  /// 75 us at 1-2 MiB).
  static constexpr std::uint64_t inherit_min_ns = 20'000;
  static constexpr std::uint64_t inherit_factor = 3;
  /// Another candidate replaces the rules' choice only if its estimate is this many percent lower.
  static constexpr std::uint64_t switch_margin_percent = 10;
  /// online_metric::average: a candidate competes only while its slowest rank is at most this many
  /// percent behind the best slowest rank. A broadcast whose root leaves once it has copied in
  /// (central) lowers the average of 2 ranks while its reader is a little slower than single
  /// copy's; a candidate whose readers lag far behind its root would only move the wait into the
  /// program's next dependent step.
  static constexpr std::uint64_t slowest_margin_percent = 25;
  static constexpr std::size_t max_candidates = 8;
  /// Timed calls of each of the two candidates in a comparison (the trial's confirmation, a
  /// re-check), one block after the other, each after one untimed call (a warming re-check's
  /// second block: recheck_warm_calls); each rank takes its block's block_figure.
  static constexpr unsigned comparison_calls = 8;
  /// What stands for a block of calls: the mean of all but the slowest, what a loop of those calls
  /// pays (one preempted call left out). Not a quantile: Intel MPI 2021 runs its first ~300-600
  /// calls of an operation (counted over all sizes) with two slow calls in every eight, 6-25 us
  /// against 2.0-2.5 for an allgather of 16-32 KiB, and the preloaded program meets those calls
  /// where cachecomm served the smaller sizes; the block's lower quartile (2.5 us) hid them, kept
  /// MPI's call and cost the loop its mean: back to back 7.8-8.6 us a call against central's
  /// 2.8-4.2 and plain Intel MPI's 2.5-3.7 (allreduce of 16 KiB: 7.6-8.2 against 2.1-2.3 plain).
  [[nodiscard]] static std::uint64_t block_figure(
      std::array<std::uint64_t, comparison_calls> block);
  /// The trial's closest rival is confirmed against its winner only when its estimate is at most
  /// this many times the winner's: the rounds misjudged candidates by up to 2.5x.
  static constexpr std::uint64_t confirm_rival_factor = 2;
  /// Calls of a bucket's trial at most: every round of every candidate, with the warm-up calls,
  /// and the confirmation's two blocks.
  static constexpr std::size_t max_trial_calls =
      max_candidates *
          (samples_per_candidate + (samples_per_candidate - 1) * warm_calls_per_sample) +
      std::size_t{2} * (1 + comparison_calls);
  static constexpr std::size_t buckets = tuning_choices::buckets;
  /// A sample that failed or was never timed.
  static constexpr std::uint64_t no_time = ~std::uint64_t{0};

  /// One value per candidate of a handshake (the first `count` used), and what the ranks agreed.
  using trial_values = std::array<std::uint64_t, max_candidates>;
  using trial_views = std::array<trial_view, max_candidates>;
  /// The handshake: every node rank calls it at the same point of the same call with its own
  /// values, one per candidate the handshake is about; returns for each the largest and the
  /// average value of all node ranks (no_time from any rank makes both no_time). One handshake
  /// per agreement, not one per candidate: each costs the call lines' round trip between the ranks
  /// (0.2-0.5 us on the 2-core EPYC VM), and at 16 KiB the trial's 20 of them were a third of what
  /// it cost OSU's broadcast (0.4 us calls; session 27). `parity` alternates with every handshake
  /// of the selector, so a rank that runs ahead into the next one does not overwrite values still
  /// being read (it cannot reach the one after before every rank has announced the next).
  using agree_function =
      std::function<trial_views(const trial_values& mine, std::size_t count, unsigned parity)>;

  /// Where online selection decides by default (`auto`): from this many bytes (one rank's block for
  /// the block collectives). Below it a call takes a microsecond or less, and a trial call times
  /// mostly what the candidate before it left behind: at 16 ranks on a 16-core Xeon the slot
  /// broadcast measured 12-52 us during the trial and 0.3 us once settled, so 1-8 B broadcasts
  /// settled on the system MPI, 1.5-4x slower than the rules. From here a wrong built-in constant
  /// is what cost most (osu_bcast 32-512 KiB up to 11x slower on a node the rules were not
  /// measured on), and a call is long enough to time.
  static constexpr std::size_t automatic_min_bytes = std::size_t{16} << 10;

  /// Pacing (CACHECOMM_ONLINE_BUDGET): where the leader's call takes paced_min_ns or more, before
  /// the trial's last round and before its confirmation the bucket runs its leader (the rules'
  /// choice, or a candidate the first two rounds found clearly faster) for as many untimed calls
  /// as keep that phase's extra cost (what its calls of slower candidates take beyond as many
  /// calls of the leader, by the agreed times) under this many percent of those calls' time.
  /// Programs that make few calls of each large size paid for the trial most: OSU makes 110 of a
  /// size, IMB 10-40 from 1 MiB, and the trial's 34-48 calls of candidates up to 2x behind cost
  /// allgathers of 2-4 MiB 5-12 % (OSU at 2 ranks, session 27: 1.45-1.86x plain paced against
  /// 1.39-1.66x back to back under Open MPI 4.1 and 5 and Intel MPI; 512 KiB-1 MiB within the
  /// spread). Only long calls: those are
  /// mostly bytes moved, so the first two rounds rank the candidates as a loop runs them; shorter
  /// ones are misjudged by up to 2.5x there (what the confirmation is for), and a pause on such a
  /// leader lost the broadcast of 64 KiB 30-40 % (double-buffer, slots or the ring, whichever two
  /// calls favoured). Rounds 0 and 1 run back to back: they find the leader, and the prune after
  /// them drops the candidates more than 2x behind. A short run then keeps the leader and pays at
  /// most the budget for the rest; a long one settles after a few dozen more calls.
  static constexpr unsigned default_budget_percent = 5;
  static constexpr std::uint64_t paced_min_ns = large_call_ns;
  /// The first round a pause precedes.
  static constexpr unsigned first_paced_round = 2;
  /// The longest pause (a small budget with many candidates).
  static constexpr std::uint32_t max_pause_calls = 1024;
  /// Calls of a bucket before it settles at most, paced: the trial's calls and a pause before each
  /// paced round and before the confirmation.
  static constexpr std::size_t max_paced_trial_calls =
      max_trial_calls +
      std::size_t{samples_per_candidate - first_paced_round + 1} * max_pause_calls;

  /// A settled bucket is re-checked after this many more calls...
  static constexpr std::uint64_t recheck_first_calls = 1024;
  /// ...and each later re-check after this many times as many calls as the one before.
  static constexpr std::uint64_t recheck_growth = 8;
  /// Untimed calls of the system MPI's before its block in a warming re-check (see above): Intel
  /// MPI 2021's allgather still had two slow calls in eight after 100 calls of the operation, few
  /// after 300 and none after 600 (the trial and the confirmation make 10-15 of them).
  static constexpr unsigned recheck_warm_calls = 512;

  /// `budget_percent`: pacing (0: none, the rounds back to back).
  explicit online_selector(online_mode mode = online_mode::off, bool recheck = true,
                           online_metric metric = online_metric::slowest,
                           bool oversubscribed = false, unsigned budget_percent = 0)
      : m_mode(mode),
        m_recheck(recheck),
        m_metric(metric),
        m_oversubscribed(oversubscribed),
        m_budget_percent(budget_percent) {}

  [[nodiscard]] online_mode mode() const { return m_mode; }
  /// Whether `auto` leaves every size to the rules here: on an oversubscribed node a trial costs
  /// more than it can gain. Every trial call of a slow candidate takes whole scheduler slices, the
  /// trial outlasted OSU's 25 calls a size, and the rules were faster than both the trial and
  /// plain Open MPI 4.1 at every size (4 ranks on 2 cores, OSU -i 20: broadcast 256 KiB-4 MiB
  /// 24-958 us by the rules, 62-2158 with the trial, 59-2300 plain; allreduce 103-3292, 219-2797,
  /// 249-6122), while the trial only ever kept the rules' choice or a close one: every MPI spins
  /// or yields there (Intel MPI's allgather at 4 ranks: 1.9-4.2 ms a call).
  [[nodiscard]] bool automatic_off_here() const {
    return m_mode == online_mode::automatic && m_oversubscribed;
  }
  /// Whether settled buckets are re-checked (CACHECOMM_ONLINE_RECHECK).
  [[nodiscard]] bool rechecks() const { return m_recheck; }
  /// Whether online selection decides calls of `bytes` (where nothing forced or tuned decides).
  [[nodiscard]] bool decides(std::size_t bytes) const {
    return m_mode == online_mode::on ||
           (m_mode == online_mode::automatic && !m_oversubscribed && bytes >= automatic_min_bytes);
  }

  /// The settled choice of the bucket of `bytes`, or tuning_choices::none (what explain_* says).
  [[nodiscard]] std::int8_t settled(tuned_op op, std::size_t bytes) const {
    const bucket_state& state = at(op, bytes);
    return state.source == choice_source::online ? state.chosen : tuning_choices::none;
  }
  /// The candidate a settled bucket's re-checks measure beside its choice, or tuning_choices::none
  /// where none is planned (re-checks off, or no other unpruned candidate gives the same result).
  [[nodiscard]] std::int8_t runner_up(tuned_op op, std::size_t bytes) const {
    const bucket_state& state = at(op, bytes);
    return state.source == choice_source::online && state.recheck_at != 0
               ? state.candidates[state.runner_up]
               : tuning_choices::none;
  }
  /// The fast path of a call: the settled choice of the bucket of `bytes`, counted as one call of
  /// it, or tuning_choices::none where the bucket is not settled or a re-check is due or running
  /// (then plan() says what the call runs).
  [[nodiscard]] std::int8_t settled_call(tuned_op op, std::size_t bytes) {
    bucket_state& state = at(op, bytes);
    if (state.source != choice_source::online || state.comparing) return tuning_choices::none;
    return recheck_due(state) ? tuning_choices::none : state.chosen;
  }

  /// The choice of a call online selection decides. `candidates` is called once per bucket (its
  /// first call): the built-in choice first (the baseline the others are pruned against), no
  /// duplicates, at most max_candidates. `agree` is called only at handshakes.
  [[nodiscard]] online_plan plan(tuned_op op, std::size_t bytes,
                                 const std::function<std::vector<std::int8_t>()>& candidates,
                                 const agree_function& agree);
  /// This rank's time of the trial call plan() just returned for the bucket of `bytes`.
  void record(tuned_op op, std::size_t bytes, std::uint64_t nanoseconds);

  /// Notes a call that something other than online selection decided (for the report: the first
  /// call of each bucket).
  void note(tuned_op op, std::size_t bytes, choice_source source, std::int8_t choice) {
    bucket_state& state = at(op, bytes);
    if (state.source == choice_source::unused) {
      state.source = source;
      state.chosen = choice;
    }
  }

  /// The choice a call of exactly `bytes` got from the tuning file or the built-in rules the last
  /// time (tuning_choices::none: not this size). Those are a pure function of the size on one
  /// communicator, and loops repeat one size, so a repeated call skips the selection.
  [[nodiscard]] std::int8_t remembered_rule(tuned_op op, std::size_t bytes) const {
    const rule_memo& memo = m_rule_memo[static_cast<std::size_t>(op)];
    return memo.bytes == bytes ? memo.choice : tuning_choices::none;
  }
  void remember_rule(tuned_op op, std::size_t bytes, std::int8_t choice) {
    m_rule_memo[static_cast<std::size_t>(op)] = {bytes, choice};
  }

  /// One line per bucket called so far: "bcast 64 KiB: double-buffer (measured online: ...)".
  [[nodiscard]] std::vector<std::string> report() const;
  /// The report line of the bucket of `bytes` (empty while unused).
  [[nodiscard]] std::string describe(tuned_op op, std::size_t bytes) const;
  [[nodiscard]] choice_source source_of(tuned_op op, std::size_t bytes) const {
    return at(op, bytes).source;
  }

 private:
  struct bucket_state {
    choice_source source = choice_source::unused;
    std::int8_t chosen = tuning_choices::none;
    std::uint8_t candidate_count = 0;
    std::uint8_t round = 0;  ///< rounds completed: each runs every live candidate once
    /// Calls of the current round, or of the current comparison (a warming one makes hundreds).
    std::uint16_t position = 0;
    std::uint8_t live = 0;    ///< candidates not pruned (the current round's length)
    std::uint8_t last = 0;    ///< the candidate of the last trial call (record() times it)
    std::uint8_t warmed = 0;  ///< untimed calls of the current position's candidate so far
    bool handshake_due = false;
    std::array<std::int8_t, max_candidates> candidates{};
    std::array<std::uint8_t, max_candidates> order{};  ///< the current round's candidates
    /// Agreed, by the metric (average or slowest rank); no_time: not measured.
    std::array<std::uint64_t, max_candidates> estimate{};
    std::array<std::uint64_t, max_candidates> slowest{};  ///< agreed: the slowest rank's best
    std::array<bool, max_candidates> pruned{};
    std::array<std::uint8_t, max_candidates> pruned_after{};  ///< calls it had when pruned
    std::array<std::uint64_t, max_candidates> local_best{};   ///< this rank's best call of each
    std::uint32_t trial_calls = 0;
    /// Pacing: calls of the leader left before the trial goes on, and all such calls so far.
    std::uint32_t pause_left = 0;
    std::uint32_t paused_calls = 0;
    std::uint8_t leader = 0;        ///< the candidate a pause runs
    std::uint8_t chosen_index = 0;  ///< the index of `chosen` among the candidates
    /// The candidate a comparison measures beside the choice: the trial's closest rival during the
    /// confirmation, then the runner-up of the same result that re-checks measure.
    std::uint8_t runner_up = 0;
    // Comparisons in blocks (the confirmation while source is trial; otherwise a re-check).
    bool comparing = false;
    std::uint8_t block_timed = 0;  ///< timed calls of the current block so far
    std::array<std::uint64_t, comparison_calls> block{};  ///< this rank's times in the block
    /// This rank's lower quartile of each candidate's last block (what it costs without its
    /// slowest quarter of calls: an MPI's warm-up, see above).
    std::array<std::uint64_t, max_candidates> local_quartile{};
    /// The next re-check warms the system MPI's call first (runner_up is that call).
    bool warm_runner_up = false;
    unsigned block_warm_calls = 1;  ///< untimed calls before the current block
    /// The last comparison's candidates (the choice before it first) and their agreed figures.
    std::array<std::int8_t, 2> compared_choice{tuning_choices::none, tuning_choices::none};
    std::array<agreed_time, 2> compared{};
    // Re-checks (all zero while none is planned: the bucket has no runner-up of the same result).
    std::uint8_t rechecks_done = 0;
    std::uint8_t recheck_switches = 0;  ///< re-checks that changed the choice
    std::uint64_t settled_calls = 0;    ///< calls since the bucket settled or was last re-checked
    std::uint64_t recheck_at = 0;       ///< the settled call that starts the next re-check; 0: none
    std::uint64_t recheck_interval = 0;
  };
  [[nodiscard]] bucket_state& at(tuned_op op, std::size_t bytes) {
    return m_buckets[static_cast<std::size_t>(op)][tuning_choices::bucket_of(bytes)];
  }
  [[nodiscard]] const bucket_state& at(tuned_op op, std::size_t bytes) const {
    return m_buckets[static_cast<std::size_t>(op)][tuning_choices::bucket_of(bytes)];
  }
  void end_round(bucket_state& state, tuned_op op, const agree_function& agree);
  /// One handshake on `count` values (the parity alternates per handshake of this selector).
  trial_views handshake(const agree_function& agree, const trial_values& mine, std::size_t count);
  /// One handshake on every candidate not pruned: their agreed best calls (slowest, estimate).
  void agree_on_live(bucket_state& state, const agree_function& agree);
  /// Marks the candidates the next two smaller buckets' trials pruned, the nearer one far behind
  /// (inherit_min_ns, inherit_factor), as pruned here before the first round (pruned_after 0:
  /// never tried).
  void inherit_prunes(bucket_state& state, tuned_op op, std::size_t bucket) const;
  /// The call a running comparison makes: the choice's block, then the runner-up's.
  online_plan comparison_call(bucket_state& state, tuned_op op);
  static void begin_comparison(bucket_state& state);
  /// After a comparison's last call: agrees on both blocks' figures, keeps the choice unless the
  /// other is clearly faster; ends the trial (the confirmation) or counts a re-check; plans the
  /// next.
  void end_comparison(bucket_state& state, tuned_op op, const agree_function& agree);
  /// After a comparison whose loser is the system MPI's call: whether that call was clearly faster
  /// than the choice without its slowest quarter of calls (one more handshake, on its quartile),
  /// so that the bucket's next re-check warms it (only where a re-check can pick it, once per
  /// operation).
  void note_warming_mpi(bucket_state& state, tuned_op op, const agree_function& agree);
  /// The lowest slowest-rank time of the candidates not pruned (no_time: none measured).
  [[nodiscard]] static std::uint64_t best_slowest(const bucket_state& state);
  /// Whether candidate i's slowest rank keeps it in the contest (online_metric::average).
  [[nodiscard]] static bool competes(const bucket_state& state, std::size_t i);
  /// Whether a candidate measured as `challenger` should replace one measured as `current`:
  /// clearly faster by the estimate, and its slowest rank within slowest_margin_percent of
  /// current's; or current's slowest rank is that far behind the challenger's.
  [[nodiscard]] static bool clearly_faster(agreed_time challenger, agreed_time current);
  [[nodiscard]] static agreed_time trial_time(const bucket_state& state, std::size_t i) {
    return {state.estimate[i], state.slowest[i]};
  }
  static void order_round(bucket_state& state);
  /// The candidate that replaces the rules' choice (candidate 0) by the rounds so far, or 0: the
  /// fastest that competes, where it is clearly faster.
  [[nodiscard]] static std::size_t leading_candidate(const bucket_state& state);
  /// Sets the leader and the pause before the next round, or before the `confirmation` (its
  /// runner_up set): enough calls of the leader to keep what the phase's calls cost beyond as many
  /// of the leader's within the budget (none without a budget or a long enough leader).
  void pace(bucket_state& state, bool confirmation) const;
  /// What the next round's calls cost beyond as many calls of state.leader (agreed times).
  [[nodiscard]] static std::uint64_t round_extra(const bucket_state& state);
  /// After the last round: the rules' choice unless another is clearly faster, then the
  /// confirmation against the closest rival (or settled at once where none is close).
  void settle(bucket_state& state, tuned_op op) const;
  /// Plans the next re-check: the fastest other candidate that gives the same result.
  void plan_recheck(bucket_state& state, tuned_op op) const;
  /// Counts a call of a settled bucket; true when it is the one that starts a re-check.
  static bool recheck_due(bucket_state& state) {
    return state.recheck_at != 0 && ++state.settled_calls >= state.recheck_at;
  }
  [[nodiscard]] static std::string describe(tuned_op op, std::size_t bucket,
                                            const bucket_state& state);

  struct rule_memo {
    std::size_t bytes = 0;  ///< 0: none (a call of 0 bytes never selects)
    std::int8_t choice = tuning_choices::none;
  };

  online_mode m_mode = online_mode::off;
  bool m_recheck = true;
  online_metric m_metric = online_metric::slowest;
  bool m_oversubscribed = false;
  unsigned m_budget_percent = 0;
  std::array<std::array<bucket_state, buckets>, tuned_op_count> m_buckets{};
  /// Operations whose system MPI call a re-check has warmed (recheck_warm_calls) already.
  std::array<bool, tuned_op_count> m_mpi_warmed{};
  unsigned m_parity = 0;  ///< of the next handshake
  std::array<rule_memo, tuned_op_count> m_rule_memo{};
};

/// "8 B", "64 KiB", "16 MiB": the lower end of a bucket.
[[nodiscard]] std::string bucket_label(std::size_t bucket);

/// Lines that a finalize summary prints: node rank 0 of each communicator adds its report when the
/// communicator's collective state goes away (process-wide, thread-safe).
void add_to_selection_log(const std::vector<std::string>& lines);
[[nodiscard]] std::vector<std::string> selection_log();

}  // namespace cachecomm::detail
