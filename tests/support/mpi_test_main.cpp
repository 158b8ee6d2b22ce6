// GoogleTest main for tests run under mpirun: every rank runs every test, only rank 0 prints,
// a test fails on every rank if it failed on any, and a test that leaves a segment or a
// descriptor behind fails.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

#include "support/shm_leak_check.hpp"

namespace {

// Checks around each test that nothing shared is left behind.
class resource_leak_listener : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo&) override {
    m_before = cachecomm::testing::cachecomm_segments();
    m_descriptors = cachecomm::testing::open_segment_descriptors();
    m_mappings = cachecomm::testing::mapped_segment_regions();
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    MPI_Barrier(MPI_COMM_WORLD);
    auto leaked = cachecomm::testing::leaked_segments(m_before);
    for (const auto& name : leaked) {
      ADD_FAILURE() << "shared-memory segment /dev/shm/" << name << " was left behind";
    }
    EXPECT_EQ(cachecomm::testing::open_segment_descriptors(), m_descriptors)
        << "a descriptor of a cachecomm segment was left open";
    EXPECT_EQ(cachecomm::testing::mapped_segment_regions(), m_mappings)
        << "a cachecomm segment was left mapped (see /proc/self/maps)";
    // No rank may create the next test's segment while another is still looking.
    MPI_Barrier(MPI_COMM_WORLD);
  }

 private:
  std::set<std::string> m_before;
  int m_descriptors = 0;
  int m_mappings = 0;
};

// Makes a failure on one rank a failure on all, so CTest sees it whichever rank prints.
class cross_rank_result_listener : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo& info) override {
    int local_failed = info.result()->Failed() ? 1 : 0;
    int any_failed = 0;
    MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_failed != 0 && local_failed == 0) {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      ADD_FAILURE() << "failed on another rank (see that rank's output above)";
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) {
    // Other ranks print only their failures, prefixed with the rank.
    delete listeners.Release(listeners.default_result_printer());
    class failure_printer : public ::testing::EmptyTestEventListener {
     public:
      explicit failure_printer(int rank) : m_rank(rank) {}
      void OnTestPartResult(const ::testing::TestPartResult& result) override {
        if (result.failed()) {
          std::fprintf(stderr, "[rank %d] %s:%d: %s\n", m_rank,
                       result.file_name() ? result.file_name() : "?", result.line_number(),
                       result.summary());
        }
      }

     private:
      int m_rank;
    };
    listeners.Append(new failure_printer(rank));
  }
  listeners.Append(new resource_leak_listener);
  listeners.Append(new cross_rank_result_listener);
  int result = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
