// The C++ API's nonblocking collectives (cachecomm/nonblocking.hpp) against the system MPI's
// blocking answer computed in the same run: every call x types x ops x roots x in place, below and
// above the channel's slot, many requests outstanding, progress without the owner, the destructor,
// a pipelined CG, and bad input.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
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

const std::vector<datatype> types = {datatype::int32, datatype::float64, datatype::uint8,
                                     datatype::complex64};
const std::vector<reduce_op> ops = {reduce_op::sum, reduce_op::max, reduce_op::bitwise_xor,
                                    reduce_op::product};

/// The path every call of `bytes` must take on `c` once its channel is built.
nonblocking_path expected_path(comm& c, nonblocking_collective collective, std::size_t bytes) {
  if (bytes == 0 && collective != nonblocking_collective::barrier) return nonblocking_path::local;
  if (c.topology().node_count != 1) return nonblocking_path::system_mpi;
  return bytes <= largest_nonblocking_call_of(c, false) ? nonblocking_path::shared_memory
                                                        : nonblocking_path::system_mpi;
}

std::string describe(const char* what, datatype type, reduce_op op, std::size_t count, int root,
                     bool in_place_call) {
  return std::string(what) + " type=" + std::string(to_string(type)) +
         " op=" + std::string(to_string(op)) + " count=" + std::to_string(count) +
         " root=" + std::to_string(root) + (in_place_call ? " in-place" : "");
}

TEST(Nonblocking, IallreduceMatchesMpi) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  for (std::size_t bytes : sizes_for(c)) {
    for (datatype type : types) {
      for (reduce_op op : ops) {
        if (!supports(type, op)) continue;
        for (bool in_place_call : {false, true}) {
          const std::size_t count = count_for(bytes, type);
          const std::size_t n = count * size_of(type);
          std::vector<std::byte> send(n), got(n), want(n);
          fill(send.data(), count, type, op, c.rank(), 11);
          MPI_Allreduce(send.data(), want.data(), static_cast<int>(count), mpi_type(type),
                        mpi_op(op), MPI_COMM_WORLD);
          if (in_place_call) got = send;
          collective_request r =
              iallreduce(c, in_place_call ? in_place : send.data(), got.data(), count, type, op);
          const std::string what = describe("iallreduce", type, op, count, 0, in_place_call);
          EXPECT_EQ(r.path(), expected_path(c, nonblocking_collective::allreduce, n)) << what;
          r.wait();
          EXPECT_FALSE(r.active());
          EXPECT_TRUE(testing::same_values(got.data(), want.data(), count, type)) << what;
        }
      }
    }
  }
}

/// A large iallreduce (parts of 8 KiB or more) combines by parts: each rank one part, which the
/// others copy once it is published or combine themselves while its owner is late. Either way every
/// rank gets the bits of the rank-ordered fold (inexact doubles, so any other order would show).
/// Rank r waits r x 2 ms before completing: it copies the parts of the ranks below it and combines
/// the parts of those above.
TEST(Nonblocking, SplitIallreduceGivesTheRankOrderedFold) {
  comm c(MPI_COMM_WORLD);
  // Across nodes the system MPI combines, in an order of its own.
  if (c.topology().node_count != 1) GTEST_SKIP() << "the comm spans nodes";
  prepare_nonblocking(c);
  const auto ranks = static_cast<std::size_t>(c.size());
  const std::size_t slot = slot_bytes_of(c);
  auto value = [](std::size_t rank, std::size_t i) {
    return 1.0 / (3.0 + static_cast<double>(rank) + 0.37 * static_cast<double>(i % 1009));
  };
  for (std::size_t bytes : {ranks * 8192 - 8, ranks * 8192, std::size_t{40008}, slot - 8, slot}) {
    const std::size_t count = bytes / sizeof(double);
    std::vector<double> in(count), want(count);
    for (std::size_t i = 0; i < count; ++i) {
      in[i] = value(static_cast<std::size_t>(c.rank()), i);
      want[i] = value(0, i);
      for (std::size_t rank = 1; rank < ranks; ++rank) want[i] += value(rank, i);
    }
    for (bool staggered : {false, true}) {
      std::vector<double> out(count, -1.0);
      collective_request r =
          iallreduce(c, in.data(), out.data(), count, datatype::float64, reduce_op::sum);
      EXPECT_EQ(r.path(), nonblocking_path::shared_memory);
      if (staggered) std::this_thread::sleep_for(std::chrono::milliseconds(2 * c.rank()));
      r.wait();
      EXPECT_EQ(std::memcmp(out.data(), want.data(), bytes), 0)
          << "iallreduce of " << bytes << " bytes" << (staggered ? ", staggered" : "");
    }
  }
}

