#include "coll/online_selection.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <random>

namespace cachecomm::detail {

online_plan online_selector::plan(tuned_op op, std::size_t bytes,
                                  const std::function<std::vector<std::int8_t>()>& candidates,
                                  const agree_function& agree) {
  bucket_state& state = at(op, bytes);
  if (state.source == choice_source::online) {
    if (!state.comparing) {
      // A caller's settled_call() may have counted this call already: the count only has to
      // reach recheck_at, which every rank's count does at the same call.
      if (!recheck_due(state)) return {state.chosen, false};
      begin_comparison(state);
      // A rule remembered for a size of this bucket online selection does not decide (above
      // INT_MAX, before the bucket settled) would otherwise answer for it during the re-check.
      m_rule_memo[static_cast<std::size_t>(op)] = {};
    }
  } else if (state.source != choice_source::trial) {
    const std::vector<std::int8_t> list = candidates();
    state = bucket_state{};
    state.source = choice_source::trial;
    state.candidate_count =
        static_cast<std::uint8_t>(std::min<std::size_t>(list.size(), max_candidates));
    std::copy_n(list.begin(), state.candidate_count, state.candidates.begin());
    state.estimate.fill(no_time);
    state.slowest.fill(no_time);
    state.local_best.fill(no_time);
    if (state.candidate_count <= 1) {  // nothing to choose between
      state.source = choice_source::online;
      state.chosen = state.candidate_count == 1 ? state.candidates[0] : tuning_choices::none;
      return {state.chosen, false};
    }
    inherit_prunes(state, op, tuning_choices::bucket_of(bytes));
    order_round(state);
  }
  // The handshakes of a round happen at the start of the bucket's next call: a program that never
  // calls this size again pays nothing, and the wait overlaps the ranks' skew there.
  if (state.handshake_due) {
    end_round(state, op, agree);
    if (state.source == choice_source::online && !state.comparing) return {state.chosen, false};
  }
  if (state.pause_left > 0) {  // pacing: the leader, untimed
    --state.pause_left;
    ++state.paused_calls;
    return {state.candidates[state.leader], false};
  }
  if (state.comparing) return comparison_call(state, op);
  state.last = state.order[state.position];
  ++state.trial_calls;
  if (state.round > 0 && state.warmed < warm_calls_per_sample) {
    ++state.warmed;  // run as a loop would run it before the timed call, untimed
    return {state.candidates[state.last], false, true};
  }
  state.warmed = 0;
  if (++state.position == state.live) state.handshake_due = true;
  return {state.candidates[state.last], true};
}

void online_selector::record(tuned_op op, std::size_t bytes, std::uint64_t nanoseconds) {
  bucket_state& state = at(op, bytes);
  if (state.comparing) {
    if (state.block_timed < comparison_calls) state.block[state.block_timed++] = nanoseconds;
    if (state.block_timed == comparison_calls) {  // this rank's figures for the block
      state.local_best[state.last] = block_figure(state.block);
      std::array<std::uint64_t, comparison_calls> sorted = state.block;
      std::nth_element(sorted.begin(), sorted.begin() + comparison_calls / 4, sorted.end());
      state.local_quartile[state.last] = sorted[comparison_calls / 4];
    }
    return;
  }
  if (state.source != choice_source::trial) return;
  state.local_best[state.last] = std::min(state.local_best[state.last], nanoseconds);
}

std::uint64_t online_selector::block_figure(std::array<std::uint64_t, comparison_calls> block) {
  std::sort(block.begin(), block.end());
  if (block.back() == no_time) return no_time;  // a failed call: the candidate is unmeasured
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i + 1 < comparison_calls; ++i) sum += block[i];
  return sum / (comparison_calls - 1);
}

