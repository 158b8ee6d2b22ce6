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

/// The byte size of `count` elements of `type` on `ranks` ranks, or invalid_argument naming what is
/// wrong.
std::size_t checked_block(const char* what, std::size_t count, datatype type, std::size_t ranks) {
  const int type_value = static_cast<int>(type);
  if (type_value < 0 || type_value > static_cast<int>(datatype::byte)) {
    throw invalid_argument(std::string("cachecomm: ") + what + ": unknown datatype value " +
                           std::to_string(type_value));
  }
  std::size_t total = 0;
  if (__builtin_mul_overflow(count, size_of(type) * ranks, &total)) {
    throw invalid_argument(std::string("cachecomm: ") + what + ": count " + std::to_string(count) +
                           " overflows the byte size");
  }
  return count * size_of(type);
}

void check_root(const char* what, const comm& c, int root) {
  if (root < 0 || root >= c.size()) {
    throw invalid_argument(std::string("cachecomm: ") + what + ": root " + std::to_string(root) +
                           " is not a rank of the communicator (size " + std::to_string(c.size()) +
                           ")");
  }
}

void check_buffer(const char* what, const char* which, const void* buffer) {
  if (buffer == nullptr || buffer == in_place) {
    throw invalid_argument(std::string("cachecomm: ") + what + ": " + which + " buffer is " +
                           (buffer == nullptr ? "null" : "in_place") + " but the count is not 0");
  }
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
      checked_block("gather", count_per_rank, type, static_cast<std::size_t>(c.size()));
  check_root("gather", c, root);
  if (block == 0) return;
  const bool is_root = c.rank() == root;
  if (send == in_place && !is_root) {
    throw invalid_argument("cachecomm: gather: send is in_place on a rank that is not the root");
  }
  if (send != in_place) check_buffer("gather", "send", send);
  if (is_root) check_buffer("gather", "receive", receive);
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
      checked_block("scatter", count_per_rank, type, static_cast<std::size_t>(c.size()));
  check_root("scatter", c, root);
  if (block == 0) return;
  const bool is_root = c.rank() == root;
  if (receive == in_place && !is_root) {
    throw invalid_argument(
        "cachecomm: scatter: receive is in_place on a rank that is not the root");
  }
  if (is_root) check_buffer("scatter", "send", send);
  if (receive != in_place) check_buffer("scatter", "receive", receive);
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
  const std::size_t block = checked_block("alltoall", count_per_rank, type, ranks);
  if (block == 0) return;
  if (send != in_place) check_buffer("alltoall", "send", send);
  check_buffer("alltoall", "receive", receive);
  if (send != in_place) {
    const auto* s = static_cast<const std::byte*>(send);
    const auto* r = static_cast<const std::byte*>(receive);
    if (s < r + block * ranks && r < s + block * ranks) {
      throw invalid_argument(
          "cachecomm: alltoall: the send and receive buffers overlap (use in_place)");
    }
  }
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
            reduce_op op, bool exclusive) {
  const char* what = exclusive ? "exscan" : "scan";
  auto& engine = blocking_engine_of(c);
  (void)checked_block(what, count, type, 1);
  if (op == reduce_op::replace) {
    throw unsupported_error(std::string("cachecomm: ") + what +
                            ": reduce_op::replace is not supported by collectives (it is an "
                            "accumulate operation)");
  }
  if (!supports(type, op)) {
    throw unsupported_error(std::string("cachecomm: ") + what + ": operation " +
                            std::string(to_string(op)) + " is not supported on " +
                            std::string(to_string(type)));
  }
  if (count == 0) return;
  check_buffer(what, "receive", receive);
  if (send != in_place) check_buffer(what, "send", send);
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
  engine.scan(input, receive, count, type, op, exclusive);
}

}  // namespace

void scan(comm& c, const void* send, void* receive, std::size_t count, datatype type,
          reduce_op op) {
  prefix(c, send, receive, count, type, op, false);
}

void exscan(comm& c, const void* send, void* receive, std::size_t count, datatype type,
            reduce_op op) {
  prefix(c, send, receive, count, type, op, true);
}

}  // namespace cachecomm
