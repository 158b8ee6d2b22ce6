// MPI_Gather, MPI_Scatter and MPI_Alltoall: served by cachecomm when it handles the case, otherwise
// passed to PMPI with the reason counted.
//
// As in intercept_collectives.cpp, every decision depends only on what MPI requires to match on all
// ranks (communicator, root, the bytes of one block), never on the datatype a rank used where MPI
// lets it differ; only the arguments MPI calls significant on a rank are read there (a non-root's
// receive buffer and type in MPI_Gather may be anything). Datatypes that are not dense are packed.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "cachecomm/error.hpp"
#include "preload/collective_routing.hpp"
#include "preload/type_layout.hpp"

namespace preload = cachecomm::detail::preload;
using cachecomm::detail::tuned_op;
using preload::call_kind;
using preload::outcome;
using preload::pass_through;
using preload::plan_call;
using preload::planned_call;
using preload::route_call;
using preload::run_planned;
using preload::valid_root;

namespace {

std::size_t bytes_of(int count, const preload::type_layout& layout) {
  return static_cast<std::size_t>(count) * layout.size;
}

const std::byte* at_block(const void* buffer, std::size_t block, int count,
                          const preload::type_layout& layout) {
  return static_cast<const std::byte*>(buffer) +
         static_cast<std::ptrdiff_t>(block) * count * layout.extent;
}

}  // namespace