TEST(Nonblocking, IreduceMatchesMpiAtEveryRoot) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  for (std::size_t bytes : {std::size_t{8}, std::size_t{4096}, slot_bytes_of(c) + 8}) {
    for (datatype type : {datatype::int64, datatype::float32}) {
      for (reduce_op op : {reduce_op::sum, reduce_op::min}) {
        for (int root = 0; root < c.size(); ++root) {
          for (bool in_place_call : {false, true}) {
            const std::size_t count = count_for(bytes, type);
            const std::size_t n = count * size_of(type);
            std::vector<std::byte> send(n), got(n, std::byte{0x5a}), want(n);
            fill(send.data(), count, type, op, c.rank(), 3);
            MPI_Reduce(send.data(), want.data(), static_cast<int>(count), mpi_type(type),
                       mpi_op(op), root, MPI_COMM_WORLD);
            const bool at_root = c.rank() == root;
            // In place at the root: the input is already in the receive buffer.
            const bool use_in_place = in_place_call && at_root;
            if (use_in_place) got = send;
            collective_request r = ireduce(c, use_in_place ? in_place : send.data(), got.data(),
                                           count, type, op, root);
            const std::string what = describe("ireduce", type, op, count, root, use_in_place);
            EXPECT_EQ(r.path(), expected_path(c, nonblocking_collective::reduce, n)) << what;
            r.wait();
            if (at_root) {
              EXPECT_TRUE(testing::same_values(got.data(), want.data(), count, type)) << what;
            } else if (!use_in_place) {
              // A non-root's receive buffer is not written.
              EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](std::byte b) {
                return b == std::byte{0x5a};
              })) << what;
            }
          }
        }
      }
    }
  }
}

TEST(Nonblocking, IbcastMatchesMpiAtEveryRoot) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  for (std::size_t bytes : sizes_for(c)) {
    for (datatype type : {datatype::byte, datatype::float64}) {
      for (int root = 0; root < c.size(); ++root) {
        const std::size_t count = count_for(bytes, type);
        const std::size_t n = count * size_of(type);
        std::vector<std::byte> want(n), got(n);
        fill(want.data(), count, type, reduce_op::sum, root, 5);
        if (c.rank() == root) got = want;
        collective_request r = ibcast(c, got.data(), count, type, root);
        const std::string what = describe("ibcast", type, reduce_op::sum, count, root, false);
        EXPECT_EQ(r.path(), expected_path(c, nonblocking_collective::broadcast, n)) << what;
        r.wait();
        EXPECT_EQ(got, want) << what;
      }
    }
  }
}

TEST(Nonblocking, IallgatherMatchesMpi) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  const auto ranks = static_cast<std::size_t>(c.size());
  for (std::size_t bytes : sizes_for(c)) {
    for (datatype type : {datatype::uint8, datatype::complex128}) {
      for (bool in_place_call : {false, true}) {
        const std::size_t count = count_for(bytes, type);
        const std::size_t block = count * size_of(type);
        std::vector<std::byte> send(block), got(block * ranks), want(block * ranks);
        fill(send.data(), count, type, reduce_op::sum, c.rank(), 9);
        MPI_Allgather(send.data(), static_cast<int>(count), mpi_type(type), want.data(),
                      static_cast<int>(count), mpi_type(type), MPI_COMM_WORLD);
        if (in_place_call)
          std::memcpy(got.data() + static_cast<std::size_t>(c.rank()) * block, send.data(), block);
        collective_request r =
            iallgather(c, in_place_call ? in_place : send.data(), got.data(), count, type);
        const std::string what =
            describe("iallgather", type, reduce_op::sum, count, 0, in_place_call);
        EXPECT_EQ(r.path(), expected_path(c, nonblocking_collective::allgather, block)) << what;
        r.wait();
        EXPECT_EQ(got, want) << what;
      }
    }
  }
}

