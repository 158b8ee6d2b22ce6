// Windows: data put in an epoch is visible after WAIT (and not announced before COMPLETE),
// consecutive and overlapping epochs with changing groups, accumulate from every rank at once,
// fence, get, and each misuse giving its error. Registered again with a forced node split, so
// the remote-node (MPI) path runs the same checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <numeric>
#include <vector>

#include "cachecomm/cachecomm.hpp"

namespace {

using cachecomm::fence_flag;
using cachecomm::reduce_op;
using ::testing::HasSubstr;

std::uint64_t pattern(int round, int origin, int element) {
  return (static_cast<std::uint64_t>(round + 1) << 40) |
         (static_cast<std::uint64_t>(origin) << 20) | static_cast<std::uint64_t>(element);
}

cachecomm::config quick_timeout() {
  auto settings = cachecomm::config::from_environment();
  settings.set("CACHECOMM_TIMEOUT", "1");
  return settings;
}

TEST(window, sizes_differ_per_rank_and_start_zeroed) {
  cachecomm::comm comm;
  const std::size_t mine = 64 * static_cast<std::size_t>(comm.rank() + 1) + 8;
  cachecomm::window win(comm, mine, 8);
  EXPECT_EQ(win.local().size(), mine);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(win.local().data()) % 4096, 0U);
  for (int peer = 0; peer < comm.size(); ++peer) {
    EXPECT_EQ(win.size_of(peer), 64 * static_cast<std::size_t>(peer + 1) + 8);
    EXPECT_EQ(win.disp_unit_of(peer), 8U);
  }
  for (std::byte b : win.local()) ASSERT_EQ(b, std::byte{0});
}

TEST(window, fence_put_and_get_ring) {
  cachecomm::comm comm;
  const int p = comm.size();
  const int me = comm.rank();
  constexpr int elements = 100;
  cachecomm::window win(comm, elements * sizeof(std::uint64_t), sizeof(std::uint64_t));
  for (int round = 0; round < 4; ++round) {
    const int right = (me + 1 + round) % p;
    std::vector<std::uint64_t> values(elements);
    for (int i = 0; i < elements; ++i) values[static_cast<std::size_t>(i)] = pattern(round, me, i);
    win.fence();
    win.put(std::span<const std::uint64_t>(values), right, 0);
    win.fence();
    const int left = ((me - 1 - round) % p + p) % p;
    auto local = win.local_as<std::uint64_t>();
    for (int i = 0; i < elements; ++i)
      ASSERT_EQ(local[static_cast<std::size_t>(i)], pattern(round, left, i));
    // Read back what this rank wrote, with get, in the next fence epoch.
    std::vector<std::uint64_t> back(10);
    win.get(std::span<std::uint64_t>(back), right, 5);
    for (int i = 0; i < 10; ++i)
      ASSERT_EQ(back[static_cast<std::size_t>(i)], pattern(round, me, i + 5));
  }
  win.fence(fence_flag::last);
}

// Round k: rank r writes to the m = 1 + k % (p-1) ranks after it (skipping itself), and each
// target posts to exactly the ranks that write to it. Each origin writes its own slot.
TEST(window, consecutive_epochs_with_changing_groups) {
  cachecomm::comm comm;
  const int p = comm.size();
  const int me = comm.rank();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  constexpr int elements = 16;
  cachecomm::window win(comm, static_cast<std::size_t>(p * elements) * sizeof(std::uint64_t),
                        sizeof(std::uint64_t));
  for (int round = 0; round < 12; ++round) {
    const int reach = 1 + round % (p - 1);
    cachecomm::rank_group targets;
    cachecomm::rank_group origins;
    for (int d = 1; d <= reach; ++d) {
      targets.push_back((me + d) % p);
      origins.push_back((me - d + p) % p);
    }
    win.post(origins);
    win.start(targets);
    std::vector<std::uint64_t> values(elements);
    for (int target : targets) {
      for (int i = 0; i < elements; ++i)
        values[static_cast<std::size_t>(i)] = pattern(round, me, i);
      win.put(std::span<const std::uint64_t>(values), target,
              static_cast<std::size_t>(me * elements));
    }
    win.complete();
    if (round % 2 == 0) {
      win.wait();
    } else {
      while (!win.test()) {
      }
    }
    auto local = win.local_as<std::uint64_t>();
    for (int origin : origins) {
      for (int i = 0; i < elements; ++i) {
        ASSERT_EQ(local[static_cast<std::size_t>(origin * elements + i)], pattern(round, origin, i))
            << "round " << round << " origin " << origin;
      }
    }
  }
}

