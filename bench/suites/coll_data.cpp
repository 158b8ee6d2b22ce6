// Broadcast, reduce, allreduce and allgather: every cachecomm algorithm, the automatic choice
// ("auto:<concrete>") and the system MPI, at each message size, interleaved in the same run, in
// three modes (every row says which in "buffers" and "timing"):
// - cold, per-call: buffers rewritten before every call (untimed), so neither side is flattered by
//   data the previous call left in its cache;
// - hot, per-call: the same buffers every call, as OSU, IMB and iterative codes use them;
// - hot, back-to-back: a batch of calls timed as a whole (consecutive calls may overlap, as in a
//   solver's loop). Cold buffers cannot be back to back: the rewrite sits between the calls.
// Per call, ranks are aligned (cachecomm barrier, untimed) before each call, as OSU's barrier after
// each call does, and each sample also holds a clock read and an indirect call (tens of
// nanoseconds, as much as a small collective): a reference candidate (the same preparation, an
// empty operation; the EPCC method) measures that overhead, and vs_mpi compares medians less it.
// median_us stays the raw median; overhead_us and corrected_median_us say what was subtracted.
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "suites/coll_ops.hpp"

namespace cachecomm::bench {

namespace {

enum class data_op { broadcast, reduce, allreduce, allgather };

const char* name_of(data_op op) {
  switch (op) {
    case data_op::broadcast: return "bcast";
    case data_op::reduce: return "reduce";
    case data_op::allreduce: return "allreduce";
    case data_op::allgather: return "allgather";
  }
  return "?";
}

/// Large messages get fewer calls per sample, so a full run stays short.
timing_plan plan_for(const timing_plan& base, std::size_t bytes) {
  timing_plan plan = base;
  const std::size_t scale = std::max<std::size_t>(1, bytes / 8192);
  plan.iterations_per_batch =
      std::max(2, static_cast<int>(static_cast<std::size_t>(base.iterations_per_batch) / scale));
  plan.warmup_iterations = std::max(2, std::min(base.warmup_iterations, plan.iterations_per_batch));
  return plan;
}

/// Touches one word per cache line (and the first and last element) so the next call sees fresh
/// data.
void scribble(std::vector<double>& buffer, long iteration, int rank) {
  const double value = static_cast<double>(iteration % 1000) + 0.25 * rank;
  for (std::size_t i = 0; i < buffer.size(); i += 8) buffer[i] = value;
  if (!buffer.empty()) buffer.back() = value;
}

const char* const correction_note =
    "data collectives: buffers hot (the same every call) or cold (rewritten before each call); "
    "timing per-call (each call timed alone, ranks aligned by a barrier before it) or back-to-back "
    "(a batch timed as a whole); overhead_us is the median of the same preparation with an empty "
    "operation (clock read and call, EPCC reference), corrected_median_us = median_us - "
    "overhead_us, and vs_mpi divides corrected medians of the same mode (vs_mpi_raw: raw medians)";

struct timing_mode {
  const char* buffers;  // "hot" or "cold"
  const char* timing;   // "per-call" or "back-to-back"
};

std::vector<timing_mode> modes_of(const coll_context& context) {
  auto wanted = [](const std::vector<std::string>& list, const char* name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  std::vector<timing_mode> modes;
  const bool per_call = wanted(context.timings, "per-call");
  if (wanted(context.buffers, "cold") && per_call) modes.push_back({"cold", "per-call"});
  if (wanted(context.buffers, "hot")) {
    if (per_call) modes.push_back({"hot", "per-call"});
    if (wanted(context.timings, "back-to-back")) modes.push_back({"hot", "back-to-back"});
  }
  return modes;
}

void run_data_op(coll_context& context, data_op op) {
  comm& c = context.comm;
  const json& notes = context.results.document()["notes"];
  if (std::find(notes.begin(), notes.end(), correction_note) == notes.end())
    context.results.note(correction_note);
  MPI_Comm mpi = c.mpi_comm();
  const int rank = c.rank();
  const auto size = static_cast<std::size_t>(c.size());
  for (std::size_t requested : context.sizes) {
    // Reductions run on doubles (sum); moves on bytes. Sizes round up to whole doubles.
    const std::size_t count = std::max<std::size_t>(1, (requested + 7) / 8);
    const std::size_t bytes =
        op == data_op::reduce || op == data_op::allreduce ? count * 8 : requested;
    const std::size_t send_doubles = (bytes + 7) / 8;
    std::vector<double> send(send_doubles, 1.0);
    std::vector<double> receive(op == data_op::allgather ? send_doubles * size : send_doubles, 0.0);
    const int mpi_count =
        static_cast<int>(op == data_op::reduce || op == data_op::allreduce ? count : bytes);

    std::vector<candidate> candidates;
    const std::function<void(long)> prepare;  // set per mode below
    switch (op) {
      case data_op::broadcast:
        candidates.push_back({"mpi", "default",
                              [&] { MPI_Bcast(receive.data(), mpi_count, MPI_BYTE, 0, mpi); },
                              prepare});
        candidates.push_back({"cachecomm", "auto",
                              [&] { broadcast(c, receive.data(), bytes, datatype::byte, 0); },
                              prepare});
        for (auto algorithm : all_broadcast_algorithms()) {
          candidates.push_back({"cachecomm", std::string(to_string(algorithm)),
                                [&, algorithm] {
                                  broadcast(c, receive.data(), bytes, datatype::byte, 0, algorithm);
                                },
                                prepare});
        }
        break;
      case data_op::reduce:
      case data_op::allreduce: {
        const bool all = op == data_op::allreduce;
        candidates.push_back(
            {"mpi", "default",
             [&, all] {
               if (all)
                 MPI_Allreduce(send.data(), receive.data(), mpi_count, MPI_DOUBLE, MPI_SUM, mpi);
               else
                 MPI_Reduce(send.data(), receive.data(), mpi_count, MPI_DOUBLE, MPI_SUM, 0, mpi);
             },
             prepare});
        auto run = [&, all](reduce_algorithm algorithm) {
          if (all)
            allreduce(c, send.data(), receive.data(), count, datatype::float64, reduce_op::sum,
                      algorithm);
          else
            reduce(c, send.data(), receive.data(), count, datatype::float64, reduce_op::sum, 0,
                   algorithm);
        };
        candidates.push_back(
            {"cachecomm", "auto", [run] { run(reduce_algorithm::automatic); }, prepare});
        for (auto algorithm : all_reduce_algorithms()) {
          candidates.push_back({"cachecomm", std::string(to_string(algorithm)),
                                [run, algorithm] { run(algorithm); }, prepare});
        }
        break;
      }
      case data_op::allgather:
        candidates.push_back({"mpi", "default",
                              [&] {
                                MPI_Allgather(send.data(), mpi_count, MPI_BYTE, receive.data(),
                                              mpi_count, MPI_BYTE, mpi);
                              },
                              prepare});
        candidates.push_back(
            {"cachecomm", "auto",
             [&] { allgather(c, send.data(), receive.data(), bytes, datatype::byte); }, prepare});
        for (auto algorithm : all_allgather_algorithms()) {
          candidates.push_back({"cachecomm", std::string(to_string(algorithm)),
                                [&, algorithm] {
                                  allgather(c, send.data(), receive.data(), bytes, datatype::byte,
                                            algorithm);
                                },
                                prepare});
        }
        break;
    }
    settle_automatic(c, candidates);
    const timing_plan plan = plan_for(context.plan, bytes);
    std::string chosen;
    switch (op) {
      case data_op::broadcast: chosen = explain_broadcast(c, bytes).algorithm; break;
      case data_op::reduce: chosen = explain_reduce(c, bytes).algorithm; break;
      case data_op::allreduce: chosen = explain_allreduce(c, bytes).algorithm; break;
      case data_op::allgather: chosen = explain_allgather(c, bytes).algorithm; break;
    }
    for (const timing_mode& mode : modes_of(context)) {
      const bool cold = std::string_view(mode.buffers) == "cold";
      std::function<void(long)> mode_prepare;  // empty: back to back
      if (std::string_view(mode.timing) == "per-call") {
        mode_prepare = [&send, &receive, &c, rank, op, cold](long iteration) {
          if (cold) {
            if (op != data_op::broadcast)
              scribble(send, iteration, rank);
            else if (rank == 0)
              scribble(receive, iteration, rank);
          }
          c.barrier();
        };
      }
      for (auto& entry : candidates) entry.prepare = mode_prepare;
      const referenced_times measured = measure_interleaved_with_reference(mpi, candidates, plan);
      const auto& times = measured.candidates;
      const double overhead = measured.reference.median;
      const double mpi_median = times.front().median;
      const double mpi_corrected = measured.corrected_median(0);
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        const double corrected = measured.corrected_median(i);
        // Bandwidth from the operation's own time (the raw one when the correction leaves nothing).
        const double seconds = (corrected > 0 ? corrected : times[i].median) * 1e-6;
        std::string algorithm = candidates[i].algorithm;
        if (algorithm == "auto") algorithm = "auto:" + chosen;
        context.results.add(
            {{"op", name_of(op)},
             {"impl", candidates[i].impl},
             {"algorithm", algorithm},
             {"bytes", bytes},
             {"buffers", mode.buffers},
             {"timing", mode.timing},
             {"iters", plan.batches * plan.iterations_per_batch},
             {"gbps", seconds > 0 ? static_cast<double>(bytes) / seconds * 1e-9 : 0.0},
             {"overhead_us", overhead},
             {"corrected_median_us", corrected},
             {"vs_mpi", mpi_corrected > 0 ? corrected / mpi_corrected : 0.0},
             {"vs_mpi_raw", mpi_median > 0 ? times[i].median / mpi_median : 0.0}},
            times[i]);
      }
    }
  }
}

const std::vector<std::string> columns = {"buffers",   "timing",      "impl",
                                          "algorithm", "bytes",       "median_us",
                                          "p25_us",    "overhead_us", "corrected_median_us",
                                          "gbps",      "vs_mpi",      "vs_mpi_raw"};

const coll_op_registration bcast_registration{
    {"bcast", "broadcast from rank 0: every algorithm beside MPI_Bcast",
     [](coll_context& context) { run_data_op(context, data_op::broadcast); }, columns}};
const coll_op_registration reduce_registration{
    {"reduce", "reduce to rank 0 (double, sum): every algorithm beside MPI_Reduce",
     [](coll_context& context) { run_data_op(context, data_op::reduce); }, columns}};
const coll_op_registration allreduce_registration{
    {"allreduce", "allreduce (double, sum): every algorithm beside MPI_Allreduce",
     [](coll_context& context) { run_data_op(context, data_op::allreduce); }, columns}};
const coll_op_registration allgather_registration{
    {"allgather", "allgather of equal blocks: every algorithm beside MPI_Allgather",
     [](coll_context& context) { run_data_op(context, data_op::allgather); }, columns}};

}  // namespace

}  // namespace cachecomm::bench