online_plan online_selector::comparison_call(bucket_state& state, tuned_op op) {
  constexpr unsigned first_block = 1 + comparison_calls;
  const bool second = state.position >= first_block;
  const unsigned within = second ? state.position - first_block : state.position;
  if (within == 0) {
    state.block_warm_calls = 1;
    // Only a re-check warms: the trial's confirmation stays short.
    if (second && state.warm_runner_up && state.source == choice_source::online &&
        !m_mpi_warmed[static_cast<std::size_t>(op)]) {
      state.block_warm_calls = recheck_warm_calls;
      state.warm_runner_up = false;
      m_mpi_warmed[static_cast<std::size_t>(op)] = true;
    }
    state.block_timed = 0;
  }
  state.last = second ? state.runner_up : state.chosen_index;
  ++state.position;
  if (second && within + 1 == state.block_warm_calls + comparison_calls) state.handshake_due = true;
  if (within < state.block_warm_calls) {  // the block's untimed first calls
    if (within == 0) {
      ++state.trial_calls;  // a warming block's extra calls are not trial calls of the report
      state.local_best[state.last] = no_time;
      state.local_quartile[state.last] = no_time;
    }
    return {state.candidates[state.last], false, true};
  }
  ++state.trial_calls;
  return {state.candidates[state.last], true};
}

void online_selector::begin_comparison(bucket_state& state) {
  state.comparing = true;
  state.position = 0;
  state.handshake_due = false;
}

void online_selector::end_comparison(bucket_state& state, tuned_op op,
                                     const agree_function& agree) {
  state.comparing = false;
  const std::array<std::uint8_t, 2> pair{state.chosen_index, state.runner_up};
  trial_values mine{};
  for (std::size_t k = 0; k < 2; ++k) mine[k] = state.local_best[pair[k]];  // in this order
  const trial_views views = handshake(agree, mine, 2);
  for (std::size_t k = 0; k < 2; ++k) {
    state.compared[k] = {m_metric == online_metric::average ? views[k].average : views[k].slowest,
                         views[k].slowest};
    state.compared_choice[k] = state.candidates[pair[k]];
  }
  const bool switched = clearly_faster(state.compared[1], state.compared[0]);
  if (switched) {
    std::swap(state.chosen_index, state.runner_up);
    state.chosen = state.candidates[state.chosen_index];
  }
  if (state.source == choice_source::trial) {  // the confirmation: the trial ends here
    state.source = choice_source::online;
  } else {
    ++state.rechecks_done;
    if (switched) ++state.recheck_switches;
  }
  note_warming_mpi(state, op, agree);
  plan_recheck(state, op);
}

void online_selector::note_warming_mpi(bucket_state& state, tuned_op op,
                                       const agree_function& agree) {
  state.warm_runner_up = false;
  // The same conditions on every rank, so the handshake below happens on all or none. A settled
  // reduction's re-checks never reach the system MPI's call from a rank-order choice.
  const bool reduction = op == tuned_op::reduce || op == tuned_op::allreduce;
  if (!m_recheck || reduction || m_mpi_warmed[static_cast<std::size_t>(op)] ||
      state.candidates[state.runner_up] != tuning_choices::system_mpi) {
    return;
  }
  const trial_view view = handshake(agree, {state.local_quartile[state.runner_up]}, 1)[0];
  const agreed_time quartile{m_metric == online_metric::average ? view.average : view.slowest,
                             view.slowest};
  // compared[] is in the comparison's order: the choice before it, then the other.
  const std::size_t chosen = state.compared_choice[0] == state.chosen ? 0 : 1;
  state.warm_runner_up = clearly_faster(quartile, state.compared[chosen]);
}

