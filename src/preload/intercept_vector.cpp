// MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Allgatherv, MPI_Gatherv, MPI_Scatterv and
// MPI_Alltoallv: served by cachecomm when it handles the case, otherwise passed to PMPI with the
// reason counted.
//
// As in intercept_gather_scatter.cpp, every decision to pass through depends only on what MPI
// requires to match on all ranks: the communicator, the root, the reduction (predefined datatype
// and operation), and for MPI_Allgatherv and MPI_Reduce_scatter the receive counts, which every
// rank passes (MPI_Reduce_scatter's calls without elements are served too: the ranks meet in them,
// so one whose counts differ fails there instead of leaving the others waiting). The counts of
// MPI_Gatherv and MPI_Scatterv are the root's alone and those of MPI_Alltoallv each rank's own, so
// empty calls are served too (every rank takes its one step). Counts that disagree across ranks
// fail on the ranks concerned with MPI_ERR_TRUNCATE (the C++ API's mismatch errors), never with
// wrong data. Datatypes that are not dense are packed; the displacements may be negative (they are
// taken from the lowest one).
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "cachecomm/error.hpp"
#include "coll/selection.hpp"
#include "preload/collective_routing.hpp"
#include "preload/type_layout.hpp"
#include "shm/memory_copy.hpp"

namespace preload = cachecomm::detail::preload;
using preload::call_kind;
using preload::outcome;
using preload::pass_through;
using preload::route_call;
using preload::serve;
using preload::valid_root;

