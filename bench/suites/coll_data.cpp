// Broadcast, reduce, allreduce and allgather: every cachecomm algorithm, the automatic choice
// ("auto:<concrete>") and the system MPI, at each message size, interleaved in the same run, in
// the modes of common/coll_modes.hpp (cold per-call, hot per-call, hot back-to-back; every row says
// which in "buffers" and "timing"). median_us stays the raw median; overhead_us and
// corrected_median_us say what the EPCC reference subtracted.
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "common/coll_modes.hpp"

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

const char* const correction_note =
    "data collectives: buffers hot (the same every call) or cold (rewritten before each call); "
    "timing per-call (each call timed alone, ranks aligned by a barrier before it) or back-to-back "
    "(a batch timed as a whole); overhead_us is the median of the same preparation with an empty "
    "operation (clock read and call, EPCC reference), corrected_median_us = median_us - "
    "overhead_us, and vs_mpi divides corrected medians of the same mode (vs_mpi_raw: raw medians)";

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
    switch (op) {
      case data_op::broadcast:
        candidates.push_back(
            {"mpi", "default", [&] { MPI_Bcast(receive.data(), mpi_count, MPI_BYTE, 0, mpi); }});
        candidates.push_back(
            {"cachecomm", "auto", [&] { broadcast(c, receive.data(), bytes, datatype::byte, 0); }});
        for (auto algorithm : all_broadcast_algorithms()) {
          candidates.push_back({"cachecomm", std::string(to_string(algorithm)), [&, algorithm] {
                                  broadcast(c, receive.data(), bytes, datatype::byte, 0, algorithm);
                                }});
        }
        break;
      case data_op::reduce:
      case data_op::allreduce: {
        const bool all = op == data_op::allreduce;
        candidates.push_back(
            {"mpi", "default", [&, all] {
               if (all)
                 MPI_Allreduce(send.data(), receive.data(), mpi_count, MPI_DOUBLE, MPI_SUM, mpi);
               else
                 MPI_Reduce(send.data(), receive.data(), mpi_count, MPI_DOUBLE, MPI_SUM, 0, mpi);
             }});
        auto run = [&, all](reduce_algorithm algorithm) {
          if (all)
            allreduce(c, send.data(), receive.data(), count, datatype::float64, reduce_op::sum,
                      algorithm);
          else
            reduce(c, send.data(), receive.data(), count, datatype::float64, reduce_op::sum, 0,
                   algorithm);
        };
        candidates.push_back({"cachecomm", "auto", [run] { run(reduce_algorithm::automatic); }});
        for (auto algorithm : all_reduce_algorithms()) {
          candidates.push_back({"cachecomm", std::string(to_string(algorithm)),
                                [run, algorithm] { run(algorithm); }});
        }
        break;
      }
      case data_op::allgather:
        candidates.push_back({"mpi", "default", [&] {
                                MPI_Allgather(send.data(), mpi_count, MPI_BYTE, receive.data(),
                                              mpi_count, MPI_BYTE, mpi);
                              }});
        candidates.push_back({"cachecomm", "auto", [&] {
                                allgather(c, send.data(), receive.data(), bytes, datatype::byte);
                              }});
        for (auto algorithm : all_allgather_algorithms()) {
          candidates.push_back({"cachecomm", std::string(to_string(algorithm)), [&, algorithm] {
                                  allgather(c, send.data(), receive.data(), bytes, datatype::byte,
                                            algorithm);
                                }});
        }
        break;
    }
    settle_automatic(c, candidates);
    std::string chosen;
    switch (op) {
      case data_op::broadcast: chosen = explain_broadcast(c, bytes).algorithm; break;
      case data_op::reduce: chosen = explain_reduce(c, bytes).algorithm; break;
      case data_op::allreduce: chosen = explain_allreduce(c, bytes).algorithm; break;
      case data_op::allgather: chosen = explain_allgather(c, bytes).algorithm; break;
    }
    // Cold: the input is rewritten (a broadcast's is the root's buffer).
    const std::function<void(long)> rewrite = [&send, &receive, rank, op](long iteration) {
      if (op != data_op::broadcast)
        scribble(std::span(send), iteration, rank);
      else if (rank == 0)
        scribble(std::span(receive), iteration, rank);
    };
    measure_modes(context, candidates, modes_of(context), rewrite, {name_of(op), bytes, chosen});
  }
}

const coll_op_registration bcast_registration{
    {"bcast", "broadcast from rank 0: every algorithm beside MPI_Bcast",
     [](coll_context& context) { run_data_op(context, data_op::broadcast); }, mode_columns()}};
const coll_op_registration reduce_registration{
    {"reduce", "reduce to rank 0 (double, sum): every algorithm beside MPI_Reduce",
     [](coll_context& context) { run_data_op(context, data_op::reduce); }, mode_columns()}};
const coll_op_registration allreduce_registration{
    {"allreduce", "allreduce (double, sum): every algorithm beside MPI_Allreduce",
     [](coll_context& context) { run_data_op(context, data_op::allreduce); }, mode_columns()}};
const coll_op_registration allgather_registration{
    {"allgather", "allgather of equal blocks: every algorithm beside MPI_Allgather",
     [](coll_context& context) { run_data_op(context, data_op::allgather); }, mode_columns()}};

}  // namespace

}  // namespace cachecomm::bench