void online_selector::end_round(bucket_state& state, tuned_op op, const agree_function& agree) {
  state.handshake_due = false;
  if (state.comparing) {
    end_comparison(state, op, agree);
    return;
  }
  const bool last_round = state.round + 1U == samples_per_candidate;
  static_assert(prune_after_calls > 1 && prune_after_calls <= samples_per_candidate);
  // Prunes against the fastest so far, by the slowest rank: a candidate that far behind never
  // competes (competes()). The rules' choice (candidate 0) is not pruned on its first call, which
  // in a bucket may be the communicator's first call of all and carry one-time set-up; after two
  // (the second warmed) it is, like any other: a rule measured on another node can be far off on
  // this one (the single-copy broadcast of 16 KiB on the Zen 5 VM: 2.3-2.5 us against
  // double-buffer's 0.4, and it ran every round, 5-10 % of an OSU run of 0.4 us calls).
  // Factors in percent of the fastest: `mpi_percent` for the system MPI's call, `own_percent` for
  // cachecomm's algorithms, `own_long_percent` for them where the fastest call took large_call_ns.
  auto prune = [&](std::uint64_t own_percent, std::uint64_t own_long_percent,
                   std::uint64_t mpi_percent) {
    agree_on_live(state, agree);
    const std::uint64_t best = best_slowest(state);
    const std::uint64_t percent = best >= large_call_ns ? own_long_percent : own_percent;
    if (best >= no_time / std::max(percent, mpi_percent)) return;
    for (std::size_t i = state.round == 0 ? 1 : 0; i < state.candidate_count; ++i) {
      const bool mpi = state.candidates[i] == tuning_choices::system_mpi;
      const std::uint64_t slowest = state.slowest[i];
      if (state.pruned[i] ||
          (slowest < no_time / 100 && slowest * 100 <= best * (mpi ? mpi_percent : percent)))
        continue;
      state.pruned[i] = true;
      state.pruned_after[i] = static_cast<std::uint8_t>(state.round + 1U);
    }
  };
  if (state.round == 0) {
    const std::uint64_t own =
        (m_oversubscribed ? oversubscribed_first_prune_factor : own_first_call_prune_factor) * 100;
    prune(own, own,
          (m_oversubscribed ? oversubscribed_first_prune_factor : early_prune_factor) * 100);
  } else if (state.round + 1U == prune_after_calls) {
    prune(prune_factor * 100, large_call_prune_percent, prune_factor * 100);
  } else if (last_round) {
    agree_on_live(state, agree);
  }
  ++state.round;
  if (last_round) {
    settle(state, op);
    return;
  }
  order_round(state);
  if (state.round >= first_paced_round) pace(state, false);
}

online_selector::trial_views online_selector::handshake(const agree_function& agree,
                                                        const trial_values& mine,
                                                        std::size_t count) {
  const trial_views views = agree(mine, count, m_parity);
  m_parity ^= 1U;
  return views;
}

void online_selector::agree_on_live(bucket_state& state, const agree_function& agree) {
  // In candidate order on every rank: the slowest and the average rank's best call of each, the
  // same numbers on every rank.
  trial_values mine{};
  std::array<std::uint8_t, max_candidates> which{};
  std::size_t count = 0;
  for (std::uint8_t i = 0; i < state.candidate_count; ++i) {
    if (state.pruned[i]) continue;
    which[count] = i;
    mine[count++] = state.local_best[i];
  }
  const trial_views views = handshake(agree, mine, count);
  for (std::size_t k = 0; k < count; ++k) {
    state.slowest[which[k]] = views[k].slowest;
    state.estimate[which[k]] =
        m_metric == online_metric::average ? views[k].average : views[k].slowest;
  }
}

std::size_t online_selector::leading_candidate(const bucket_state& state) {
  std::size_t challenger = 0;
  for (std::size_t i = 1; i < state.candidate_count; ++i) {
    if (!competes(state, i)) continue;
    if (challenger == 0 || state.estimate[i] < state.estimate[challenger]) challenger = i;
  }
  return challenger != 0 && clearly_faster(trial_time(state, challenger), trial_time(state, 0))
             ? challenger
             : 0;
}

std::uint64_t online_selector::round_extra(const bucket_state& state) {
  const std::uint64_t leader = state.estimate[state.leader];
  if (leader == no_time) return 0;
  std::uint64_t extra = 0;
  for (std::size_t k = 0; k < state.live; ++k) {
    const std::uint64_t time = state.estimate[state.order[k]];
    // Unmeasured (a failed call): nothing known to pace by.
    if (time != no_time && time > leader) extra += (time - leader) * (1 + warm_calls_per_sample);
  }
  return extra;
}