namespace {

/// A v-call's receive side in bytes: where each rank's block lies from `base` (the lowest
/// displacement), and where it lies in a packed buffer when the datatype is not dense.
struct receive_blocks {
  std::byte* base = nullptr;
  std::vector<std::size_t> bytes;
  std::vector<std::size_t> offsets;  ///< from base (dense) or in the packed buffer
  std::vector<std::size_t> packed;   ///< offsets in the packed buffer (set when not dense)
  std::size_t packed_total = 0;      ///< (set when not dense)
};

/// This thread's blocks of the call (refilled by every call, so a small call allocates nothing);
/// [1]: MPI_Alltoallv's send side.
std::array<receive_blocks, 2>& reusable_blocks() {
  thread_local std::array<receive_blocks, 2> sides __attribute__((tls_model("initial-exec")));
  return sides;
}

const receive_blocks& fill_blocks(receive_blocks& blocks, void* recvbuf, const int* recvcounts,
                                  const int* displs, int ranks,
                                  const preload::type_layout& layout) {
  const auto count = static_cast<std::size_t>(ranks);
  const int lowest = *std::min_element(displs, displs + ranks);
  blocks.base =
      static_cast<std::byte*>(recvbuf) + static_cast<std::ptrdiff_t>(lowest) * layout.extent;
  blocks.bytes.resize(count);
  blocks.offsets.resize(count);
  blocks.packed_total = 0;
  if (layout.dense) {
    // The small calls' case: no packed buffer, so no packed offsets.
    for (std::size_t r = 0; r < count; ++r) {
      blocks.bytes[r] = static_cast<std::size_t>(recvcounts[r]) * layout.size;
      blocks.offsets[r] =
          static_cast<std::size_t>(displs[r] - lowest) * static_cast<std::size_t>(layout.extent);
    }
    return blocks;
  }
  blocks.packed.resize(count);
  for (std::size_t r = 0; r < count; ++r) {
    blocks.bytes[r] = static_cast<std::size_t>(recvcounts[r]) * layout.size;
    blocks.packed[r] = blocks.packed_total;
    blocks.packed_total += blocks.bytes[r];
    blocks.offsets[r] = blocks.packed[r];
  }
  return blocks;
}

const receive_blocks& blocks_of(void* recvbuf, const int* recvcounts, const int* displs, int ranks,
                                const preload::type_layout& layout) {
  return fill_blocks(reusable_blocks()[0], recvbuf, recvcounts, displs, ranks, layout);
}

/// The block of rank `r` in the program's receive buffer.
std::byte* block_at(void* recvbuf, const int* displs, int r, const preload::type_layout& layout) {
  return static_cast<std::byte*>(recvbuf) + static_cast<std::ptrdiff_t>(displs[r]) * layout.extent;
}

bool any_negative(const int* values, int n) {
  return std::any_of(values, values + n, [](int v) { return v < 0; });
}

/// Blocks up to this size of an MPI_Allgatherv whose counts are all equal go as an allgather
/// (served_as_allgather); larger ones keep allgatherv's own algorithms, which place every block at
/// its displacement without the extra copy a scattered receive layout costs here. Up to a slot's
/// payload: the small calls, whose cost is the call itself.
constexpr std::size_t allgather_block_limit = cachecomm::detail::thresholds::slot_message_bytes;

/// Whether every rank passes the same count: MPI requires the same recvcounts on every rank, so
/// this decision (with the block size) takes every rank the same way.
bool equal_counts(const int* counts, int ranks) {
  return std::all_of(counts, counts + ranks, [&](int n) { return n == counts[0]; });
}

/// MPI_Allgatherv with equal counts served as an allgather of one block per rank: it skips the
/// per-rank counts, their fingerprint and the vector path's bookkeeping (2 ranks, 8 B, OSU: see
/// docs/architecture.md). The blocks go straight into recvbuf when they lie one after the other
/// (dense, displacement r * count); otherwise into scratch, then to their displacements. A send
/// signature that differs from the block takes part as the block (zero-padded or cut) and fails
/// after the call, as MPI_Allgather does.
template <typename Pass>
int served_as_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                        const std::optional<preload::type_layout>& sent, void* recvbuf, int count,
                        const int* displs, MPI_Datatype recvtype,
                        const preload::type_layout& received, MPI_Comm comm, cachecomm::comm& fast,
                        Pass& pass) {
  constexpr call_kind kind = call_kind::allgatherv;
  constexpr auto tuned = cachecomm::detail::tuned_op::allgather;
  const std::size_t block = static_cast<std::size_t>(count) * received.size;
  int error = MPI_SUCCESS;
  const preload::planned_call plan =
      preload::plan_call(kind, "MPI_Allgatherv", comm, fast, tuned, block, error);
  if (error != MPI_SUCCESS) return error;
  const auto algorithm = static_cast<cachecomm::allgather_algorithm>(plan.algorithm);
  return preload::run_planned(kind, "MPI_Allgatherv", comm, fast, plan, tuned, block, pass, [&] {
    const int ranks = fast.size();
    const int me = fast.rank();
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const std::size_t own_bytes =
        in_place ? block : static_cast<std::size_t>(sendcount) * sent->size;
    const void* send = in_place
                           ? cachecomm::in_place
                           : preload::dense_send_block(sendbuf, static_cast<std::size_t>(sendcount),
                                                       sendtype, *sent, block, comm);
    bool in_order = received.dense;
    for (int rank = 0; rank < ranks && in_order; ++rank) in_order = displs[rank] == rank * count;
    if (in_order) {
      cachecomm::allgather(fast, send, recvbuf, block, cachecomm::datatype::byte, algorithm);
    } else {
      std::vector<std::byte>& blocks = preload::scratch(1);
      blocks.resize(static_cast<std::size_t>(ranks) * block);
      auto at = [&](int rank) { return blocks.data() + static_cast<std::size_t>(rank) * block; };
      const auto items = static_cast<std::size_t>(count);
      if (in_place && received.dense) {
        cachecomm::detail::copy_memory(at(me), block_at(recvbuf, displs, me, received), block);
      } else if (in_place) {
        preload::pack(block_at(recvbuf, displs, me, received), items, recvtype, received, at(me),
                      comm);
      }
      cachecomm::allgather(fast, send, blocks.data(), block, cachecomm::datatype::byte, algorithm);
      for (int rank = 0; rank < ranks; ++rank) {
        if (in_place && rank == me) continue;
        if (received.dense) {
          cachecomm::detail::copy_memory(block_at(recvbuf, displs, rank, received), at(rank),
                                         block);
        } else {
          preload::unpack(at(rank), items, recvtype, received,
                          block_at(recvbuf, displs, rank, received), comm);
        }
      }
    }
    if (own_bytes != block)
      preload::throw_truncate("MPI_Allgatherv", "this rank sends", own_bytes, block);
  });
}