// One origin (0) and one target (last rank): the target's test() is false while the origin has
// written but not completed, and after WAIT the target sees the last value written in the epoch.
TEST(window, data_visible_after_wait_not_announced_before_complete) {
  cachecomm::comm comm;
  const int p = comm.size();
  const int me = comm.rank();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  const int target = p - 1;
  cachecomm::window win(comm, 64 * sizeof(std::uint64_t), sizeof(std::uint64_t));
  for (int round = 0; round < 5; ++round) {
    if (me == 0) {
      win.start({target});
      std::vector<std::uint64_t> first(64, pattern(round, 0, 1));
      win.put(std::span<const std::uint64_t>(first), target, 0);
      int token = round;
      MPI_Send(&token, 1, MPI_INT, target, 7, MPI_COMM_WORLD);  // "written, not completed"
      MPI_Recv(&token, 1, MPI_INT, target, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      std::vector<std::uint64_t> second(64, pattern(round, 0, 2));
      win.put(std::span<const std::uint64_t>(second), target, 0);
      win.complete();
    } else if (me == target) {
      win.post({0});
      int token = 0;
      MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      EXPECT_FALSE(win.test()) << "test() returned true before the origin's complete()";
      MPI_Send(&token, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
      win.wait();
      for (std::uint64_t value : win.local_as<std::uint64_t>())
        ASSERT_EQ(value, pattern(round, 0, 2));
    }
  }
}

template <typename T>
void accumulate_from_everyone(cachecomm::comm& comm, reduce_op op, T contribution,
                              T expected_per_rank_sum, bool use_pscw) {
  constexpr int elements = 64;
  constexpr int repeats = 20;
  const int p = comm.size();
  cachecomm::window win(comm, elements * sizeof(T), sizeof(T));
  std::vector<T> values(elements, contribution);
  if (use_pscw) {
    if (comm.rank() == 0) {
      cachecomm::rank_group all(static_cast<std::size_t>(p));
      std::iota(all.begin(), all.end(), 0);
      win.post(all);
    }
    win.start({0});
  } else {
    win.fence();
  }
  for (int repeat = 0; repeat < repeats; ++repeat) {
    win.accumulate(std::span<const T>(values), op, 0, 0);
  }
  if (use_pscw) {
    win.complete();
    if (comm.rank() == 0) win.wait();
  } else {
    win.fence(fence_flag::last);
  }
  if (comm.rank() == 0) {
    for (T value : win.local_as<T>())
      ASSERT_EQ(value, expected_per_rank_sum * static_cast<T>(repeats * p));
  }
}

TEST(window, accumulate_from_all_ranks_at_once_sums) {
  cachecomm::comm comm;
  for (bool pscw : {false, true}) {
    accumulate_from_everyone<std::int64_t>(comm, reduce_op::sum, 3, 3, pscw);
    accumulate_from_everyone<std::int32_t>(comm, reduce_op::sum, -2, -2, pscw);
    accumulate_from_everyone<std::uint8_t>(comm, reduce_op::sum, 1, 1, pscw);
    accumulate_from_everyone<double>(comm, reduce_op::sum, 0.5, 0.5, pscw);
    accumulate_from_everyone<float>(comm, reduce_op::sum, 2.0F, 2.0F, pscw);
    accumulate_from_everyone<std::complex<float>>(comm, reduce_op::sum, {1.0F, -1.0F},
                                                  {1.0F, -1.0F}, pscw);
    accumulate_from_everyone<std::complex<double>>(comm, reduce_op::sum, {0.25, 2.0}, {0.25, 2.0},
                                                   pscw);
  }
}

TEST(window, accumulate_max_and_replace) {
  cachecomm::comm comm;
  cachecomm::window win(comm, 8 * sizeof(std::int32_t), sizeof(std::int32_t));
  std::vector<std::int32_t> mine(8, comm.rank() * 10 - 5);
  win.fence();
  win.accumulate(std::span<const std::int32_t>(mine), reduce_op::max, 0, 0);
  win.fence();
  if (comm.rank() == 0) {
    for (auto value : win.local_as<std::int32_t>()) ASSERT_EQ(value, (comm.size() - 1) * 10 - 5);
  }
  if (comm.rank() == comm.size() - 1)
    win.accumulate(std::span<const std::int32_t>(mine).first(1), reduce_op::replace, 0, 3);
  win.fence(fence_flag::last);
  if (comm.rank() == 0) {
    EXPECT_EQ(win.local_as<std::int32_t>()[3], (comm.size() - 1) * 10 - 5);
  }
  EXPECT_THROW(
      win.accumulate(mine.data(), 1, cachecomm::datatype::float32, reduce_op::bitwise_or, 0, 0),
      cachecomm::unsupported_error);
}

// Every rank adds 1 to rank 0's counter `repeats` times: the values handed back are each count
// from 0 to repeats * p - 1 exactly once (the fetch and the add are one atomic step).
template <typename T>
void fetch_and_add_hands_out_every_value(cachecomm::comm& comm, cachecomm::datatype type,
                                         bool use_pscw) {
  constexpr int repeats = 50;
  const int p = comm.size();
  cachecomm::window win(comm, 2 * sizeof(T), sizeof(T));
  if (use_pscw) {
    if (comm.rank() == 0) {
      cachecomm::rank_group all(static_cast<std::size_t>(p));
      std::iota(all.begin(), all.end(), 0);
      win.post(all);
    }
    win.start({0});
  } else {
    win.fence();
  }
  std::vector<double> fetched;
  const T one = T(1);
  for (int repeat = 0; repeat < repeats; ++repeat) {
    T previous{};
    win.fetch_and_accumulate(&one, &previous, 1, type, reduce_op::sum, 0, 0);
    fetched.push_back(static_cast<double>(std::real(previous)));
  }
  T now{};
  win.fetch_and_accumulate(nullptr, &now, 1, type, reduce_op::sum, 0, 0);  // MPI_NO_OP: reads
  EXPECT_GE(static_cast<double>(std::real(now)), static_cast<double>(repeats));
  if (use_pscw) {
    win.complete();
    if (comm.rank() == 0) win.wait();
  } else {
    win.fence(fence_flag::last);
  }
  std::vector<double> all(static_cast<std::size_t>(repeats * p));
  MPI_Allgather(fetched.data(), repeats, MPI_DOUBLE, all.data(), repeats, MPI_DOUBLE,
                MPI_COMM_WORLD);
  std::sort(all.begin(), all.end());
  for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<double>(i));
  if (comm.rank() == 0) {
    EXPECT_EQ(win.local_as<T>()[0], T(repeats * p));
  }
}

TEST(window, fetch_and_accumulate_hands_out_every_value_once) {
  cachecomm::comm comm;
  for (bool pscw : {false, true}) {
    fetch_and_add_hands_out_every_value<std::int64_t>(comm, cachecomm::datatype::int64, pscw);
    fetch_and_add_hands_out_every_value<std::uint16_t>(comm, cachecomm::datatype::uint16, pscw);
    fetch_and_add_hands_out_every_value<double>(comm, cachecomm::datatype::float64, pscw);
    fetch_and_add_hands_out_every_value<std::complex<double>>(comm, cachecomm::datatype::complex128,
                                                              pscw);
  }
}

TEST(window, fetch_and_replace_returns_the_previous_value) {
  cachecomm::comm comm;
  cachecomm::window win(comm, sizeof(std::int32_t), sizeof(std::int32_t));
  win.local_as<std::int32_t>()[0] = 7;
  win.fence();
  win.fence();
  std::int32_t previous = -1;
  const std::int32_t mine = 100 + comm.rank();
  if (comm.rank() == comm.size() - 1)
    win.fetch_and_accumulate(&mine, &previous, 1, cachecomm::datatype::int32, reduce_op::replace, 0,
                             0);
  win.fence(fence_flag::last);
  if (comm.rank() == comm.size() - 1) {
    EXPECT_EQ(previous, 7);
  }
  if (comm.rank() == 0) {
    EXPECT_EQ(win.local_as<std::int32_t>()[0], 100 + comm.size() - 1);
  }
}

// Every rank tries to swap 0 for its rank + 1: exactly one succeeds, and the others see its value.
template <typename T>
void compare_and_swap_has_one_winner(cachecomm::comm& comm) {
  cachecomm::window win(comm, sizeof(T), sizeof(T));
  win.fence();
  const T desired = static_cast<T>(comm.rank() + 1);
  const T expected = 0;
  T result = static_cast<T>(-1);
  win.compare_and_swap(&desired, &expected, &result, sizeof(T), 0, 0);
  win.fence(fence_flag::last);
  long long won = result == 0 ? 1 : 0;
  long long winners = 0;
  MPI_Allreduce(&won, &winners, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(winners, 1);
  long long final_value = comm.rank() == 0 ? static_cast<long long>(win.local_as<T>()[0]) : 0;
  MPI_Bcast(&final_value, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (result != 0) {
    EXPECT_EQ(static_cast<long long>(result), final_value);
  }
  EXPECT_GE(final_value, 1);
  EXPECT_LE(final_value, comm.size());
}

TEST(window, compare_and_swap_has_exactly_one_winner) {
  cachecomm::comm comm;
  compare_and_swap_has_one_winner<std::int32_t>(comm);
  compare_and_swap_has_one_winner<std::uint8_t>(comm);
  // Open MPI 4.1.4's osc rdma crashes (SIGSEGV in btl vader) on an 8-byte MPI_Compare_and_swap to
  // another process, which the remote-node path would use.
  if (comm.topology().node_count == 1) compare_and_swap_has_one_winner<std::int64_t>(comm);
  cachecomm::window win(comm, 8, 1);
  win.fence();
  char value[3] = {};
  EXPECT_THROW(win.compare_and_swap(value, value, value, 3, 0, 0), cachecomm::invalid_argument);
  win.fence(fence_flag::last);
}

// A window over memory MPI allocated (MPI_Win_allocate_shared): cachecomm's epochs and MPI's
// passive target see the same bytes.
TEST(window, over_memory_mpi_shares) {
  cachecomm::comm comm;
  if (comm.topology().node_count != 1) GTEST_SKIP() << "the regions are one node's";
  constexpr std::size_t elements = 16;
  std::int64_t* base = nullptr;
  MPI_Win mpi_window = MPI_WIN_NULL;
  MPI_Win_allocate_shared(static_cast<MPI_Aint>(elements * sizeof(std::int64_t)),
                          sizeof(std::int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &mpi_window);
  const auto& topology = comm.topology();
  std::vector<std::byte*> regions;
  for (int node_rank = 0; node_rank < topology.node_size; ++node_rank) {
    MPI_Aint bytes = 0;
    int unit = 0;
    void* region = nullptr;
    MPI_Win_shared_query(mpi_window, topology.node_ranks[node_rank], &bytes, &unit, &region);
    regions.push_back(static_cast<std::byte*>(region));
  }
  {
    cachecomm::window win(comm, elements * sizeof(std::int64_t), sizeof(std::int64_t), regions);
    EXPECT_EQ(static_cast<void*>(win.local().data()), static_cast<void*>(base));
    const int right = (comm.rank() + 1) % comm.size();
    const std::int64_t mine = 1000 + comm.rank();
    win.fence();
    win.put(&mine, sizeof mine, right, 3);
    win.fence(fence_flag::last);
    const int left = (comm.rank() + comm.size() - 1) % comm.size();
    EXPECT_EQ(base[3], 1000 + left);
    std::int64_t seen = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, mpi_window);
    MPI_Get(&seen, 1, MPI_INT64_T, right, 3, 1, MPI_INT64_T, mpi_window);
    MPI_Win_unlock(right, mpi_window);
    EXPECT_EQ(seen, mine);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Win_free(&mpi_window);
  EXPECT_THROW(cachecomm::window(comm, 8, 1, std::span<std::byte* const>()),
               cachecomm::invalid_argument);
}

// Each target fills its own region before posting; each origin reads its target's region with get.
TEST(window, get_in_pscw_epoch_reads_the_posted_data) {
  cachecomm::comm comm;
  const int p = comm.size();
  const int me = comm.rank();
  constexpr int elements = 32;
  cachecomm::window win(comm, elements * sizeof(std::uint64_t), sizeof(std::uint64_t));
  for (int round = 0; round < 3; ++round) {
    auto local = win.local_as<std::uint64_t>();
    for (int i = 0; i < elements; ++i) local[static_cast<std::size_t>(i)] = pattern(round, me, i);
    const int target = (me + 1) % p;
    const int origin = (me - 1 + p) % p;
    win.post({origin});
    win.start({target});
    std::vector<std::uint64_t> read(elements);
    win.get(std::span<std::uint64_t>(read), target, 0);
    win.complete();
    win.wait();
    for (int i = 0; i < elements; ++i)
      ASSERT_EQ(read[static_cast<std::size_t>(i)], pattern(round, target, i));
  }
}

TEST(window, misaligned_accumulate_is_refused) {
  cachecomm::comm comm;
  if (comm.topology().node_count != 1)
    GTEST_SKIP() << "MPI's accumulate handles any alignment across nodes";
  cachecomm::window win(comm, 64, 1);
  EXPECT_FALSE(win.atomic_aligned(0, 4, 8));
  EXPECT_TRUE(win.atomic_aligned(0, 8, 8));
  EXPECT_TRUE(win.atomic_aligned(0, 4, 4));
  EXPECT_TRUE(win.atomic_aligned(comm.size(), 4, 8));  // the access reports the bad rank
  EXPECT_EQ(cachecomm::window::atomic_alignment(cachecomm::datatype::complex128), 8U);
  std::int64_t one = 1;
  win.fence();
  try {
    win.accumulate(&one, 1, cachecomm::datatype::int64, reduce_op::sum, 0, 4);
    ADD_FAILURE() << "misaligned accumulate did not throw";
  } catch (const cachecomm::invalid_argument& error) {
    EXPECT_THAT(error.what(), HasSubstr("not aligned"));
  }
  win.fence(fence_flag::last);
}

TEST(window, misuse_is_an_error) {
  cachecomm::comm comm;
  const int p = comm.size();
  const int me = comm.rank();
  cachecomm::window win(comm, 64, 1);
  std::uint64_t value = 1;
  try {
    win.put(&value, sizeof value, 0, 0);
    ADD_FAILURE() << "put outside an epoch did not throw";
  } catch (const cachecomm::usage_error& error) {
    EXPECT_THAT(error.what(), HasSubstr("outside an access epoch"));
  }
  try {
    win.wait();
    ADD_FAILURE() << "wait without post did not throw";
  } catch (const cachecomm::usage_error& error) {
    EXPECT_THAT(error.what(), HasSubstr("no matching post"));
  }
  EXPECT_THROW(win.complete(), cachecomm::usage_error);
  // A rank outside the start group (the empty group needs no matching post).
  win.start({});
  try {
    win.put(&value, sizeof value, (me + 1) % p, 0);
    ADD_FAILURE() << "put to a rank outside the start group did not throw";
  } catch (const cachecomm::usage_error& error) {
    EXPECT_THAT(error.what(), HasSubstr("not in the start group"));
  }
  EXPECT_THROW(win.start({}), cachecomm::usage_error);  // nested access epoch
  win.complete();
  EXPECT_THROW(win.start({p}), cachecomm::invalid_argument);
  EXPECT_THROW(win.post({0, 0}), cachecomm::invalid_argument);
  win.fence();
  try {
    win.put(&value, sizeof value, (me + 1) % p, 60);
    ADD_FAILURE() << "put past the end did not throw";
  } catch (const cachecomm::invalid_argument& error) {
    EXPECT_THAT(error.what(), HasSubstr("past the end"));
  }
  EXPECT_THROW(win.start({}), cachecomm::usage_error);  // PSCW inside a fence epoch
  win.fence(fence_flag::last);
}

TEST(window, region_too_large_for_a_segment_is_refused) {
  // Every rank asks for nearly SIZE_MAX bytes: the segment layout must not wrap around to a small
  // segment whose regions then lie outside the mapping.
  cachecomm::comm comm;
  const std::size_t huge = SIZE_MAX - 4095;
  EXPECT_THROW(cachecomm::window(comm, huge, 1), cachecomm::invalid_argument);
}

TEST(window, accumulate_count_whose_byte_size_overflows_is_refused) {
  cachecomm::comm comm;
  cachecomm::window win(comm, 64, 8);
  double value = 1.0;
  // count * 8 wraps to 8 bytes, which fits the region: must be refused, not run 2^61 elements.
  const std::size_t count = SIZE_MAX / sizeof(double) + 2;
  win.fence();
  try {
    win.accumulate(&value, count, cachecomm::datatype::float64, reduce_op::sum, comm.rank(), 0);
    ADD_FAILURE() << "accumulate of " << count << " elements did not throw";
  } catch (const cachecomm::invalid_argument& error) {
    EXPECT_THAT(error.what(), HasSubstr("count"));
  }
  win.fence(fence_flag::last);
}

TEST(window, target_that_never_posts_is_named) {
  cachecomm::comm comm(MPI_COMM_WORLD, quick_timeout());
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks";
  cachecomm::window win(comm, 64, 1);
  if (comm.rank() == 0) {
    win.start({1});
    try {
      win.complete();
      ADD_FAILURE() << "complete() returned although rank 1 never posted";
    } catch (const cachecomm::peer_failure& failure) {
      EXPECT_EQ(failure.peer_rank(), 1) << failure.what();
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(window, origin_that_never_completes_is_named) {
  cachecomm::comm comm(MPI_COMM_WORLD, quick_timeout());
  if (comm.size() < 2) GTEST_SKIP() << "needs two ranks";
  cachecomm::window win(comm, 64, 1);
  const int last = comm.size() - 1;
  if (comm.rank() == last) {
    win.post({0});
    try {
      win.wait();
      ADD_FAILURE() << "wait() returned although rank 0 never completed";
    } catch (const cachecomm::peer_failure& failure) {
      EXPECT_EQ(failure.peer_rank(), 0) << failure.what();
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