TEST(Nonblocking, IbarrierWaitsForTheLastRank) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  using clock = std::chrono::steady_clock;  // one clock for every process of the machine
  const int last = c.size() - 1;
  if (c.rank() == last) {
    const auto until = clock::now() + std::chrono::milliseconds(100);
    while (clock::now() < until) {
    }
  }
  const double started = std::chrono::duration<double>(clock::now().time_since_epoch()).count();
  collective_request r = ibarrier(c);
  EXPECT_EQ(r.path(), expected_path(c, nonblocking_collective::barrier, 0));
  r.wait();
  const double finished = std::chrono::duration<double>(clock::now().time_since_epoch()).count();
  double last_start = 0;
  MPI_Allreduce(&started, &last_start, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_GE(finished, last_start) << "the barrier completed before the last rank entered it";
}

/// Blocking answers for the mixed batch below.
struct batch {
  std::vector<std::vector<double>> sums;    // iallreduce, one buffer each
  std::vector<std::vector<int>> gathered;   // iallgather
  std::vector<std::vector<double>> bcasts;  // ibcast, root i % size
  std::vector<std::vector<double>> want_sums;
  std::vector<std::vector<int>> want_gathered;
  std::vector<std::vector<double>> want_bcasts;
};

/// Starts `rounds` x (iallreduce, iallgather, ibcast, ibarrier) on `c`: 4 * rounds requests (from
/// 17 rounds more than the largest ring, 64 slots, so later starts wait for earlier operations),
/// each round with a different size: one above the slot, every fourth large enough to lie away
/// from its slot's start (nonblocking_payload_offset), the others a few lines.
std::vector<collective_request> start_batch(comm& c, batch& b, int rounds, unsigned seed) {
  std::vector<collective_request> requests;
  const auto ranks = static_cast<std::size_t>(c.size());
  for (int i = 0; i < rounds; ++i) {
    const std::size_t count = i == 1       ? slot_bytes_of(c) / sizeof(double) + 3
                              : i % 4 == 3 ? 2600 + static_cast<std::size_t>(i)
                                           : 5 + 17 * static_cast<std::size_t>(i);
    std::vector<double> in(count);
    for (std::size_t k = 0; k < count; ++k)
      in[k] = static_cast<double>((k + seed + i) % 13) + c.rank();
    b.sums.emplace_back(count);
    b.want_sums.emplace_back(count);
    MPI_Allreduce(in.data(), b.want_sums.back().data(), static_cast<int>(count), MPI_DOUBLE,
                  MPI_SUM, MPI_COMM_WORLD);
    std::vector<int> mine(count, c.rank() * 1000 + i);
    b.gathered.emplace_back(count * ranks);
    b.want_gathered.emplace_back(count * ranks);
    MPI_Allgather(mine.data(), static_cast<int>(count), MPI_INT, b.want_gathered.back().data(),
                  static_cast<int>(count), MPI_INT, MPI_COMM_WORLD);
    const int root = i % c.size();
    std::vector<double> payload(count);
    for (std::size_t k = 0; k < count; ++k) payload[k] = static_cast<double>(k * 3 + root + seed);
    b.want_bcasts.push_back(payload);
    b.bcasts.emplace_back(count, -1.0);
    if (c.rank() == root) b.bcasts.back() = payload;
  }
  // Started after every buffer exists: the vectors above no longer move.
  for (int i = 0; i < rounds; ++i) {
    const auto slot = static_cast<std::size_t>(i);
    const std::size_t count = b.sums[slot].size();
    std::vector<double> in(count);
    for (std::size_t k = 0; k < count; ++k)
      in[k] = static_cast<double>((k + seed + i) % 13) + c.rank();
    std::copy(in.begin(), in.end(), b.sums[slot].begin());
    requests.push_back(
        iallreduce(c, in_place, b.sums[slot].data(), count, datatype::float64, reduce_op::sum));
    std::vector<int> mine(count, c.rank() * 1000 + i);
    // The send buffer is copied at the start on the shared-memory path only: keep it alive.
    std::copy(mine.begin(), mine.end(),
              b.gathered[slot].begin() + static_cast<std::ptrdiff_t>(count) * c.rank());
    requests.push_back(iallgather(c, in_place, b.gathered[slot].data(), count, datatype::int32));
    requests.push_back(ibcast(c, b.bcasts[slot].data(), count, datatype::float64, i % c.size()));
    requests.push_back(ibarrier(c));
  }
  return requests;
}