/// MPI_Reduce_scatter's counts as cachecomm takes them: in `small` when they fit (no thread-local
/// lookup on the small calls' path), otherwise in this thread's vector (refilled by every call).
template <std::size_t N>
std::span<const std::size_t> element_counts(const int* counts, int ranks,
                                            std::array<std::size_t, N>& small) {
  const auto n = static_cast<std::size_t>(ranks);
  if (n <= N) {
    std::copy(counts, counts + ranks, small.begin());
    return {small.data(), n};
  }
  thread_local std::vector<std::size_t> converted;
  converted.assign(counts, counts + ranks);
  return converted;
}

}  // namespace

extern "C" {

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  constexpr call_kind kind = call_kind::reduce_scatter_block;
  if (preload::inside_cachecomm() || (recvcount == 0 && preload::empty_passes(kind, comm)))
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
  auto pass = [&] {
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
  };
  preload::route r = route_call(kind, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(kind, r.why_not, pass);
  outcome why = outcome::served;
  const auto reduction = preload::reduction_for(datatype, op, why);
  if (!reduction) return pass_through(kind, why, pass);
  if (recvcount < 0) return pass_through(kind, outcome::invalid_argument, pass);
  const void* send = sendbuf == MPI_IN_PLACE ? cachecomm::in_place : sendbuf;
  return serve(kind, comm, "MPI_Reduce_scatter_block", [&] {
    cachecomm::reduce_scatter_block(*r.fast, send, recvbuf, static_cast<std::size_t>(recvcount),
                                    reduction->type, reduction->op);
  });
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  constexpr call_kind kind = call_kind::reduce_scatter;
  auto pass = [&] { return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm); };
  if (preload::inside_cachecomm()) return pass();
  preload::route r = route_call(kind, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(kind, r.why_not, pass);
  outcome why = outcome::served;
  const auto reduction = preload::reduction_for(datatype, op, why);
  if (!reduction) return pass_through(kind, why, pass);
  const int ranks = r.fast->size();
  if (recvcounts == nullptr || any_negative(recvcounts, ranks))
    return pass_through(kind, outcome::invalid_argument, pass);
  const void* send = sendbuf == MPI_IN_PLACE ? cachecomm::in_place : sendbuf;
  return serve(kind, comm, "MPI_Reduce_scatter", [&] {
    std::array<std::size_t, 64> small;  // NOLINT(*-member-init): element_counts writes it
    cachecomm::reduce_scatter(*r.fast, send, recvbuf, element_counts(recvcounts, ranks, small),
                              reduction->type, reduction->op);
  });
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  constexpr call_kind kind = call_kind::allgatherv;
  auto pass = [&] {
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm);
  };
  if (preload::inside_cachecomm()) return pass();
  preload::route r = route_call(kind, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(kind, r.why_not, pass);
  const int ranks = r.fast->size();
  outcome why = outcome::served;
  const auto received = preload::layout_of(recvtype, why);
  if (!received) return pass_through(kind, why, pass);
  if (recvcounts == nullptr || displs == nullptr || any_negative(recvcounts, ranks))
    return pass_through(kind, outcome::invalid_argument, pass);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  std::optional<preload::type_layout> sent;
  if (!in_place) {
    sent = preload::layout_of(sendtype, why);
    if (!sent) return pass_through(kind, why, pass);
    if (sendcount < 0) return pass_through(kind, outcome::invalid_argument, pass);
  }
  if (received->size == 0 ||
      std::all_of(recvcounts, recvcounts + ranks, [](int n) { return n == 0; }))
    return pass_through(kind, outcome::empty, pass);
  if (equal_counts(recvcounts, ranks) &&
      static_cast<std::size_t>(recvcounts[0]) * received->size <= allgather_block_limit) {
    return served_as_allgather(sendbuf, sendcount, sendtype, sent, recvbuf, recvcounts[0], displs,
                               recvtype, *received, comm, *r.fast, pass);
  }
  // MPI requires the same recvcounts on every rank: the largest block is the same everywhere.
  const std::size_t largest =
      static_cast<std::size_t>(*std::max_element(recvcounts, recvcounts + ranks)) * received->size;
  constexpr auto tuned = cachecomm::detail::tuned_op::allgatherv;
  int error = MPI_SUCCESS;
  const preload::planned_call plan =
      preload::plan_call(kind, "MPI_Allgatherv", comm, *r.fast, tuned, largest, error);
  if (error != MPI_SUCCESS) return error;
  const auto algorithm = static_cast<cachecomm::allgatherv_algorithm>(plan.algorithm);
  return preload::run_planned(
      kind, "MPI_Allgatherv", comm, *r.fast, plan, tuned, largest, pass, [&] {
        const int me = r.fast->rank();
        const receive_blocks& blocks = blocks_of(recvbuf, recvcounts, displs, ranks, *received);
        std::size_t own_bytes = blocks.bytes[static_cast<std::size_t>(me)];
        const void* send = cachecomm::in_place;
        if (!in_place) {
          own_bytes = static_cast<std::size_t>(sendcount) * sent->size;
          send = sendbuf;
          if (!sent->dense) {
            std::vector<std::byte>& own = preload::scratch(0);
            own.resize(own_bytes);
            preload::pack(sendbuf, static_cast<std::size_t>(sendcount), sendtype, *sent, own.data(),
                          comm);
            send = own.data();
          }
        }
        if (received->dense) {
          cachecomm::allgatherv(*r.fast, send, own_bytes, blocks.base, blocks.bytes, blocks.offsets,
                                cachecomm::datatype::byte, algorithm);
          return;
        }
        std::vector<std::byte>& packed = preload::scratch(1);
        packed.resize(blocks.packed_total);
        if (in_place) {
          preload::pack(block_at(recvbuf, displs, me, *received),
                        static_cast<std::size_t>(recvcounts[me]), recvtype, *received,
                        packed.data() + blocks.packed[static_cast<std::size_t>(me)], comm);
        }
        cachecomm::allgatherv(*r.fast, send, own_bytes, packed.data(), blocks.bytes, blocks.packed,
                              cachecomm::datatype::byte, algorithm);
        for (int rank = 0; rank < ranks; ++rank) {
          preload::unpack(packed.data() + blocks.packed[static_cast<std::size_t>(rank)],
                          static_cast<std::size_t>(recvcounts[rank]), recvtype, *received,
                          block_at(recvbuf, displs, rank, *received), comm);
        }
      });
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  constexpr call_kind kind = call_kind::gatherv;
  auto pass = [&] {
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                        comm);
  };
  if (preload::inside_cachecomm()) return pass();
  preload::route r = route_call(kind, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(kind, r.why_not, pass);
  if (!valid_root(*r.fast, root)) return pass_through(kind, outcome::invalid_argument, pass);
  const int ranks = r.fast->size();
  const bool is_root = r.fast->rank() == root;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && !is_root) return pass_through(kind, outcome::invalid_argument, pass);
  outcome why = outcome::served;
  std::optional<preload::type_layout> sent;
  std::optional<preload::type_layout> received;
  if (!in_place) {
    sent = preload::layout_of(sendtype, why);
    if (!sent) return pass_through(kind, why, pass);
    if (sendcount < 0) return pass_through(kind, outcome::invalid_argument, pass);
  }
  if (is_root) {
    received = preload::layout_of(recvtype, why);
    if (!received) return pass_through(kind, why, pass);
    if (recvcounts == nullptr || displs == nullptr || any_negative(recvcounts, ranks))
      return pass_through(kind, outcome::invalid_argument, pass);
  }
  return serve(kind, comm, "MPI_Gatherv", [&] {
    std::size_t own_bytes = 0;
    const void* send = cachecomm::in_place;
    if (!in_place) {
      own_bytes = static_cast<std::size_t>(sendcount) * sent->size;
      send = sendbuf;
      if (!sent->dense) {
        std::vector<std::byte>& own = preload::scratch(0);
        own.resize(own_bytes);
        preload::pack(sendbuf, static_cast<std::size_t>(sendcount), sendtype, *sent, own.data(),
                      comm);
        send = own.data();
      }
    }
    if (!is_root) {
      cachecomm::gatherv(*r.fast, send, own_bytes, nullptr, {}, {}, cachecomm::datatype::byte,
                         root);
      return;
    }
    const receive_blocks& blocks = blocks_of(recvbuf, recvcounts, displs, ranks, *received);
    if (received->dense) {
      cachecomm::gatherv(*r.fast, send, own_bytes, blocks.base, blocks.bytes, blocks.offsets,
                         cachecomm::datatype::byte, root);
      return;
    }
    std::vector<std::byte>& packed = preload::scratch(1);
    packed.resize(blocks.packed_total);
    if (in_place) {
      preload::pack(block_at(recvbuf, displs, root, *received),
                    static_cast<std::size_t>(recvcounts[root]), recvtype, *received,
                    packed.data() + blocks.packed[static_cast<std::size_t>(root)], comm);
    }
    cachecomm::gatherv(*r.fast, send, own_bytes, packed.data(), blocks.bytes, blocks.packed,
                       cachecomm::datatype::byte, root);
    for (int rank = 0; rank < ranks; ++rank) {
      if (in_place && rank == root) continue;
      preload::unpack(packed.data() + blocks.packed[static_cast<std::size_t>(rank)],
                      static_cast<std::size_t>(recvcounts[rank]), recvtype, *received,
                      block_at(recvbuf, displs, rank, *received), comm);
    }
  });
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  constexpr call_kind kind = call_kind::scatterv;
  auto pass = [&] {
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                         comm);
  };
  if (preload::inside_cachecomm()) return pass();
  preload::route r = route_call(kind, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(kind, r.why_not, pass);
  if (!valid_root(*r.fast, root)) return pass_through(kind, outcome::invalid_argument, pass);
  const int ranks = r.fast->size();
  const bool is_root = r.fast->rank() == root;
  const bool in_place = recvbuf == MPI_IN_PLACE;
  if (in_place && !is_root) return pass_through(kind, outcome::invalid_argument, pass);
  outcome why = outcome::served;
  std::optional<preload::type_layout> sent;
  std::optional<preload::type_layout> received;
  if (is_root) {
    sent = preload::layout_of(sendtype, why);
    if (!sent) return pass_through(kind, why, pass);
    if (sendcounts == nullptr || displs == nullptr || any_negative(sendcounts, ranks))
      return pass_through(kind, outcome::invalid_argument, pass);
  }
  if (!in_place) {
    received = preload::layout_of(recvtype, why);
    if (!received) return pass_through(kind, why, pass);
    if (recvcount < 0) return pass_through(kind, outcome::invalid_argument, pass);
  }
  return serve(kind, comm, "MPI_Scatterv", [&] {
    const std::size_t own_bytes =
        in_place ? 0 : static_cast<std::size_t>(recvcount) * received->size;
    const bool unpack = !in_place && !received->dense;
    void* receive = in_place ? cachecomm::in_place_receive : recvbuf;
    if (unpack) {
      std::vector<std::byte>& mine = preload::scratch(1);
      mine.resize(own_bytes);
      receive = mine.data();
    }
    if (!is_root) {
      cachecomm::scatterv(*r.fast, nullptr, {}, {}, receive, own_bytes, cachecomm::datatype::byte,
                          root);
    } else {
      // The root's blocks as bytes: in place from its buffer when dense, otherwise packed.
      const receive_blocks& blocks =
          blocks_of(const_cast<void*>(sendbuf), sendcounts, displs, ranks, *sent);
      const void* send = blocks.base;
      if (!sent->dense) {
        std::vector<std::byte>& packed = preload::scratch(0);
        packed.resize(blocks.packed_total);
        for (int rank = 0; rank < ranks; ++rank) {
          preload::pack(block_at(const_cast<void*>(sendbuf), displs, rank, *sent),
                        static_cast<std::size_t>(sendcounts[rank]), sendtype, *sent,
                        packed.data() + blocks.packed[static_cast<std::size_t>(rank)], comm);
        }
        send = packed.data();
      }
      const std::size_t own = in_place ? blocks.bytes[static_cast<std::size_t>(root)] : own_bytes;
      cachecomm::scatterv(*r.fast, send, blocks.bytes, blocks.offsets, receive, own,
                          cachecomm::datatype::byte, root);
    }
    if (unpack) {
      preload::unpack(preload::scratch(1).data(), static_cast<std::size_t>(recvcount), recvtype,
                      *received, recvbuf, comm);
    }
  });
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  constexpr call_kind kind = call_kind::alltoallv;
  auto pass = [&] {
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
  };
  if (preload::inside_cachecomm()) return pass();
  preload::route r = route_call(kind, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(kind, r.why_not, pass);
  const int ranks = r.fast->size();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  outcome why = outcome::served;
  const auto received = preload::layout_of(recvtype, why);
  if (!received) return pass_through(kind, why, pass);
  if (recvcounts == nullptr || rdispls == nullptr || any_negative(recvcounts, ranks))
    return pass_through(kind, outcome::invalid_argument, pass);
  std::optional<preload::type_layout> sent;
  if (!in_place) {
    sent = preload::layout_of(sendtype, why);
    if (!sent) return pass_through(kind, why, pass);
    if (sendcounts == nullptr || sdispls == nullptr || any_negative(sendcounts, ranks))
      return pass_through(kind, outcome::invalid_argument, pass);
  }
  return serve(kind, comm, "MPI_Alltoallv", [&] {
    std::array<receive_blocks, 2>& sides = reusable_blocks();  // one thread-local lookup
    const receive_blocks& into =
        fill_blocks(sides[0], recvbuf, recvcounts, rdispls, ranks, *received);
    void* receive = into.base;
    if (!received->dense) {
      std::vector<std::byte>& packed = preload::scratch(1);
      packed.resize(into.packed_total);
      if (in_place) {
        for (int rank = 0; rank < ranks; ++rank) {
          preload::pack(block_at(recvbuf, rdispls, rank, *received),
                        static_cast<std::size_t>(recvcounts[rank]), recvtype, *received,
                        packed.data() + into.packed[static_cast<std::size_t>(rank)], comm);
        }
      }
      receive = packed.data();
    }
    if (in_place) {
      cachecomm::alltoallv(*r.fast, cachecomm::in_place, {}, {}, receive, into.bytes, into.offsets,
                           cachecomm::datatype::byte);
    } else {
      // The send blocks as bytes: from the program's buffer when dense, otherwise packed.
      const receive_blocks& from =
          fill_blocks(sides[1], const_cast<void*>(sendbuf), sendcounts, sdispls, ranks, *sent);
      const void* send = from.base;
      if (!sent->dense) {
        std::vector<std::byte>& packed = preload::scratch(0);
        packed.resize(from.packed_total);
        for (int rank = 0; rank < ranks; ++rank) {
          preload::pack(block_at(const_cast<void*>(sendbuf), sdispls, rank, *sent),
                        static_cast<std::size_t>(sendcounts[rank]), sendtype, *sent,
                        packed.data() + from.packed[static_cast<std::size_t>(rank)], comm);
        }
        send = packed.data();
      }
      cachecomm::alltoallv(*r.fast, send, from.bytes, from.offsets, receive, into.bytes,
                           into.offsets, cachecomm::datatype::byte);
    }
    if (!received->dense) {
      for (int rank = 0; rank < ranks; ++rank) {
        preload::unpack(preload::scratch(1).data() + into.packed[static_cast<std::size_t>(rank)],
                        static_cast<std::size_t>(recvcounts[rank]), recvtype, *received,
                        block_at(recvbuf, rdispls, rank, *received), comm);
      }
    }
  });
}

}  // extern "C"