void online_selector::pace(bucket_state& state, bool confirmation) const {
  state.leader = static_cast<std::uint8_t>(leading_candidate(state));
  state.pause_left = 0;
  const std::uint64_t leader = state.estimate[state.leader];
  if (m_budget_percent == 0 || leader == no_time || leader < paced_min_ns) return;
  // Before the confirmation the leader is its winner (settle), and the rival's block costs what
  // the rival is behind.
  const std::uint64_t rival = state.estimate[state.runner_up];
  const std::uint64_t extra = !confirmation ? round_extra(state)
                              : rival != no_time && rival > leader
                                  ? (rival - leader) * (1 + comparison_calls)
                                  : 0;
  if (extra == 0) return;
  // extra <= budget% of (pause calls x leader): a pause of ceil(extra / (budget% x leader)).
  const std::uint64_t budget = leader * m_budget_percent;  // x100
  const std::uint64_t scaled = extra >= no_time / 100 ? no_time : extra * 100;
  const std::uint64_t calls = scaled / budget + (scaled % budget != 0 ? 1 : 0);
  state.pause_left = static_cast<std::uint32_t>(std::min<std::uint64_t>(calls, max_pause_calls));
}

void online_selector::inherit_prunes(bucket_state& state, tuned_op op, std::size_t bucket) const {
  if (bucket < 2) return;
  const auto& of_op = m_buckets[static_cast<std::size_t>(op)];
  const bucket_state& smaller = of_op[bucket - 1];
  const bucket_state& smallest = of_op[bucket - 2];
  // Their prune rounds done (a settled bucket has done it too): the same state on every rank.
  if (smaller.round < prune_after_calls || smallest.round < prune_after_calls) return;
  const std::uint64_t fastest = best_slowest(smaller);
  if (fastest == no_time || fastest < inherit_min_ns) return;
  auto pruned_in = [](const bucket_state& below, std::int8_t candidate) -> const std::uint64_t* {
    for (std::size_t j = 0; j < below.candidate_count; ++j)
      if (below.candidates[j] == candidate && below.pruned[j]) return &below.slowest[j];
    return nullptr;
  };
  for (std::size_t i = 1; i < state.candidate_count; ++i) {  // the rules' choice always runs
    if (state.candidates[i] == tuning_choices::system_mpi) continue;
    // Far behind one bucket down (an inherited skip has no time: still far behind), and pruned two
    // buckets down too: a candidate that lost two calls to a passing slowdown is tried again.
    const std::uint64_t* below = pruned_in(smaller, state.candidates[i]);
    if (below == nullptr || pruned_in(smallest, state.candidates[i]) == nullptr) continue;
    if (*below != no_time && *below / inherit_factor < fastest) continue;
    state.pruned[i] = true;
    state.pruned_after[i] = 0;
  }
}

void online_selector::order_round(bucket_state& state) {
  state.position = 0;
  state.live = 0;
  for (std::uint8_t i = 0; i < state.candidate_count; ++i)
    if (!state.pruned[i]) state.order[state.live++] = i;
  if (state.round == 0) return;  // the built-in choice first
  // The same seed on every rank of every job: the schedule is the same everywhere.
  std::mt19937 shuffler(20261124U + state.round);
  std::shuffle(state.order.begin(), state.order.begin() + state.live, shuffler);
}

std::uint64_t online_selector::best_slowest(const bucket_state& state) {
  std::uint64_t best = no_time;
  for (std::size_t i = 0; i < state.candidate_count; ++i)
    if (!state.pruned[i]) best = std::min(best, state.slowest[i]);
  return best;
}

bool online_selector::competes(const bucket_state& state, std::size_t i) {
  if (state.pruned[i] || state.slowest[i] == no_time) return false;
  const std::uint64_t best = best_slowest(state);
  return state.slowest[i] <= best + best / 100 * slowest_margin_percent;
}

bool online_selector::clearly_faster(agreed_time challenger, agreed_time current) {
  const std::uint64_t other = challenger.estimate;
  const std::uint64_t now = current.estimate;
  if (other == no_time || challenger.slowest == no_time) return false;
  if (now == no_time || current.slowest == no_time) return true;
  const std::uint64_t slowest = challenger.slowest;
  const std::uint64_t current_slowest = current.slowest;
  if (current_slowest > slowest + slowest / 100 * slowest_margin_percent) return true;
  return other < now - now / 100 * switch_margin_percent &&
         slowest <= current_slowest + current_slowest / 100 * slowest_margin_percent;
}