void expect_batch(const batch& b) {
  for (std::size_t i = 0; i < b.sums.size(); ++i) {
    EXPECT_EQ(b.sums[i], b.want_sums[i]) << "iallreduce " << i;
    EXPECT_EQ(b.gathered[i], b.want_gathered[i]) << "iallgather " << i;
    EXPECT_EQ(b.bcasts[i], b.want_bcasts[i]) << "ibcast " << i;
  }
}

TEST(Nonblocking, ManyOutstandingCompletedByWaitAllInAnyOrder) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  batch b;
  std::vector<collective_request> requests = start_batch(c, b, 17, 1);
  // Completed in reverse start order on even ranks, in start order on odd ones.
  if (c.rank() % 2 == 0) std::reverse(requests.begin(), requests.end());
  wait_all(requests);
  for (const collective_request& r : requests) EXPECT_FALSE(r.active());
  expect_batch(b);
}

TEST(Nonblocking, ManyOutstandingCompletedByWaitAnyAndTestAll) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  batch b;
  std::vector<collective_request> requests = start_batch(c, b, 4, 2);
  std::vector<bool> seen(requests.size(), false);
  for (std::size_t done = 0; done < requests.size(); ++done) {
    const std::size_t index = wait_any(requests);
    ASSERT_LT(index, requests.size());
    EXPECT_FALSE(seen[index]) << "wait_any returned request " << index << " twice";
    seen[index] = true;
  }
  EXPECT_EQ(wait_any(requests), requests.size()) << "no request is active any more";
  expect_batch(b);

  batch again;
  std::vector<collective_request> more = start_batch(c, again, 3, 3);
  while (!test_all(more)) {
  }
  expect_batch(again);
}

