// Public entry points of gather, scatter, alltoall, scan and exscan: argument checks, the automatic
// choice, and the multi-node case (handed to the system MPI whole: the node phase alone would not
// save a copy here, and the call stays one MPI collective). The algorithms are in gather.cpp,
// scatter.cpp, alltoall.cpp and scan.cpp.
#include <cstring>
#include <string>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "cachecomm/error.hpp"
#include "coll/algorithm_registry.hpp"
#include "coll/block_arguments.hpp"
#include "coll/coll_engine.hpp"
#include "coll/entry_points.hpp"
#include "coll/selection.hpp"
#include "coll/system_mpi_choice.hpp"
#include "core/comm_impl.hpp"
#include "core/mpi_check.hpp"
#include "core/mpi_types.hpp"

namespace cachecomm {

namespace {

using detail::blocking_engine_of;
using detail::engine_of;
using detail::selection_for;

int mpi_count(std::size_t count, const char* what) {
  return detail::mpi_int_count<unsupported_error>(count, [what] {
    return std::string("cachecomm: ") + what +
           " across nodes is limited to INT_MAX bytes per block in one MPI call";
  });
}

/// Runs one block collective of a one-node comm through the system MPI (`system_call`) or one of
/// cachecomm's algorithms (`own_call`), as the forced algorithm or the automatic plan says (a
/// tuning file, online selection, the built-in rules), timing it for online selection. A comm
/// spanning nodes hands the call to MPI whole.
template <typename Algorithm, typename SystemCall, typename OwnCall>
void run_block_collective(comm& c, detail::tuned_op op, std::size_t block, Algorithm algorithm,
                          SystemCall&& system_call, OwnCall&& own_call) {
  if (!c.impl().single_node()) {
    system_call();
    return;
  }
  detail::automatic_plan plan{static_cast<std::int8_t>(algorithm), false};
  if (algorithm == Algorithm::automatic) plan = detail::plan_automatic_call(c, op, block);
  const detail::trial_timer timer(plan.trial);
  if (plan.choice == detail::tuning_choices::system_mpi) {
    // Under the preload this reaches the PMPI_ call: the call runs inside cachecomm.
    detail::agree_before_system_call(c, op, block);
    system_call();
  } else {
    own_call(static_cast<Algorithm>(plan.choice));
  }
  timer.finish(c, op, block);
}

}  // namespace

algorithm_choice explain_gather(comm& c, std::size_t block_bytes) {
  auto& engine = engine_of(c);
  return detail::explain_automatic(
      c, detail::tuned_op::gather, block_bytes,
      explained(
          detail::select_gather(selection_for(c, engine, block_bytes), engine.tuning().gather)));
}
algorithm_choice explain_scatter(comm& c, std::size_t block_bytes) {
  auto& engine = engine_of(c);
  return detail::explain_automatic(
      c, detail::tuned_op::scatter, block_bytes,
      explained(
          detail::select_scatter(selection_for(c, engine, block_bytes), engine.tuning().scatter)));
}
algorithm_choice explain_scan(comm& c, std::size_t bytes, bool exclusive) {
  auto& engine = engine_of(c);
  return detail::explained(
      detail::select_scan(selection_for(c, engine, bytes), engine.tuning().scan, exclusive));
}
algorithm_choice explain_alltoall(comm& c, std::size_t block_bytes) {
  auto& engine = engine_of(c);
  return detail::explain_automatic(
      c, detail::tuned_op::alltoall, block_bytes,
      explained(detail::select_alltoall(selection_for(c, engine, block_bytes),
                                        engine.tuning().alltoall)));
}

void gather(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
            int root) {
  gather(c, send, receive, count_per_rank, type, root, gather_algorithm::automatic);
}

void gather(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
            int root, gather_algorithm algorithm) {
  auto& engine = blocking_engine_of(c);
  const std::size_t block =
      detail::check_gather_arguments("gather", c, send, receive, count_per_rank, type, root);
  if (block == 0) return;
  auto* out = static_cast<std::byte*>(receive);
  const void* input = send == in_place ? out + static_cast<std::size_t>(c.rank()) * block : send;
  run_block_collective(
      c, detail::tuned_op::gather, block, algorithm,
      [&] {
        const int bytes = mpi_count(block, "gather");
        CACHECOMM_MPI(MPI_Gather(send == in_place ? MPI_IN_PLACE : send, bytes, MPI_BYTE, receive,
                                 bytes, MPI_BYTE, root, c.mpi_comm()));
      },
      [&](gather_algorithm chosen) { engine.gather(input, receive, block, root, chosen); });
}

void scatter(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
             int root) {
  scatter(c, send, receive, count_per_rank, type, root, scatter_algorithm::automatic);
}

void scatter(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
             int root, scatter_algorithm algorithm) {
  auto& engine = blocking_engine_of(c);
  const std::size_t block =
      detail::check_scatter_arguments("scatter", c, send, receive, count_per_rank, type, root);
  if (block == 0) return;
  run_block_collective(
      c, detail::tuned_op::scatter, block, algorithm,
      [&] {
        const int bytes = mpi_count(block, "scatter");
        CACHECOMM_MPI(MPI_Scatter(send, bytes, MPI_BYTE,
                                  receive == in_place ? MPI_IN_PLACE : receive, bytes, MPI_BYTE,
                                  root, c.mpi_comm()));
      },
      [&](scatter_algorithm chosen) {
        engine.scatter(send, receive == in_place ? nullptr : receive, block, root, chosen);
      });
}

void alltoall(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type) {
  alltoall(c, send, receive, count_per_rank, type, alltoall_algorithm::automatic);
}

void alltoall(comm& c, const void* send, void* receive, std::size_t count_per_rank, datatype type,
              alltoall_algorithm algorithm) {
  auto& engine = blocking_engine_of(c);
  const auto ranks = static_cast<std::size_t>(c.size());
  const std::size_t block =
      detail::check_alltoall_arguments("alltoall", c, send, receive, count_per_rank, type);
  if (block == 0) return;
  run_block_collective(
      c, detail::tuned_op::alltoall, block, algorithm,
      [&] {
        const int bytes = mpi_count(block, "alltoall");
        CACHECOMM_MPI(MPI_Alltoall(send == in_place ? MPI_IN_PLACE : send, bytes, MPI_BYTE, receive,
                                   bytes, MPI_BYTE, c.mpi_comm()));
      },
      [&](alltoall_algorithm chosen) {
        // In place: the blocks to send are copied aside first, since the others read them while
        // this rank's own receives overwrite the buffer.
        std::vector<std::byte> staged;
        const void* input = send;
        if (send == in_place) {
          staged.assign(static_cast<const std::byte*>(receive),
                        static_cast<const std::byte*>(receive) + block * ranks);
          input = staged.data();
        }
        engine.alltoall(input, receive, block, chosen);
      });
}

namespace {

void prefix(comm& c, const void* send, void* receive, std::size_t count, datatype type,
            reduce_op op, bool exclusive, scan_algorithm algorithm) {
  const char* what = exclusive ? "exscan" : "scan";
  auto& engine = blocking_engine_of(c);
  if (detail::check_prefix_arguments(what, send, receive, count, type, op) == 0) return;
  const void* input = send == in_place ? receive : send;
  auto& impl = c.impl();
  if (!impl.single_node()) {
    const int elements = mpi_count(count, what);
    const void* mpi_send = send == in_place ? MPI_IN_PLACE : send;
    if (exclusive) {
      CACHECOMM_MPI(MPI_Exscan(mpi_send, receive, elements, detail::mpi_datatype_of(type),
                               detail::mpi_op_of(op), c.mpi_comm()));
    } else {
      CACHECOMM_MPI(MPI_Scan(mpi_send, receive, elements, detail::mpi_datatype_of(type),
                             detail::mpi_op_of(op), c.mpi_comm()));
    }
    return;
  }
  if (algorithm == scan_algorithm::automatic) {
    algorithm = detail::select_scan(selection_for(c, engine, count * size_of(type)),
                                    engine.tuning().scan, exclusive)
                    .algorithm;
  }
  engine.scan(input, receive, count, type, op, exclusive, algorithm);
}

}  // namespace

void scan(comm& c, const void* send, void* receive, std::size_t count, datatype type,
          reduce_op op) {
  prefix(c, send, receive, count, type, op, false, scan_algorithm::automatic);
}
void scan(comm& c, const void* send, void* receive, std::size_t count, datatype type, reduce_op op,
          scan_algorithm algorithm) {
  prefix(c, send, receive, count, type, op, false, algorithm);
}

void exscan(comm& c, const void* send, void* receive, std::size_t count, datatype type,
            reduce_op op) {
  prefix(c, send, receive, count, type, op, true, scan_algorithm::automatic);
}
void exscan(comm& c, const void* send, void* receive, std::size_t count, datatype type,
            reduce_op op, scan_algorithm algorithm) {
  prefix(c, send, receive, count, type, op, true, algorithm);
}

}  // namespace cachecomm