extern "C" {

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  // Both counts zero: whichever of them this rank's role makes significant, the block is empty.
  if (preload::inside_cachecomm() ||
      (sendcount == 0 && recvcount == 0 && preload::empty_passes(call_kind::gather, comm)))
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  auto pass = [&] {
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  };
  preload::route r = route_call(call_kind::gather, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(call_kind::gather, r.why_not, pass);
  if (!valid_root(*r.fast, root))
    return pass_through(call_kind::gather, outcome::invalid_argument, pass);
  const bool is_root = r.fast->rank() == root;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && !is_root) return pass_through(call_kind::gather, outcome::invalid_argument, pass);
  outcome why = outcome::served;
  std::optional<preload::type_layout> sent;
  std::optional<preload::type_layout> received;
  if (!in_place) {
    sent = preload::layout_of(sendtype, why);
    if (!sent) return pass_through(call_kind::gather, why, pass);
    if (sendcount < 0) return pass_through(call_kind::gather, outcome::invalid_argument, pass);
  }
  if (is_root) {
    received = preload::layout_of(recvtype, why);
    if (!received) return pass_through(call_kind::gather, why, pass);
    if (recvcount < 0) return pass_through(call_kind::gather, outcome::invalid_argument, pass);
  }
  // Every rank's block is the root's receive block: the same bytes everywhere.
  const std::size_t block = is_root ? bytes_of(recvcount, *received) : bytes_of(sendcount, *sent);
  if (block == 0) return pass_through(call_kind::gather, outcome::empty, pass);
  int error = MPI_SUCCESS;
  const planned_call plan =
      plan_call(call_kind::gather, "MPI_Gather", comm, *r.fast, tuned_op::gather, block, error);
  if (error != MPI_SUCCESS) return error;
  const auto algorithm = static_cast<cachecomm::gather_algorithm>(plan.algorithm);
  return run_planned(
      call_kind::gather, "MPI_Gather", comm, *r.fast, plan, tuned_op::gather, block, pass, [&] {
        const std::size_t own_bytes = in_place ? block : bytes_of(sendcount, *sent);
        const void* send =
            in_place ? cachecomm::in_place
                     : preload::dense_send_block(sendbuf, static_cast<std::size_t>(sendcount),
                                                 sendtype, *sent, block, comm);
        if (!is_root) {
          cachecomm::gather(*r.fast, send, nullptr, block, cachecomm::datatype::byte, root,
                            algorithm);
          return;
        }
        const auto ranks = static_cast<std::size_t>(r.fast->size());
        if (received->dense) {
          cachecomm::gather(*r.fast, send, recvbuf, block, cachecomm::datatype::byte, root,
                            algorithm);
        } else {
          std::vector<std::byte>& blocks = preload::scratch(1);
          blocks.resize(ranks * block);
          if (in_place) {
            preload::pack(at_block(recvbuf, static_cast<std::size_t>(root), recvcount, *received),
                          static_cast<std::size_t>(recvcount), recvtype, *received,
                          blocks.data() + static_cast<std::size_t>(root) * block, comm);
          }
          cachecomm::gather(*r.fast, send, blocks.data(), block, cachecomm::datatype::byte, root,
                            algorithm);
          preload::unpack(blocks.data(), ranks * static_cast<std::size_t>(recvcount), recvtype,
                          *received, recvbuf, comm);
        }
        if (own_bytes != block)
          preload::throw_truncate("MPI_Gather", "the root sends", own_bytes, block);
      });
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (preload::inside_cachecomm() ||
      (sendcount == 0 && recvcount == 0 && preload::empty_passes(call_kind::scatter, comm)))
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  auto pass = [&] {
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  };
  preload::route r = route_call(call_kind::scatter, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(call_kind::scatter, r.why_not, pass);
  if (!valid_root(*r.fast, root))
    return pass_through(call_kind::scatter, outcome::invalid_argument, pass);
  const bool is_root = r.fast->rank() == root;
  const bool in_place = recvbuf == MPI_IN_PLACE;
  if (in_place && !is_root)
    return pass_through(call_kind::scatter, outcome::invalid_argument, pass);
  outcome why = outcome::served;
  std::optional<preload::type_layout> sent;
  std::optional<preload::type_layout> received;
  if (is_root) {
    sent = preload::layout_of(sendtype, why);
    if (!sent) return pass_through(call_kind::scatter, why, pass);
    if (sendcount < 0) return pass_through(call_kind::scatter, outcome::invalid_argument, pass);
  }
  if (!in_place) {
    received = preload::layout_of(recvtype, why);
    if (!received) return pass_through(call_kind::scatter, why, pass);
    if (recvcount < 0) return pass_through(call_kind::scatter, outcome::invalid_argument, pass);
  }
  // Every block is the root's send block: the same bytes everywhere.
  const std::size_t block = is_root ? bytes_of(sendcount, *sent) : bytes_of(recvcount, *received);
  if (block == 0) return pass_through(call_kind::scatter, outcome::empty, pass);
  int error = MPI_SUCCESS;
  const planned_call plan =
      plan_call(call_kind::scatter, "MPI_Scatter", comm, *r.fast, tuned_op::scatter, block, error);
  if (error != MPI_SUCCESS) return error;
  const auto algorithm = static_cast<cachecomm::scatter_algorithm>(plan.algorithm);
  return run_planned(
      call_kind::scatter, "MPI_Scatter", comm, *r.fast, plan, tuned_op::scatter, block, pass, [&] {
        const auto ranks = static_cast<std::size_t>(r.fast->size());
        const void* send = sendbuf;
        if (is_root && !sent->dense) {
          std::vector<std::byte>& blocks = preload::scratch(0);
          blocks.resize(ranks * block);
          preload::pack(sendbuf, ranks * static_cast<std::size_t>(sendcount), sendtype, *sent,
                        blocks.data(), comm);
          send = blocks.data();
        }
        if (in_place) {
          cachecomm::scatter(*r.fast, send, cachecomm::in_place_receive, block,
                             cachecomm::datatype::byte, root, algorithm);
          return;
        }
        const std::size_t own_bytes = bytes_of(recvcount, *received);
        if (received->dense && own_bytes == block) {
          cachecomm::scatter(*r.fast, send, recvbuf, block, cachecomm::datatype::byte, root,
                             algorithm);
          return;
        }
        std::vector<std::byte>& mine = preload::scratch(1);
        mine.resize(block);
        cachecomm::scatter(*r.fast, send, mine.data(), block, cachecomm::datatype::byte, root,
                           algorithm);
        if (own_bytes != block)
          preload::throw_truncate("MPI_Scatter", "this rank receives", own_bytes, block);
        preload::unpack(mine.data(), static_cast<std::size_t>(recvcount), recvtype, *received,
                        recvbuf, comm);
      });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (preload::inside_cachecomm() ||
      (recvcount == 0 && preload::empty_passes(call_kind::alltoall, comm)))
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  auto pass = [&] {
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  };
  preload::route r = route_call(call_kind::alltoall, comm);
  if (r.error_code != MPI_SUCCESS) return r.error_code;
  if (r.fast == nullptr) return pass_through(call_kind::alltoall, r.why_not, pass);
  outcome why = outcome::served;
  const auto received = preload::layout_of(recvtype, why);
  if (!received) return pass_through(call_kind::alltoall, why, pass);
  if (recvcount < 0) return pass_through(call_kind::alltoall, outcome::invalid_argument, pass);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  std::optional<preload::type_layout> sent;
  if (!in_place) {
    sent = preload::layout_of(sendtype, why);
    if (!sent) return pass_through(call_kind::alltoall, why, pass);
    if (sendcount < 0) return pass_through(call_kind::alltoall, outcome::invalid_argument, pass);
  }
  // Every rank receives blocks of this size from every rank.
  const std::size_t block = bytes_of(recvcount, *received);
  if (block == 0) return pass_through(call_kind::alltoall, outcome::empty, pass);
  int error = MPI_SUCCESS;
  const planned_call plan = plan_call(call_kind::alltoall, "MPI_Alltoall", comm, *r.fast,
                                      tuned_op::alltoall, block, error);
  if (error != MPI_SUCCESS) return error;
  const auto algorithm = static_cast<cachecomm::alltoall_algorithm>(plan.algorithm);
  return run_planned(
      call_kind::alltoall, "MPI_Alltoall", comm, *r.fast, plan, tuned_op::alltoall, block, pass,
      [&] {
        const auto ranks = static_cast<std::size_t>(r.fast->size());
        const auto items = ranks * static_cast<std::size_t>(recvcount);
        const std::size_t own_bytes = in_place ? block : bytes_of(sendcount, *sent);
        const void* send = in_place ? cachecomm::in_place : sendbuf;
        if (own_bytes != block) {
          // An erroneous program: take part with zeros (the others are waiting),
          // then report it.
          std::vector<std::byte>& zeros = preload::scratch(0);
          zeros.assign(ranks * block, std::byte{0});
          send = zeros.data();
        } else if (!in_place && !sent->dense) {
          std::vector<std::byte>& packed = preload::scratch(0);
          packed.resize(ranks * block);
          preload::pack(sendbuf, ranks * static_cast<std::size_t>(sendcount), sendtype, *sent,
                        packed.data(), comm);
          send = packed.data();
        } else if (in_place && !received->dense) {
          std::vector<std::byte>& packed = preload::scratch(0);
          packed.resize(ranks * block);
          preload::pack(recvbuf, items, recvtype, *received, packed.data(), comm);
          send = packed.data();
        }
        if (received->dense) {
          cachecomm::alltoall(*r.fast, send, recvbuf, block, cachecomm::datatype::byte, algorithm);
        } else {
          std::vector<std::byte>& blocks = preload::scratch(1);
          blocks.resize(ranks * block);
          cachecomm::alltoall(*r.fast, send, blocks.data(), block, cachecomm::datatype::byte,
                              algorithm);
          preload::unpack(blocks.data(), items, recvtype, *received, recvbuf, comm);
        }
        if (own_bytes != block)
          preload::throw_truncate("MPI_Alltoall", "this rank sends", own_bytes, block);
      });
}

}  // extern "C"