void online_selector::settle(bucket_state& state, tuned_op op) const {
  // The fastest other candidate replaces the rules' choice (candidate 0) only when it is clearly
  // faster: trial calls are few and noisy, and a close call decided by noise would trade the rules'
  // measured choice (and, against MPI's call, rank-order results) for nothing.
  state.chosen_index = static_cast<std::uint8_t>(leading_candidate(state));
  state.chosen = state.candidates[state.chosen_index];
  // The closest rival (any result: nothing is settled yet) runs a block against the winner; by
  // the estimate alone, as the rounds may have misjudged its slowest rank too (clearly_faster
  // weighs both after the blocks).
  std::size_t rival = max_candidates;
  for (std::size_t i = 0; i < state.candidate_count; ++i) {
    if (i == state.chosen_index || state.pruned[i] || state.estimate[i] == no_time) continue;
    if (rival == max_candidates || state.estimate[i] < state.estimate[rival]) rival = i;
  }
  const std::uint64_t winner = state.estimate[state.chosen_index];
  if (rival != max_candidates && winner < no_time / confirm_rival_factor &&
      state.estimate[rival] <= winner * confirm_rival_factor) {
    state.runner_up = static_cast<std::uint8_t>(rival);
    pace(state, true);
    begin_comparison(state);
    return;
  }
  state.source = choice_source::online;
  plan_recheck(state, op);
}

void online_selector::plan_recheck(bucket_state& state, tuned_op op) const {
  state.recheck_at = 0;
  if (!m_recheck) return;
  // A reduction's bytes depend on who combines: the system MPI's call may combine in another
  // order than cachecomm's algorithms (all of which combine in rank order), so a re-check never
  // crosses that line and a settled reduction keeps its bits. The other operations move bytes.
  const bool reduction = op == tuned_op::reduce || op == tuned_op::allreduce;
  const bool chosen_is_mpi = state.chosen == tuning_choices::system_mpi;
  std::size_t best = max_candidates;
  for (std::size_t i = 0; i < state.candidate_count; ++i) {
    if (i == state.chosen_index || state.pruned[i] || state.estimate[i] == no_time) continue;
    if (reduction && (state.candidates[i] == tuning_choices::system_mpi) != chosen_is_mpi) continue;
    if (best == max_candidates || state.estimate[i] < state.estimate[best]) best = i;
  }
  if (best == max_candidates) return;  // nothing to compare with: never re-checked
  // A warming re-check measures the system MPI's call, whatever the trial's order of the others.
  if (!state.warm_runner_up) state.runner_up = static_cast<std::uint8_t>(best);
  // Capped: after ~2^40 calls a re-check every 2^40 calls (the product would wrap after 2^61).
  state.recheck_interval = state.recheck_interval == 0 ? recheck_first_calls
                           : state.recheck_interval >= (std::uint64_t{1} << 40)
                               ? state.recheck_interval
                               : state.recheck_interval * recheck_growth;
  state.settled_calls = 0;
  state.recheck_at = state.recheck_interval;
}

namespace {
std::string setting_name(tuned_op op) {
  switch (op) {
    case tuned_op::barrier: return "CACHECOMM_BARRIER";
    case tuned_op::broadcast: return "CACHECOMM_BCAST";
    case tuned_op::reduce: return "CACHECOMM_REDUCE";
    case tuned_op::allreduce: return "CACHECOMM_ALLREDUCE";
    case tuned_op::allgather: return "CACHECOMM_ALLGATHER";
    case tuned_op::gather: return "CACHECOMM_GATHER";
    case tuned_op::scatter: return "CACHECOMM_SCATTER";
    case tuned_op::alltoall: return "CACHECOMM_ALLTOALL";
    case tuned_op::allgatherv: return "CACHECOMM_ALLGATHERV";
    case tuned_op::alltoallv: return "CACHECOMM_ALLTOALLV";
    case tuned_op::gatherv: return "CACHECOMM_GATHERV";
  }
  return "CACHECOMM_<OP>";
}
}  // namespace

