// Gather, scatter, alltoall (bytes, root 0), scan and exscan (doubles, sum), reduce_scatter_block
// and reduce_scatter (doubles, sum), allgatherv, gatherv, scatterv and alltoallv (bytes, equal
// counts, root 0): every cachecomm algorithm, the automatic choice ("auto:<concrete>") and the
// system MPI, interleaved in the same run, in the same three modes as the other data collectives
// (coll_data.cpp: cold per-call, hot per-call, hot back-to-back; vs_mpi compares medians less the
// measured per-call overhead). `bytes` is one rank's block (gather, scatter, alltoall, allgatherv,
// gatherv, scatterv, alltoallv), one rank's result block (reduce_scatter_block) or the whole vector
// (scan, exscan, reduce_scatter: split into per-rank counts as OSU's osu_reduce_scatter splits it).
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "suites/coll_ops.hpp"

namespace cachecomm::bench {

namespace {

enum class block_op {
  gather,
  scatter,
  alltoall,
  scan,
  exscan,
  reduce_scatter,
  reduce_scatter_counts,
  allgatherv,
  gatherv,
  scatterv,
  alltoallv
};

const char* name_of(block_op op) {
  switch (op) {
    case block_op::gather: return "gather";
    case block_op::scatter: return "scatter";
    case block_op::alltoall: return "alltoall";
    case block_op::scan: return "scan";
    case block_op::exscan: return "exscan";
    case block_op::reduce_scatter: return "reduce_scatter_block";
    case block_op::reduce_scatter_counts: return "reduce_scatter";
    case block_op::allgatherv: return "allgatherv";
    case block_op::gatherv: return "gatherv";
    case block_op::scatterv: return "scatterv";
    case block_op::alltoallv: return "alltoallv";
  }
  return "?";
}

timing_plan plan_for(const timing_plan& base, std::size_t bytes) {
  timing_plan plan = base;
  const std::size_t scale = std::max<std::size_t>(1, bytes / 8192);
  plan.iterations_per_batch =
      std::max(2, static_cast<int>(static_cast<std::size_t>(base.iterations_per_batch) / scale));
  plan.warmup_iterations = std::max(2, std::min(base.warmup_iterations, plan.iterations_per_batch));
  return plan;
}

/// One word per cache line (and the last), so the next call reads fresh lines.
void scribble(std::vector<double>& buffer, long iteration, int rank) {
  const double value = static_cast<double>(iteration % 1000) + 0.25 * rank;
  for (std::size_t i = 0; i < buffer.size(); i += 8) buffer[i] = value;
  if (!buffer.empty()) buffer.back() = value;
}

struct timing_mode {
  const char* buffers;
  const char* timing;
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

template <typename Algorithm, typename Run>
void add_algorithms(std::vector<candidate>& candidates, const std::vector<Algorithm>& all,
                    Run run) {
  candidates.push_back({"cachecomm", "auto", [run] { run(Algorithm::automatic); }, {}});
  for (Algorithm algorithm : all) {
    candidates.push_back(
        {"cachecomm", std::string(to_string(algorithm)), [run, algorithm] { run(algorithm); }, {}});
  }
}

const char* const modes_note =
    "gather, scatter, alltoall, scan, exscan, reduce_scatter_block, reduce_scatter, allgatherv, "
    "gatherv, scatterv, alltoallv: "
    "the modes, overhead_us, corrected_median_us and "
    "vs_mpi "
    "as for the other data collectives (buffers hot or cold, timing per-call or back-to-back; "
    "vs_mpi divides medians less the empty operation's); bytes: one rank's block (gather, scatter, "
    "alltoall, allgatherv, gatherv, scatterv, alltoallv), one rank's result block "
    "(reduce_scatter_block) or "
    "the vector "
    "(scan, exscan; reduce_scatter: split into per-rank counts as OSU's osu_reduce_scatter does, "
    "count / ranks each, one more for the first count % ranks)";

void run_block_op(coll_context& context, block_op op) {
  const json& notes = context.results.document()["notes"];
  if (std::find(notes.begin(), notes.end(), modes_note) == notes.end())
    context.results.note(modes_note);
  comm& c = context.comm;
  MPI_Comm mpi = c.mpi_comm();
  const int rank = c.rank();
  const auto size = static_cast<std::size_t>(c.size());
  const bool prefix = op == block_op::scan || op == block_op::exscan;
  const bool reduction =
      prefix || op == block_op::reduce_scatter || op == block_op::reduce_scatter_counts;
  for (std::size_t requested : context.sizes) {
    const std::size_t count = std::max<std::size_t>(1, (requested + 7) / 8);
    const std::size_t bytes = reduction ? count * 8 : requested;
    const std::size_t doubles = (bytes + 7) / 8;
    // The side that holds every rank's block is `size` blocks long.
    const bool send_all = op == block_op::scatter || op == block_op::alltoall ||
                          op == block_op::reduce_scatter || op == block_op::scatterv ||
                          op == block_op::alltoallv;
    const bool receive_all = op == block_op::gather || op == block_op::alltoall ||
                             op == block_op::allgatherv || op == block_op::gatherv ||
                             op == block_op::alltoallv;
    std::vector<double> send(send_all ? doubles * size : doubles, 1.0);
    std::vector<double> receive(receive_all ? doubles * size : doubles, 0.0);
    const int n = static_cast<int>(reduction ? count : bytes);
    // The v-calls: every rank's count is one block, the blocks in rank order.
    const std::vector<std::size_t> counts(size, bytes);
    std::vector<std::size_t> displacements(size);
    for (std::size_t r = 0; r < size; ++r) displacements[r] = r * bytes;
    // reduce_scatter: the vector's `count` elements split as osu_reduce_scatter splits them.
    std::vector<std::size_t> split(size);
    for (std::size_t r = 0; r < size; ++r)
      split[r] = count < size ? (r < count ? 1 : 0) : count / size + (r < count % size ? 1 : 0);
    const std::vector<int> mpi_split(split.begin(), split.end());
    const std::vector<int> mpi_counts(size, n);
    std::vector<int> mpi_displacements(size);
    for (std::size_t r = 0; r < size; ++r) mpi_displacements[r] = static_cast<int>(r) * n;
    std::vector<candidate> candidates;
    std::function<std::string()> explain = [] { return std::string("rank-ordered"); };
    switch (op) {
      case block_op::gather:
        candidates.push_back(
            {"mpi", "default",
             [&] { MPI_Gather(send.data(), n, MPI_BYTE, receive.data(), n, MPI_BYTE, 0, mpi); }});
        add_algorithms(candidates, all_gather_algorithms(), [&](gather_algorithm algorithm) {
          gather(c, send.data(), receive.data(), bytes, datatype::byte, 0, algorithm);
        });
        explain = [&] { return explain_gather(c, bytes).algorithm; };
        break;
      case block_op::scatter:
        candidates.push_back(
            {"mpi", "default",
             [&] { MPI_Scatter(send.data(), n, MPI_BYTE, receive.data(), n, MPI_BYTE, 0, mpi); }});
        add_algorithms(candidates, all_scatter_algorithms(), [&](scatter_algorithm algorithm) {
          scatter(c, send.data(), receive.data(), bytes, datatype::byte, 0, algorithm);
        });
        explain = [&] { return explain_scatter(c, bytes).algorithm; };
        break;
      case block_op::alltoall:
        candidates.push_back(
            {"mpi", "default",
             [&] { MPI_Alltoall(send.data(), n, MPI_BYTE, receive.data(), n, MPI_BYTE, mpi); }});
        add_algorithms(candidates, all_alltoall_algorithms(), [&](alltoall_algorithm algorithm) {
          alltoall(c, send.data(), receive.data(), bytes, datatype::byte, algorithm);
        });
        explain = [&] { return explain_alltoall(c, bytes).algorithm; };
        break;
      case block_op::reduce_scatter:
        candidates.push_back({"mpi", "default", [&] {
                                MPI_Reduce_scatter_block(send.data(), receive.data(), n, MPI_DOUBLE,
                                                         MPI_SUM, mpi);
                              }});
        add_algorithms(candidates, all_reduce_scatter_algorithms(),
                       [&](reduce_scatter_algorithm algorithm) {
                         reduce_scatter_block(c, send.data(), receive.data(), count,
                                              datatype::float64, reduce_op::sum, algorithm);
                       });
        explain = [&] { return explain_reduce_scatter(c, bytes).algorithm; };
        break;
      case block_op::reduce_scatter_counts:
        candidates.push_back({"mpi", "default", [&] {
                                MPI_Reduce_scatter(send.data(), receive.data(), mpi_split.data(),
                                                   MPI_DOUBLE, MPI_SUM, mpi);
                              }});
        add_algorithms(candidates, all_reduce_scatter_algorithms(),
                       [&](reduce_scatter_algorithm algorithm) {
                         reduce_scatter(c, send.data(), receive.data(), split, datatype::float64,
                                        reduce_op::sum, algorithm);
                       });
        explain = [&] { return explain_reduce_scatter(c, split.front() * 8).algorithm; };
        break;
      case block_op::allgatherv:
        candidates.push_back({"mpi", "default", [&] {
                                MPI_Allgatherv(send.data(), n, MPI_BYTE, receive.data(),
                                               mpi_counts.data(), mpi_displacements.data(),
                                               MPI_BYTE, mpi);
                              }});
        add_algorithms(candidates, all_allgatherv_algorithms(),
                       [&](allgatherv_algorithm algorithm) {
                         allgatherv(c, send.data(), bytes, receive.data(), counts, displacements,
                                    datatype::byte, algorithm);
                       });
        explain = [&] { return explain_allgatherv(c, bytes).algorithm; };
        break;
      case block_op::gatherv:
        candidates.push_back({"mpi", "default", [&] {
                                MPI_Gatherv(send.data(), n, MPI_BYTE, receive.data(),
                                            mpi_counts.data(), mpi_displacements.data(), MPI_BYTE,
                                            0, mpi);
                              }});
        add_algorithms(candidates, all_gatherv_algorithms(), [&](gatherv_algorithm algorithm) {
          gatherv(c, send.data(), bytes, receive.data(), counts, displacements, datatype::byte, 0,
                  algorithm);
        });
        explain = [&] { return explain_gatherv(c, bytes).algorithm; };
        break;
      case block_op::scatterv:
        candidates.push_back({"mpi", "default", [&] {
                                MPI_Scatterv(send.data(), mpi_counts.data(),
                                             mpi_displacements.data(), MPI_BYTE, receive.data(), n,
                                             MPI_BYTE, 0, mpi);
                              }});
        add_algorithms(candidates, all_scatterv_algorithms(), [&](scatterv_algorithm algorithm) {
          scatterv(c, send.data(), counts, displacements, receive.data(), bytes, datatype::byte, 0,
                   algorithm);
        });
        explain = [&] { return explain_scatterv(c, bytes).algorithm; };
        break;
      case block_op::alltoallv:
        candidates.push_back({"mpi", "default", [&] {
                                MPI_Alltoallv(send.data(), mpi_counts.data(),
                                              mpi_displacements.data(), MPI_BYTE, receive.data(),
                                              mpi_counts.data(), mpi_displacements.data(), MPI_BYTE,
                                              mpi);
                              }});
        add_algorithms(candidates, all_alltoallv_algorithms(), [&](alltoallv_algorithm algorithm) {
          alltoallv(c, send.data(), counts, displacements, receive.data(), counts, displacements,
                    datatype::byte, algorithm);
        });
        explain = [&] { return explain_alltoallv(c, bytes).algorithm; };
        break;
      case block_op::scan:
      case block_op::exscan: {
        const bool exclusive = op == block_op::exscan;
        candidates.push_back(
            {"mpi", "default", [&, exclusive] {
               if (exclusive)
                 MPI_Exscan(send.data(), receive.data(), n, MPI_DOUBLE, MPI_SUM, mpi);
               else
                 MPI_Scan(send.data(), receive.data(), n, MPI_DOUBLE, MPI_SUM, mpi);
             }});
        // One algorithm (the inputs in rank order): the automatic row is the only cachecomm row.
        candidates.push_back(
            {"cachecomm", "auto", [&, exclusive] {
               if (exclusive)
                 exscan(c, send.data(), receive.data(), count, datatype::float64, reduce_op::sum);
               else
                 scan(c, send.data(), receive.data(), count, datatype::float64, reduce_op::sum);
             }});
        break;
      }
    }
    settle_automatic(c, candidates);
    const std::string chosen = explain();
    const timing_plan plan = plan_for(context.plan, bytes);
    for (const timing_mode& mode : modes_of(context)) {
      const bool cold = std::string_view(mode.buffers) == "cold";
      std::function<void(long)> mode_prepare;  // empty: back to back
      if (std::string_view(mode.timing) == "per-call") {
        mode_prepare = [&send, &c, rank, cold](long iteration) {
          if (cold) scribble(send, iteration, rank);
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

const coll_op_registration gather_registration{
    {"gather", "gather of equal blocks to rank 0: every algorithm beside MPI_Gather",
     [](coll_context& context) { run_block_op(context, block_op::gather); }, columns}};
const coll_op_registration scatter_registration{
    {"scatter", "scatter of equal blocks from rank 0: every algorithm beside MPI_Scatter",
     [](coll_context& context) { run_block_op(context, block_op::scatter); }, columns}};
const coll_op_registration alltoall_registration{
    {"alltoall", "alltoall of equal blocks: every algorithm beside MPI_Alltoall",
     [](coll_context& context) { run_block_op(context, block_op::alltoall); }, columns}};
const coll_op_registration scan_registration{
    {"scan", "inclusive scan (double, sum) beside MPI_Scan",
     [](coll_context& context) { run_block_op(context, block_op::scan); }, columns}};
const coll_op_registration reduce_scatter_registration{
    {"reduce_scatter_block",
     "reduce_scatter_block (double, sum): every algorithm beside MPI_Reduce_scatter_block",
     [](coll_context& context) { run_block_op(context, block_op::reduce_scatter); }, columns}};
const coll_op_registration reduce_scatter_counts_registration{
    {"reduce_scatter",
     "reduce_scatter (double, sum; bytes: the whole vector, split as osu_reduce_scatter splits "
     "it): "
     "every algorithm beside MPI_Reduce_scatter",
     [](coll_context& context) { run_block_op(context, block_op::reduce_scatter_counts); },
     columns}};
const coll_op_registration allgatherv_registration{
    {"allgatherv", "allgatherv of equal counts: every algorithm beside MPI_Allgatherv",
     [](coll_context& context) { run_block_op(context, block_op::allgatherv); }, columns}};
const coll_op_registration gatherv_registration{
    {"gatherv", "gatherv of equal counts to rank 0: every algorithm beside MPI_Gatherv",
     [](coll_context& context) { run_block_op(context, block_op::gatherv); }, columns}};
const coll_op_registration scatterv_registration{
    {"scatterv", "scatterv of equal counts from rank 0: every algorithm beside MPI_Scatterv",
     [](coll_context& context) { run_block_op(context, block_op::scatterv); }, columns}};
const coll_op_registration alltoallv_registration{
    {"alltoallv", "alltoallv of equal counts: every algorithm beside MPI_Alltoallv",
     [](coll_context& context) { run_block_op(context, block_op::alltoallv); }, columns}};
const coll_op_registration exscan_registration{
    {"exscan", "exclusive scan (double, sum) beside MPI_Exscan",
     [](coll_context& context) { run_block_op(context, block_op::exscan); }, columns}};

}  // namespace

}  // namespace cachecomm::bench
