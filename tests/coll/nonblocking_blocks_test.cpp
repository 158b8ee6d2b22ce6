// The C++ API's nonblocking block collectives and prefix reductions (igather, iscatter, ialltoall,
// ireduce_scatter_block, iscan, iexscan) against the system MPI's blocking answer computed in the
// same run, on MPI_COMM_WORLD, a duplicate and a split with the rank order reversed: types x ops x
// roots x in place, below and above the channel's slot, many outstanding, progress while one rank
// is blocked elsewhere, bit-identity of the scans with the blocking ones, and bad input.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cachecomm/cachecomm.hpp"
#include "coll/coll_test_support.hpp"

namespace cachecomm {
namespace {

using testing::all_ranks;
using testing::count_for;
using testing::fill;
using testing::largest_nonblocking_call_of;
using testing::mpi_op;
using testing::mpi_type;
using testing::sizes_for;
using testing::slot_bytes_of;

/// World, a duplicate, and a split into two halves with the rank order reversed.
struct comm_kind {
  std::string name;
  MPI_Comm handle = MPI_COMM_NULL;
  bool owned = false;
};
std::vector<comm_kind> comm_kinds() {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<comm_kind> kinds{{"world", MPI_COMM_WORLD, false}};
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  kinds.push_back({"dup", dup, true});
  MPI_Comm split = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &split);
  kinds.push_back({"split", split, true});
  return kinds;
}
void free_kinds(std::vector<comm_kind>& kinds) {
  for (comm_kind& kind : kinds) {
    if (kind.owned) MPI_Comm_free(&kind.handle);
  }
}

/// Runs `body(comm&, MPI_Comm, name)` on every communicator kind, the channel built.
template <typename Body>
void on_every_comm(Body&& body) {
  std::vector<comm_kind> kinds = comm_kinds();
  for (const comm_kind& kind : kinds) {
    comm c(kind.handle);
    prepare_nonblocking(c);
    body(c, kind.handle, kind.name);
  }
  free_kinds(kinds);
}

/// The path a call putting `bytes` into the channel (a block per rank where `block_per_rank`)
/// must take once it is built.
nonblocking_path expected_path(comm& c, std::size_t bytes, bool block_per_rank = false) {
  if (bytes == 0) return nonblocking_path::local;
  if (c.topology().node_count != 1) return nonblocking_path::system_mpi;
  return bytes <= largest_nonblocking_call_of(c, block_per_rank) ? nonblocking_path::shared_memory
                                                                 : nonblocking_path::system_mpi;
}

std::string describe(const std::string& where, const char* what, datatype type, std::size_t count,
                     int root, bool in_place_call) {
  return where + " " + what + " type=" + std::string(to_string(type)) +
         " count=" + std::to_string(count) + " root=" + std::to_string(root) +
         (in_place_call ? " in-place" : "");
}

const std::vector<datatype> block_types = {datatype::uint8, datatype::float64, datatype::complex64};

TEST(NonblockingBlocks, IgatherMatchesMpiAtEveryRoot) {
  on_every_comm([](comm& c, MPI_Comm mpi, const std::string& where) {
    const auto ranks = static_cast<std::size_t>(c.size());
    for (std::size_t bytes : sizes_for(c)) {
      for (datatype type : block_types) {
        for (int root = 0; root < c.size(); ++root) {
          for (bool in_place_call : {false, true}) {
            const std::size_t count = count_for(bytes, type);
            const std::size_t block = count * size_of(type);
            const bool at_root = c.rank() == root;
            const bool use_in_place = in_place_call && at_root;
            std::vector<std::byte> send(block), got(block * ranks, std::byte{0x5a}),
                want(block * ranks);
            fill(send.data(), count, type, reduce_op::sum, c.rank(), 21);
            MPI_Gather(send.data(), static_cast<int>(count), mpi_type(type), want.data(),
                       static_cast<int>(count), mpi_type(type), root, mpi);
            if (use_in_place)
              std::memcpy(got.data() + static_cast<std::size_t>(c.rank()) * block, send.data(),
                          block);
            collective_request r =
                igather(c, use_in_place ? in_place : send.data(), got.data(), count, type, root);
            const std::string what = describe(where, "igather", type, count, root, use_in_place);
            EXPECT_EQ(r.path(), expected_path(c, block)) << what;
            r.wait();
            if (at_root) {
              EXPECT_EQ(got, want) << what;
            } else {
              EXPECT_TRUE(std::all_of(got.begin(), got.end(),
                                      [](std::byte b) { return b == std::byte{0x5a}; }))
                  << what << ": a non-root's receive buffer was written";
            }
          }
        }
      }
    }
  });
}

TEST(NonblockingBlocks, IscatterMatchesMpiAtEveryRoot) {
  on_every_comm([](comm& c, MPI_Comm mpi, const std::string& where) {
    const auto ranks = static_cast<std::size_t>(c.size());
    for (std::size_t bytes : sizes_for(c)) {
      for (datatype type : block_types) {
        for (int root = 0; root < c.size(); ++root) {
          for (bool in_place_call : {false, true}) {
            const std::size_t count = count_for(bytes, type);
            const std::size_t block = count * size_of(type);
            const bool at_root = c.rank() == root;
            const bool use_in_place = in_place_call && at_root;
            std::vector<std::byte> send(block * ranks), got(block), want(block);
            fill(send.data(), count * ranks, type, reduce_op::sum, c.rank(), 23);
            MPI_Scatter(send.data(), static_cast<int>(count), mpi_type(type), want.data(),
                        static_cast<int>(count), mpi_type(type), root, mpi);
            collective_request r = iscatter(
                c, send.data(), use_in_place ? in_place_receive : got.data(), count, type, root);
            const std::string what = describe(where, "iscatter", type, count, root, use_in_place);
            EXPECT_EQ(r.path(), expected_path(c, block)) << what;
            r.wait();
            if (!use_in_place) {
              EXPECT_EQ(got, want) << what;
            }
          }
        }
      }
    }
  });
}

TEST(NonblockingBlocks, IalltoallMatchesMpi) {
  on_every_comm([](comm& c, MPI_Comm mpi, const std::string& where) {
    const auto ranks = static_cast<std::size_t>(c.size());
    for (std::size_t bytes : sizes_for(c)) {
      for (datatype type : block_types) {
        for (bool in_place_call : {false, true}) {
          const std::size_t count = count_for(bytes, type);
          const std::size_t block = count * size_of(type);
          std::vector<std::byte> send(block * ranks), got(block * ranks), want(block * ranks);
          fill(send.data(), count * ranks, type, reduce_op::sum, c.rank(), 25);
          MPI_Alltoall(send.data(), static_cast<int>(count), mpi_type(type), want.data(),
                       static_cast<int>(count), mpi_type(type), mpi);
          if (in_place_call) got = send;
          collective_request r =
              ialltoall(c, in_place_call ? in_place : send.data(), got.data(), count, type);
          const std::string what = describe(where, "ialltoall", type, count, 0, in_place_call);
          EXPECT_EQ(r.path(), expected_path(c, block * ranks, true)) << what;
          r.wait();
          EXPECT_EQ(got, want) << what;
        }
      }
    }
  });
}

TEST(NonblockingBlocks, IreduceScatterBlockMatchesMpi) {
  on_every_comm([](comm& c, MPI_Comm mpi, const std::string& where) {
    const auto ranks = static_cast<std::size_t>(c.size());
    for (std::size_t bytes : sizes_for(c)) {
      for (datatype type : {datatype::int32, datatype::float64, datatype::complex64}) {
        for (reduce_op op : {reduce_op::sum, reduce_op::max, reduce_op::product}) {
          if (!supports(type, op)) continue;
          for (bool in_place_call : {false, true}) {
            const std::size_t count = count_for(bytes, type);
            const std::size_t block = count * size_of(type);
            std::vector<std::byte> send(block * ranks), got(block * ranks), want(block);
            fill(send.data(), count * ranks, type, op, c.rank(), 27);
            MPI_Reduce_scatter_block(send.data(), want.data(), static_cast<int>(count),
                                     mpi_type(type), mpi_op(op), mpi);
            if (in_place_call) got = send;
            collective_request r = ireduce_scatter_block(c, in_place_call ? in_place : send.data(),
                                                         got.data(), count, type, op);
            const std::string what =
                describe(where, "ireduce_scatter_block", type, count, 0, in_place_call) +
                " op=" + std::string(to_string(op));
            EXPECT_EQ(r.path(), expected_path(c, block * ranks, true)) << what;
            r.wait();
            EXPECT_TRUE(testing::same_values(got.data(), want.data(), count, type)) << what;
          }
        }
      }
    }
  });
}

TEST(NonblockingBlocks, IscanAndIexscanMatchMpiAndTheBlockingBits) {
  on_every_comm([](comm& c, MPI_Comm mpi, const std::string& where) {
    for (std::size_t bytes : sizes_for(c)) {
      for (datatype type : {datatype::int64, datatype::float64, datatype::float32}) {
        for (reduce_op op : {reduce_op::sum, reduce_op::min, reduce_op::product}) {
          for (bool exclusive : {false, true}) {
            for (bool in_place_call : {false, true}) {
              const std::size_t count = count_for(bytes, type);
              const std::size_t n = count * size_of(type);
              std::vector<std::byte> send(n), got(n, std::byte{0x5a}), want(n), blocking(n);
              fill(send.data(), count, type, op, c.rank(), 29);
              const int mpi_count = static_cast<int>(count);
              if (exclusive) {
                MPI_Exscan(send.data(), want.data(), mpi_count, mpi_type(type), mpi_op(op), mpi);
                exscan(c, send.data(), blocking.data(), count, type, op);
              } else {
                MPI_Scan(send.data(), want.data(), mpi_count, mpi_type(type), mpi_op(op), mpi);
                scan(c, send.data(), blocking.data(), count, type, op);
              }
              if (in_place_call) got = send;
              const void* input = in_place_call ? in_place : send.data();
              collective_request r = exclusive ? iexscan(c, input, got.data(), count, type, op)
                                               : iscan(c, input, got.data(), count, type, op);
              const std::string what =
                  describe(where, exclusive ? "iexscan" : "iscan", type, count, 0, in_place_call) +
                  " op=" + std::string(to_string(op));
              EXPECT_EQ(r.path(), expected_path(c, n)) << what;
              r.wait();
              if (exclusive && c.rank() == 0) {
                // Undefined in MPI; cachecomm's channel leaves the buffer as it was.
                const std::vector<std::byte> before =
                    in_place_call ? send : std::vector<std::byte>(n, std::byte{0x5a});
                if (r.path() == nonblocking_path::shared_memory) {
                  EXPECT_EQ(got, before) << what;
                }
                continue;
              }
              EXPECT_TRUE(testing::same_values(got.data(), want.data(), count, type)) << what;
              // The same operation order as the blocking call: the same bits.
              EXPECT_EQ(std::memcmp(got.data(), blocking.data(), n), 0) << what;
            }
          }
        }
      }
    }
  });
}

/// One request of each new call, all outstanding at once, and their expected results. `which`
/// picks the calls (bit k: the k-th below); all six by default.
enum : unsigned {
  all_six = 0x3f,
  alltoall_bit = 1,
  gather_bit = 2,
  scatter_bit = 4,
  rsb_bit = 8,
  scan_bit = 16,
  exscan_bit = 32
};
struct block_batch {
  unsigned which = all_six;
  std::vector<double> send, alltoall_out, gather_out, scatter_out, rsb_out, scan_out, exscan_out;
};
std::vector<collective_request> start_all(comm& c, block_batch& b, std::size_t count,
                                          unsigned which = all_six) {
  const auto ranks = static_cast<std::size_t>(c.size());
  b.which = which;
  b.send.resize(count * ranks);
  for (std::size_t i = 0; i < b.send.size(); ++i)
    b.send[i] = static_cast<double>(c.rank() * 1000) + static_cast<double>(i);
  b.alltoall_out.assign(count * ranks, -1);
  b.gather_out.assign(count * ranks, -1);
  b.scatter_out.assign(count, -1);
  b.rsb_out.assign(count, -1);
  b.scan_out.assign(count, -1);
  b.exscan_out.assign(count, -1);
  const int last = c.size() - 1;
  const auto f64 = datatype::float64;
  std::vector<collective_request> requests;
  if ((which & alltoall_bit) != 0)
    requests.push_back(ialltoall(c, b.send.data(), b.alltoall_out.data(), count, f64));
  if ((which & gather_bit) != 0)
    requests.push_back(igather(c, b.send.data(), b.gather_out.data(), count, f64, last));
  if ((which & scatter_bit) != 0)
    requests.push_back(iscatter(c, b.send.data(), b.scatter_out.data(), count, f64, 0));
  if ((which & rsb_bit) != 0) {
    requests.push_back(
        ireduce_scatter_block(c, b.send.data(), b.rsb_out.data(), count, f64, reduce_op::sum));
  }
  if ((which & scan_bit) != 0)
    requests.push_back(iscan(c, b.send.data(), b.scan_out.data(), count, f64, reduce_op::sum));
  if ((which & exscan_bit) != 0)
    requests.push_back(iexscan(c, b.send.data(), b.exscan_out.data(), count, f64, reduce_op::sum));
  return requests;
}
void expect_all(comm& c, const block_batch& b, std::size_t count) {
  const int me = c.rank();
  const int ranks = c.size();
  const unsigned which = b.which;
  auto input = [&](int rank, std::size_t i) {
    return static_cast<double>(rank * 1000) + static_cast<double>(i);
  };
  for (std::size_t i = 0; i < count * static_cast<std::size_t>(ranks); ++i) {
    const auto from = static_cast<int>(i / count);
    if ((which & alltoall_bit) != 0) {
      EXPECT_EQ(b.alltoall_out[i], input(from, static_cast<std::size_t>(me) * count + i % count));
    }
    if ((which & gather_bit) != 0 && me == ranks - 1) {
      EXPECT_EQ(b.gather_out[i], input(from, i % count));
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t mine = static_cast<std::size_t>(me) * count + i;
    if ((which & scatter_bit) != 0) {
      EXPECT_EQ(b.scatter_out[i], input(0, mine));
    }
    double sum = 0;
    for (int rank = 0; rank < ranks; ++rank) sum += input(rank, mine);
    if ((which & rsb_bit) != 0) {
      EXPECT_EQ(b.rsb_out[i], sum);
    }
    double prefix = 0;
    for (int rank = 0; rank < me; ++rank) prefix += input(rank, i);
    if ((which & exscan_bit) != 0 && me > 0) {
      EXPECT_EQ(b.exscan_out[i], prefix);
    }
    if ((which & scan_bit) != 0) {
      EXPECT_EQ(b.scan_out[i], prefix + input(me, i));
    }
  }
}

TEST(NonblockingBlocks, OutstandingTogetherCompletedInAnyOrder) {
  on_every_comm([](comm& c, MPI_Comm /*mpi*/, const std::string& where) {
    for (std::size_t count : {std::size_t{1}, std::size_t{600}}) {
      block_batch first;
      block_batch second;
      // Twelve outstanding: more than the ring where it has 4 slots (oversubscribed), so later
      // ones go in at later passes.
      std::vector<collective_request> requests = start_all(c, first, count);
      std::vector<collective_request> more = start_all(c, second, count);
      if (c.rank() % 2 == 0) std::reverse(requests.begin(), requests.end());
      wait_all(requests);
      for (std::size_t done = 0; done < more.size(); ++done) ASSERT_LT(wait_any(more), more.size());
      SCOPED_TRACE(where);
      expect_all(c, first, count);
      expect_all(c, second, count);
    }
  });
}

TEST(NonblockingBlocks, PeersFinishWhileRankZeroIsBlockedElsewhere) {
  // Rank 0 starts the calls, then blocks in MPI_Recv until every other rank has completed all of
  // them: its data (scatter's root, every scan's first input) went in at the start. At most 4 at a
  // time: a call started while the smallest ring, 4 slots, is in use goes in at the owner's next
  // pass.
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  const std::size_t count = 8;
  for (unsigned which :
       {alltoall_bit | gather_bit | scatter_bit | rsb_bit, scan_bit | exscan_bit}) {
    block_batch b;
    std::vector<collective_request> requests = start_all(c, b, count, which);
    if (requests[0].path() != nonblocking_path::shared_memory) GTEST_SKIP() << requests[0].reason();
    if (c.rank() == 0) {
      for (int peer = 1; peer < c.size(); ++peer) {
        int token = 0;
        MPI_Recv(&token, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        EXPECT_EQ(token, peer);
      }
      wait_all(requests);
    } else {
      wait_all(requests);
      const int token = c.rank();
      MPI_Send(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
    }
    expect_all(c, b, count);
  }
}

TEST(NonblockingBlocks, BadInputNamesTheNonblockingCall) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  const auto ranks = static_cast<std::size_t>(c.size());
  std::vector<double> buffer(4 * ranks, 1.0), out(4 * ranks);
  auto message_of = [](auto&& start) -> std::string {
    try {
      collective_request r = start();
      r.wait();
    } catch (const error& e) {
      return e.what();
    }
    return "no error";
  };
  auto has = [](const std::string& message, const char* part) {
    return message.find(part) != std::string::npos;
  };
  EXPECT_PRED2(has, message_of([&] {
                 return igather(c, buffer.data(), out.data(), 4, datatype::float64, c.size());
               }),
               "cachecomm: igather: root");
  if (c.size() > 1) {
    const int other = (c.rank() + 1) % c.size();
    EXPECT_PRED2(has, message_of([&] {
                   return igather(c, in_place, out.data(), 4, datatype::float64, other);
                 }),
                 "igather: send is in_place on a rank that is not the root");
    EXPECT_PRED2(has, message_of([&] {
                   return iscatter(c, buffer.data(), in_place_receive, 4, datatype::float64, other);
                 }),
                 "iscatter: receive is in_place on a rank that is not the root");
  }
  EXPECT_PRED2(has, message_of([&] {
                 return ialltoall(c, buffer.data(), buffer.data() + 1, 2, datatype::float64);
               }),
               "ialltoall: the send and receive buffers overlap");
  EXPECT_PRED2(has, message_of([&] {
                 return ireduce_scatter_block(c, buffer.data(), out.data(), 4, datatype::float64,
                                              reduce_op::bitwise_and);
               }),
               "ireduce_scatter_block: operation");
  EXPECT_PRED2(has, message_of([&] {
                 return iscan(c, nullptr, out.data(), 4, datatype::float64, reduce_op::sum);
               }),
               "iscan: send buffer is null");
  EXPECT_PRED2(has, message_of([&] {
                 return iexscan(c, buffer.data(), out.data(), 4, datatype::float64,
                                reduce_op::replace);
               }),
               "iexscan: reduce_op::replace");
  // Ranks whose block sizes differ (both within the slot): every rank but the root of a gather
  // finishes; the root names the problem, and the comm goes on working.
  if (c.size() > 1 && c.topology().node_count == 1) {
    const std::size_t count = c.rank() == 0 ? 2 : 4;
    collective_request r = ialltoall(c, buffer.data(), out.data(), count, datatype::float64);
    try {
      r.wait();
      ADD_FAILURE() << "mismatched counts were not reported";
    } catch (const usage_error& e) {
      EXPECT_PRED2(has, std::string(e.what()), "ialltoall");
      EXPECT_PRED2(has, std::string(e.what()), "different calls");
    }
    double one = 1, total = 0;
    collective_request after = iscan(c, &one, &total, 1, datatype::float64, reduce_op::sum);
    after.wait();
    EXPECT_EQ(total, c.rank() + 1);
  }
  EXPECT_TRUE(all_ranks(true));
}

}  // namespace
}  // namespace cachecomm
