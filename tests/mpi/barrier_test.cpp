// Every barrier algorithm really synchronizes: after barrier round r, every rank has announced
// round r, however late some ranks arrive. Checked with a counter per rank in memory shared by
// the whole machine (an MPI shared window), independent of the code under test.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <random>

#include "cachecomm/cachecomm.hpp"
#include "core/comm_impl.hpp"

namespace {

class announcement_board {
 public:
  announcement_board() {
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &m_shared);
    MPI_Comm_rank(m_shared, &m_rank);
    MPI_Comm_size(m_shared, &m_size);
    MPI_Win_allocate_shared(static_cast<MPI_Aint>(sizeof(std::uint64_t) * 64), 1, MPI_INFO_NULL,
                            m_shared, &m_base, &m_window);
    for (int peer = 0; peer < m_size; ++peer) {
      MPI_Aint bytes = 0;
      int unit = 0;
      void* base = nullptr;
      MPI_Win_shared_query(m_window, peer, &bytes, &unit, &base);
      m_slots.push_back(static_cast<std::atomic<std::uint64_t>*>(base));
      m_slots.back()->store(0);
    }
    MPI_Barrier(m_shared);
  }
  ~announcement_board() {
    MPI_Win_free(&m_window);
    MPI_Comm_free(&m_shared);
  }
  void announce(std::uint64_t round) { m_slots[static_cast<std::size_t>(m_rank)]->store(round); }
  // Lowest round any rank of the machine has announced.
  [[nodiscard]] std::uint64_t lowest() const {
    std::uint64_t low = UINT64_MAX;
    for (auto* slot : m_slots) low = std::min(low, slot->load());
    return low;
  }

 private:
  MPI_Comm m_shared = MPI_COMM_NULL;
  MPI_Win m_window = MPI_WIN_NULL;
  void* m_base = nullptr;
  int m_rank = 0;
  int m_size = 1;
  std::vector<std::atomic<std::uint64_t>*> m_slots;
};

