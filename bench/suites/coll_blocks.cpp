// Gather, scatter, alltoall (bytes, root 0), scan and exscan (doubles, sum), reduce_scatter_block
// and reduce_scatter (doubles, sum), allgatherv, gatherv, scatterv and alltoallv (bytes, equal
// counts, root 0): every cachecomm algorithm, the automatic choice ("auto:<concrete>") and the
// system MPI, interleaved in the same run, in the same three modes as the other data collectives
// (common/coll_modes.hpp: cold per-call, hot per-call, hot back-to-back; vs_mpi compares medians
// less the measured per-call overhead). `bytes` is one rank's block (gather, scatter, alltoall,
// allgatherv, gatherv, scatterv, alltoallv), one rank's result block (reduce_scatter_block) or the
// whole vector (scan, exscan, reduce_scatter: split into per-rank counts as OSU's
// osu_reduce_scatter splits it).
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "common/coll_modes.hpp"

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
        add_algorithms(candidates, all_scan_algorithms(), [&, exclusive](scan_algorithm algorithm) {
          if (exclusive)
            exscan(c, send.data(), receive.data(), count, datatype::float64, reduce_op::sum,
                   algorithm);
          else
            scan(c, send.data(), receive.data(), count, datatype::float64, reduce_op::sum,
                 algorithm);
        });
        explain = [&, exclusive] { return explain_scan(c, bytes, exclusive).algorithm; };
        break;
      }
    }
    settle_automatic(c, candidates);
    const std::function<void(long)> rewrite = [&send, rank](long iteration) {
      scribble(std::span(send), iteration, rank);
    };
    measure_modes(context, candidates, modes_of(context), rewrite, {name_of(op), bytes, explain()});
  }
}

const coll_op_registration gather_registration{
    {"gather", "gather of equal blocks to rank 0: every algorithm beside MPI_Gather",
     [](coll_context& context) { run_block_op(context, block_op::gather); }, mode_columns()}};
const coll_op_registration scatter_registration{
    {"scatter", "scatter of equal blocks from rank 0: every algorithm beside MPI_Scatter",
     [](coll_context& context) { run_block_op(context, block_op::scatter); }, mode_columns()}};
const coll_op_registration alltoall_registration{
    {"alltoall", "alltoall of equal blocks: every algorithm beside MPI_Alltoall",
     [](coll_context& context) { run_block_op(context, block_op::alltoall); }, mode_columns()}};
const coll_op_registration scan_registration{
    {"scan", "inclusive scan (double, sum) beside MPI_Scan",
     [](coll_context& context) { run_block_op(context, block_op::scan); }, mode_columns()}};
const coll_op_registration reduce_scatter_registration{
    {"reduce_scatter_block",
     "reduce_scatter_block (double, sum): every algorithm beside MPI_Reduce_scatter_block",
     [](coll_context& context) { run_block_op(context, block_op::reduce_scatter); },
     mode_columns()}};
const coll_op_registration reduce_scatter_counts_registration{
    {"reduce_scatter",
     "reduce_scatter (double, sum; bytes: the whole vector, split as osu_reduce_scatter splits "
     "it): "
     "every algorithm beside MPI_Reduce_scatter",
     [](coll_context& context) { run_block_op(context, block_op::reduce_scatter_counts); },
     mode_columns()}};
const coll_op_registration allgatherv_registration{
    {"allgatherv", "allgatherv of equal counts: every algorithm beside MPI_Allgatherv",
     [](coll_context& context) { run_block_op(context, block_op::allgatherv); }, mode_columns()}};
const coll_op_registration gatherv_registration{
    {"gatherv", "gatherv of equal counts to rank 0: every algorithm beside MPI_Gatherv",
     [](coll_context& context) { run_block_op(context, block_op::gatherv); }, mode_columns()}};
const coll_op_registration scatterv_registration{
    {"scatterv", "scatterv of equal counts from rank 0: every algorithm beside MPI_Scatterv",
     [](coll_context& context) { run_block_op(context, block_op::scatterv); }, mode_columns()}};
const coll_op_registration alltoallv_registration{
    {"alltoallv", "alltoallv of equal counts: every algorithm beside MPI_Alltoallv",
     [](coll_context& context) { run_block_op(context, block_op::alltoallv); }, mode_columns()}};
const coll_op_registration exscan_registration{
    {"exscan", "exclusive scan (double, sum) beside MPI_Exscan",
     [](coll_context& context) { run_block_op(context, block_op::exscan); }, mode_columns()}};

}  // namespace

}  // namespace cachecomm::bench