TEST(Nonblocking, PeersFinishWhileTheOwnerIsBlockedElsewhere) {
  // Rank 0 starts, then blocks in MPI_Recv until every other rank has completed its request: the
  // others must finish without rank 0 driving anything (its data went in at the start).
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  for (std::size_t count : {std::size_t{1}, std::size_t{1000}}) {
    std::vector<double> in(count, 1.0 + c.rank()), out(count);
    std::vector<double> gathered(count * static_cast<std::size_t>(c.size()));
    collective_request sum =
        iallreduce(c, in.data(), out.data(), count, datatype::float64, reduce_op::sum);
    collective_request gather = iallgather(c, in.data(), gathered.data(), count, datatype::float64);
    ASSERT_EQ(sum.path(), expected_path(c, nonblocking_collective::allreduce, count * 8));
    if (sum.path() != nonblocking_path::shared_memory) GTEST_SKIP() << sum.reason();
    if (c.rank() == 0) {
      for (int peer = 1; peer < c.size(); ++peer) {
        int token = 0;
        MPI_Recv(&token, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        EXPECT_EQ(token, peer);
      }
      wait_all(std::span<collective_request>(&sum, 1));
      gather.wait();
    } else {
      sum.wait();
      gather.wait();
      const int token = c.rank();
      MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    const double ranks = c.size();
    for (double v : out) EXPECT_EQ(v, ranks * (ranks + 1) / 2);
    for (std::size_t i = 0; i < gathered.size(); ++i)
      EXPECT_EQ(gathered[i], 1.0 + static_cast<double>(i / count));
  }
}

TEST(Nonblocking, BlockingCollectiveAfterPendingRequestsFinishesThem) {
  // Six requests on a ring of 4 slots (CACHECOMM_NONBLOCKING_SLOTS): the last two are contributed
  // only by later progress. Odd ranks wait for them before the blocking collectives; even ranks go
  // straight into them, so the blocking calls must contribute the pending ones or the odd ranks
  // never leave their wait.
  comm c(MPI_COMM_WORLD, config::from_environment().set("CACHECOMM_NONBLOCKING_SLOTS", "4"));
  prepare_nonblocking(c);
  constexpr int outstanding = 6;
  std::vector<std::vector<long long>> sums(outstanding, std::vector<long long>(3));
  std::vector<std::vector<long long>> inputs;  // alive until completion: read when contributed
  for (int i = 0; i < outstanding; ++i) inputs.push_back({c.rank() + i, 2LL * i, 1});
  std::vector<collective_request> requests;
  for (int i = 0; i < outstanding; ++i) {
    const auto k = static_cast<std::size_t>(i);
    requests.push_back(
        iallreduce(c, inputs[k].data(), sums[k].data(), 3, datatype::int64, reduce_op::sum));
  }
  if (c.rank() % 2 == 1) wait_all(requests);
  long long one = 1, total = 0;
  allreduce(c, &one, &total, 1, datatype::int64, reduce_op::sum);
  EXPECT_EQ(total, c.size());
  c.barrier();
  wait_all(requests);
  const long long ranks = c.size();
  for (int i = 0; i < outstanding; ++i) {
    const auto& s = sums[static_cast<std::size_t>(i)];
    EXPECT_EQ(s[0], ranks * (ranks - 1) / 2 + ranks * i);
    EXPECT_EQ(s[1], 2LL * i * ranks);
    EXPECT_EQ(s[2], ranks);
  }
}

TEST(Nonblocking, DestructorCompletesTheRequest) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  for (std::size_t count : {std::size_t{4}, slot_bytes_of(c)}) {
    std::vector<double> out(count, -1);
    {
      std::vector<double> in(count, 2.0);
      collective_request r =
          iallreduce(c, in.data(), out.data(), count, datatype::float64, reduce_op::sum);
      EXPECT_TRUE(r.active());
      // Dropped unwaited: the destructor waits, so `out` is complete and `in` may go.
    }
    for (double v : out) ASSERT_EQ(v, 2.0 * c.size()) << "count " << count;
  }
  // Move: the moved-from request is empty; assigning over an active request completes it first.
  std::vector<int> a(8), b(8);
  std::vector<int> one(8, 1);
  collective_request first =
      iallreduce(c, one.data(), a.data(), 8, datatype::int32, reduce_op::sum);
  collective_request moved = std::move(first);
  EXPECT_FALSE(first.active());  // NOLINT(bugprone-use-after-move): the moved-from state is defined
  EXPECT_EQ(first.path(), nonblocking_path::none);
  EXPECT_TRUE(first.test());
  moved = iallreduce(c, one.data(), b.data(), 8, datatype::int32, reduce_op::sum);
  for (int v : a) EXPECT_EQ(v, c.size()) << "the replaced request was completed";
  moved.wait();
  for (int v : b) EXPECT_EQ(v, c.size());
}

/// y = A x for the 1-D Laplacian tridiag(-1, 2, -1) distributed in blocks; halo over MPI.
void apply_laplacian(const std::vector<double>& x, std::vector<double>& y, int first, int global_n,
                     int rank) {
  const int n = static_cast<int>(x.size());
  double left = 0, right = 0;
  const int left_rank = first > 0 ? rank - 1 : MPI_PROC_NULL;
  const int right_rank = first + n < global_n ? rank + 1 : MPI_PROC_NULL;
  MPI_Sendrecv(&x[0], 1, MPI_DOUBLE, left_rank, 1, &right, 1, MPI_DOUBLE, right_rank, 1,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&x[static_cast<std::size_t>(n - 1)], 1, MPI_DOUBLE, right_rank, 2, &left, 1,
               MPI_DOUBLE, left_rank, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const double l = i > 0 ? x[k - 1] : left;
    const double r = i + 1 < n ? x[k + 1] : right;
    y[k] = 2 * x[k] - l - r;
  }
}

/// Pipelined CG (Ghysels and Vanroose): each iteration reduces its two dot products while it
/// applies the operator. `overlap` starts an iallreduce before the operator and waits after it;
/// otherwise the same arithmetic with a blocking allreduce. Returns x; `history` the residuals.
std::vector<double> pipelined_cg(comm& c, bool overlap, std::vector<double>& history) {
  constexpr int global_n = 240;
  const int size = c.size(), rank = c.rank();
  const int n = global_n / size + (rank < global_n % size ? 1 : 0);
  const int first = rank * (global_n / size) + std::min(rank, global_n % size);
  const auto un = static_cast<std::size_t>(n);
  std::vector<double> x(un, 0), r(un), u(un), w(un), m(un), z(un, 0), q(un, 0), s(un, 0), p(un, 0);
  for (int i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = std::sin(0.1 * (first + i)) + 1;
  u = r;
  apply_laplacian(u, w, first, global_n, rank);
  double alpha = 0, gamma_old = 0;
  for (int it = 0; it < 400; ++it) {
    double local[2] = {0, 0}, global[2] = {0, 0};
    for (std::size_t k = 0; k < un; ++k) {
      local[0] += r[k] * u[k];
      local[1] += w[k] * u[k];
    }
    if (overlap) {
      collective_request dots = iallreduce(c, local, global, 2, datatype::float64, reduce_op::sum);
      apply_laplacian(w, m, first, global_n, rank);  // overlapped with the reduction
      dots.wait();
    } else {
      allreduce(c, local, global, 2, datatype::float64, reduce_op::sum);
      apply_laplacian(w, m, first, global_n, rank);
    }
    const double gamma = global[0], delta = global[1];
    history.push_back(gamma);
    if (gamma < 1e-24) break;
    double beta = 0;
    if (it > 0) {
      beta = gamma / gamma_old;
      alpha = gamma / (delta - beta * gamma / alpha);
    } else {
      alpha = gamma / delta;
    }
    for (std::size_t k = 0; k < un; ++k) {
      z[k] = m[k] + beta * z[k];
      q[k] = w[k] + beta * q[k];
      s[k] = u[k] + beta * s[k];
      p[k] = r[k] + beta * p[k];
      x[k] += alpha * p[k];
      r[k] -= alpha * q[k];
      u[k] -= alpha * q[k];
      w[k] -= alpha * z[k];
    }
    gamma_old = gamma;
  }
  return x;
}

TEST(Nonblocking, PipelinedCgMatchesBlockingAllreduce) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  std::vector<double> blocking_history, overlapped_history;
  const std::vector<double> blocking = pipelined_cg(c, false, blocking_history);
  const std::vector<double> overlapped = pipelined_cg(c, true, overlapped_history);
  ASSERT_EQ(blocking_history.size(), overlapped_history.size());
  for (std::size_t i = 0; i < blocking_history.size(); ++i) {
    EXPECT_NEAR(overlapped_history[i], blocking_history[i], 1e-12 * blocking_history[0])
        << "iteration " << i;
  }
  for (std::size_t k = 0; k < blocking.size(); ++k)
    EXPECT_NEAR(overlapped[k], blocking[k], 1e-9 * (1 + std::fabs(blocking[k])));
  EXPECT_LT(overlapped_history.back(), 1e-16 * overlapped_history.front()) << "CG converged";
}

TEST(Nonblocking, ExplainNamesThePathAndTheChannelIsBuiltByTheNextBlockingCollective) {
  comm c(MPI_COMM_WORLD);
  const bool one_node = c.topology().node_count == 1;
  nonblocking_choice before = explain_nonblocking(c, nonblocking_collective::allreduce, 8);
  EXPECT_EQ(before.path, nonblocking_path::system_mpi);
  EXPECT_NE(before.reason.find(one_node ? "not built" : "nodes"), std::string::npos)
      << before.reason;
  double v = 1, sum = 0;
  collective_request early = iallreduce(c, &v, &sum, 1, datatype::float64, reduce_op::sum);
  EXPECT_EQ(early.path(), nonblocking_path::system_mpi);
  early.wait();
  EXPECT_EQ(sum, c.size());
  c.barrier();  // builds the channel the call above asked for
  collective_request later = iallreduce(c, &v, &sum, 1, datatype::float64, reduce_op::sum);
  EXPECT_EQ(later.path(), one_node ? nonblocking_path::shared_memory : nonblocking_path::system_mpi)
      << later.reason();
  later.wait();
  EXPECT_EQ(sum, c.size());
  // Above a slot: in chunks through the channel, up to a whole ring of them.
  const nonblocking_choice chunked =
      explain_nonblocking(c, nonblocking_collective::allgather, slot_bytes_of(c) + 1);
  EXPECT_EQ(chunked.path,
            one_node ? nonblocking_path::shared_memory : nonblocking_path::system_mpi);
  const std::size_t largest = largest_nonblocking_call_of(c, false);
  const nonblocking_choice large =
      explain_nonblocking(c, nonblocking_collective::allgather, largest + 1);
  EXPECT_EQ(large.path, nonblocking_path::system_mpi);
  if (one_node) {
    EXPECT_NE(large.reason.find("ring"), std::string::npos) << large.reason;
  }
  const nonblocking_choice bcast =
      explain_nonblocking(c, nonblocking_collective::broadcast, largest + 4096);
  EXPECT_EQ(bcast.path, nonblocking_path::system_mpi);
  EXPECT_EQ(to_string(nonblocking_path::shared_memory), "shared-memory");
}

TEST(Nonblocking, BadInputGivesAClearError) {
  comm c(MPI_COMM_WORLD);
  prepare_nonblocking(c);
  std::vector<double> buffer(4, 1.0), out(4 * static_cast<std::size_t>(c.size()));
  auto message_of = [](auto&& start) -> std::string {
    try {
      collective_request r = start();
      r.wait();
    } catch (const error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message_of([&] {
              return iallreduce(c, nullptr, out.data(), 4, datatype::float64, reduce_op::sum);
            }).find("iallreduce: send buffer is null"),
            std::string::npos);
  EXPECT_THROW((void)ibcast(c, nullptr, 4, datatype::float64, 0), invalid_argument);
  EXPECT_NE(message_of([&] {
              return ibcast(c, buffer.data(), 4, datatype::float64, c.size());
            }).find("ibcast: root"),
            std::string::npos);
  EXPECT_THROW(
      (void)ireduce(c, buffer.data(), out.data(), 4, datatype::float64, reduce_op::sum, -1),
      invalid_argument);
  EXPECT_THROW(
      (void)iallreduce(c, buffer.data(), out.data(), 4, datatype::float64, reduce_op::replace),
      unsupported_error);
  EXPECT_THROW((void)iallgather(c, buffer.data(), nullptr, 4, datatype::float64), invalid_argument);
  EXPECT_THROW((void)iallreduce(c, std::span<const double>(buffer),
                                std::span<double>(out.data(), 3), reduce_op::sum),
               invalid_argument);
  // Ranks whose counts differ (both within the slot): every rank's wait names the problem, and
  // the comm goes on working (the slots were released).
  if (c.size() > 1 && c.topology().node_count == 1) {
    const std::size_t count = c.rank() == 0 ? 2 : 4;
    collective_request r =
        iallreduce(c, buffer.data(), out.data(), count, datatype::float64, reduce_op::sum);
    try {
      r.wait();
      ADD_FAILURE() << "mismatched counts were not reported";
    } catch (const usage_error& e) {
      EXPECT_NE(std::string(e.what()).find("iallreduce"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("different calls"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(r.active());
    double one = 1, total = 0;
    collective_request after = iallreduce(c, &one, &total, 1, datatype::float64, reduce_op::sum);
    after.wait();
    EXPECT_EQ(total, c.size());
  }
  EXPECT_TRUE(all_ranks(true));
}

}  // namespace
}  // namespace cachecomm