void check_synchronizes(cachecomm::comm& comm, cachecomm::barrier_algorithm algorithm, int rounds) {
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  int shared_size = 0;
  {
    MPI_Comm shared = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    MPI_Comm_size(shared, &shared_size);
    MPI_Comm_free(&shared);
  }
  ASSERT_EQ(shared_size, world_size) << "these tests run on one machine";
  announcement_board board;
  std::mt19937 random(1234U + static_cast<unsigned>(comm.rank()));
  for (int round = 1; round <= rounds; ++round) {
    // Some rank is late in some rounds; delays differ by rank and round.
    if (random() % 4 == 0) ::usleep(static_cast<useconds_t>(random() % 300));
    board.announce(static_cast<std::uint64_t>(round));
    comm.barrier(algorithm);
    std::uint64_t lowest = board.lowest();
    ASSERT_GE(lowest, static_cast<std::uint64_t>(round))
        << cachecomm::to_string(algorithm) << ": rank " << comm.rank() << " left round " << round
        << " before every rank arrived";
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

class barrier_algorithms : public ::testing::TestWithParam<cachecomm::barrier_algorithm> {};

TEST_P(barrier_algorithms, no_rank_leaves_before_all_arrive) {
  cachecomm::comm comm(MPI_COMM_WORLD);
  check_synchronizes(comm, GetParam(), 300);
}

TEST_P(barrier_algorithms, hierarchical_with_forced_node_split) {
  for (const char* per_node : {"1", "2", "3"}) {
    auto settings = cachecomm::config::from_environment();
    settings.set("CACHECOMM_RANKS_PER_NODE", per_node);
    cachecomm::comm comm(MPI_COMM_WORLD, settings);
    int world_size = comm.size();
    int per = std::atoi(per_node);
    EXPECT_EQ(comm.topology().node_count, (world_size + per - 1) / per);
    EXPECT_TRUE(comm.topology().forced_split);
    check_synchronizes(comm, GetParam(), 60);
  }
}

TEST_P(barrier_algorithms, works_on_a_subcommunicator) {
  // Odd and even ranks in separate communicators: the groups must not interfere.
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  {
    cachecomm::comm comm(half);
    for (int round = 0; round < 200; ++round) comm.barrier(GetParam());
    int sum = 0;
    int one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, half);
    EXPECT_EQ(sum, comm.size());
  }
  MPI_Comm_free(&half);
}

INSTANTIATE_TEST_SUITE_P(all, barrier_algorithms,
                         ::testing::ValuesIn(cachecomm::all_barrier_algorithms()),
                         [](const auto& info) {
                           std::string name(cachecomm::to_string(info.param));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(barrier, switching_algorithms_between_calls_stays_correct) {
  cachecomm::comm comm(MPI_COMM_WORLD);
  announcement_board board;
  const auto& algorithms = cachecomm::all_barrier_algorithms();
  for (int round = 1; round <= 120; ++round) {
    board.announce(static_cast<std::uint64_t>(round));
    comm.barrier(algorithms[static_cast<std::size_t>(round) % algorithms.size()]);
    ASSERT_GE(board.lowest(), static_cast<std::uint64_t>(round));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(barrier, automatic_choice_is_explained) {
  cachecomm::comm comm(MPI_COMM_WORLD);
  EXPECT_NE(comm.default_barrier(), cachecomm::barrier_algorithm::automatic);
  EXPECT_FALSE(comm.default_barrier_reason().empty());
  comm.barrier();
}

TEST(barrier, override_through_configuration) {
  auto settings = cachecomm::config::from_environment();
  settings.set("CACHECOMM_BARRIER", "dissemination");
  cachecomm::comm comm(MPI_COMM_WORLD, settings);
  EXPECT_EQ(comm.default_barrier(), cachecomm::barrier_algorithm::dissemination);
  settings.set("CACHECOMM_BARRIER", "fastest-please");
  EXPECT_THROW(cachecomm::comm(MPI_COMM_WORLD, settings), cachecomm::invalid_argument);
  settings.set("CACHECOMM_BARRIER", "tree");
  settings.set("CACHECOMM_TREE_DEGREE", "1");
  EXPECT_THROW(cachecomm::comm(MPI_COMM_WORLD, settings), cachecomm::invalid_argument);
  // The range is declared with the setting; the error names the variable, the value and it.
  settings.set("CACHECOMM_TREE_DEGREE", "65");
  try {
    cachecomm::comm refused(MPI_COMM_WORLD, settings);
    ADD_FAILURE() << "CACHECOMM_TREE_DEGREE=65 was accepted";
  } catch (const cachecomm::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "cachecomm: CACHECOMM_TREE_DEGREE='65' is out of range (allowed: an integer from "
                 "2 to 64)");
  }
}

TEST(comm, wait_settings_that_are_not_numbers_are_refused) {
  // NaN fails every comparison: accepted, it silently turned off the deadline (or the liveness
  // checks).
  auto settings = cachecomm::config::from_environment();
  settings.set("CACHECOMM_TIMEOUT", "nan");
  EXPECT_THROW(cachecomm::comm(MPI_COMM_WORLD, settings), cachecomm::invalid_argument);
  settings.set("CACHECOMM_TIMEOUT", "1");
  settings.set("CACHECOMM_LIVENESS_INTERVAL", "nan");
  EXPECT_THROW(cachecomm::comm(MPI_COMM_WORLD, settings), cachecomm::invalid_argument);
}

TEST(comm, topology_is_consistent) {
  cachecomm::comm comm(MPI_COMM_WORLD);
  const auto& topology = comm.topology();
  EXPECT_EQ(topology.node_count, 1);
  EXPECT_EQ(topology.node_size, comm.size());
  EXPECT_EQ(topology.node_ranks[static_cast<std::size_t>(topology.node_rank)], comm.rank());
  EXPECT_GE(topology.cores_available, 1);
  EXPECT_EQ(topology.oversubscribed, comm.size() > topology.cores_available);
  // The duplicate is usable and distinct from the parent.
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(comm.mpi_comm(), MPI_COMM_WORLD, &result);
  EXPECT_EQ(result, MPI_CONGRUENT);
}

TEST(comm, refuses_null_communicator) {
  EXPECT_THROW(cachecomm::comm(MPI_COMM_NULL), cachecomm::invalid_argument);
}

}  // namespace