std::string bucket_label(std::size_t bucket) {
  const std::size_t bytes = std::size_t{1} << bucket;
  if (bytes >= (std::size_t{1} << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (std::size_t{1} << 10)) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string online_selector::describe(tuned_op op, std::size_t bucket, const bucket_state& state) {
  const std::string range = bucket + 1 < buckets
                                ? bucket_label(bucket) + ".." + bucket_label(bucket + 1)
                                : bucket_label(bucket) + " and more";
  std::string line = std::string(to_string(op)) + " " + range + ": ";
  const std::string chosen(choice_name(op, state.chosen));
  switch (state.source) {
    case choice_source::unused: return {};
    case choice_source::builtin: return line + chosen + " (built-in rule)";
    case choice_source::tuning_file: return line + chosen + " (tuning file)";
    case choice_source::forced: return line + chosen + " (forced by " + setting_name(op) + ")";
    case choice_source::trial:
      line += "still measuring online (" + std::to_string(state.trial_calls) + " trial calls";
      if (state.paused_calls != 0) {
        line += " and " + std::to_string(state.paused_calls) + " of its leader, " +
                std::string(choice_name(op, state.candidates[state.leader]));
      }
      return line + " so far)";
    case choice_source::online: break;
  }
  line += chosen + " (measured online:";
  for (std::size_t i = 0; i < state.candidate_count; ++i) {
    line += i == 0 ? " " : ", ";
    line += std::string(choice_name(op, state.candidates[i])) + " ";
    if (state.estimate[i] == no_time) {
      const bool skipped = state.pruned[i] && state.pruned_after[i] == 0;
      line += skipped ? "[not tried: pruned at " + bucket_label(bucket - 1) + "]" : "-";
      continue;
    }
    char number[32];
    std::snprintf(number, sizeof number, "%.1f us", static_cast<double>(state.estimate[i]) / 1e3);
    line += number;
    if (state.slowest[i] != state.estimate[i] && state.slowest[i] != no_time) {
      std::snprintf(number, sizeof number, " (slowest %.1f)",
                    static_cast<double>(state.slowest[i]) / 1e3);
      line += number;
    }
    if (state.pruned[i]) {
      const unsigned calls = state.pruned_after[i];
      line += " [pruned after " + std::to_string(calls) + (calls == 1 ? " call]" : " calls]");
    }
  }
  line += "; " + std::to_string(state.trial_calls) + " trial calls";
  if (state.paused_calls != 0)
    line += " paced over " + std::to_string(state.trial_calls + state.paused_calls);
  if (state.rechecks_done != 0) {
    line += "; re-checked " + std::to_string(state.rechecks_done) + "x, " +
            std::to_string(state.recheck_switches) + " switched";
  }
  if (state.compared_choice[0] != tuning_choices::none) {
    auto figure = [&](std::size_t k) {
      std::string text(" ");
      text += choice_name(op, state.compared_choice[k]);
      text += ' ';
      if (state.compared[k].estimate == no_time) return text + "-";
      char number[32];
      std::snprintf(number, sizeof number, "%.1f us",
                    static_cast<double>(state.compared[k].estimate) / 1e3);
      return text + number;
    };
    line += "; last compared in blocks of " + std::to_string(comparison_calls) +
            " calls:" + figure(0) + "," + figure(1);
  }
  if (state.comparing) line += "; re-checking now";
  return line + ")";
}

std::string online_selector::describe(tuned_op op, std::size_t bytes) const {
  const std::size_t bucket = tuning_choices::bucket_of(bytes);
  return describe(op, bucket, m_buckets[static_cast<std::size_t>(op)][bucket]);
}

std::vector<std::string> online_selector::report() const {
  std::vector<std::string> lines;
  for (std::size_t op = 0; op < tuned_op_count; ++op) {
    for (std::size_t bucket = 0; bucket < buckets; ++bucket) {
      std::string line = describe(static_cast<tuned_op>(op), bucket, m_buckets[op][bucket]);
      if (!line.empty()) lines.push_back(std::move(line));
    }
  }
  return lines;
}

namespace {
std::mutex g_log_mutex;
std::vector<std::string>& log_lines() {
  static std::vector<std::string> lines;
  return lines;
}
}  // namespace

void add_to_selection_log(const std::vector<std::string>& lines) {
  const std::lock_guard<std::mutex> lock(g_log_mutex);
  log_lines().insert(log_lines().end(), lines.begin(), lines.end());
}

std::vector<std::string> selection_log() {
  const std::lock_guard<std::mutex> lock(g_log_mutex);
  return log_lines();
}

}  // namespace cachecomm::detail
