// Oversubscription comes from where the ranks may run, not only from how many the machine holds:
// ranks pinned together to one processing unit are oversubscribed on a machine with units to
// spare (they then wait by yielding, not by spinning on the unit the awaited rank needs).
#include <gtest/gtest.h>
#include <mpi.h>
#include <sched.h>

#include "cachecomm/cachecomm.hpp"
#include "topo/machine.hpp"

namespace {

// Restores the process's affinity mask when the test ends.
class affinity_guard {
 public:
  affinity_guard() { m_ok = ::sched_getaffinity(0, sizeof(m_saved), &m_saved) == 0; }
  ~affinity_guard() {
    if (m_ok) ::sched_setaffinity(0, sizeof(m_saved), &m_saved);
  }
  affinity_guard(const affinity_guard&) = delete;
  affinity_guard& operator=(const affinity_guard&) = delete;
  [[nodiscard]] bool ok() const { return m_ok; }
  [[nodiscard]] int first_unit() const {
    for (int unit = 0; unit < CPU_SETSIZE; ++unit) {
      if (CPU_ISSET(unit, &m_saved)) return unit;
    }
    return -1;
  }

 private:
  cpu_set_t m_saved{};
  bool m_ok = false;
};

// Every rank's first allowed unit, the smallest of them: the unit all ranks pin to.
int common_unit(int mine) {
  int smallest = mine;
  MPI_Allreduce(&mine, &smallest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return smallest;
}

TEST(Placement, RanksPinnedToOneUnitAreOversubscribed) {
  affinity_guard guard;
  ASSERT_TRUE(guard.ok());
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int unit = common_unit(guard.first_unit());
  ASSERT_GE(unit, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(unit, &one);
  // Some launchers bind each rank to a different unit set; every rank may still be allowed to
  // move to the smallest unit any of them has, or not (a cgroup): then nothing to test.
  int pinned = ::sched_setaffinity(0, sizeof(one), &one) == 0 ? 1 : 0;
  int all_pinned = pinned;
  MPI_Allreduce(&pinned, &all_pinned, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all_pinned == 0) GTEST_SKIP() << "a rank may not run on unit " << unit;
  cachecomm::comm c(MPI_COMM_WORLD);
  const auto& topology = c.topology();
  if (topology.node_count > 1) GTEST_SKIP() << "one machine per test";
  EXPECT_EQ(topology.cores_available, 1);
  EXPECT_EQ(topology.oversubscribed, size > 1) << size << " ranks on unit " << unit;
  // The collectives still work (and, oversubscribed, wait by yielding).
  std::vector<double> values(4096, 1.0);
  cachecomm::allreduce(c, cachecomm::in_place, values.data(), values.size(),
                       cachecomm::datatype::float64, cachecomm::reduce_op::sum);
  EXPECT_EQ(values.back(), static_cast<double>(size));
}

TEST(Placement, UnpinnedRanksWithUnitsEnoughAreNot) {
  affinity_guard guard;
  ASSERT_TRUE(guard.ok());
  // Every unit there is: the kernel keeps those the job's cgroup allows, which are the units hwloc
  // counts.
  cpu_set_t every;
  CPU_ZERO(&every);
  for (int unit = 0; unit < CPU_SETSIZE; ++unit) CPU_SET(unit, &every);
  const int units = cachecomm::detail::this_machine().processing_units;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // A cgroup may refuse units; then the job's own binding decides and this test has no case.
  int free = ::sched_setaffinity(0, sizeof(every), &every) == 0 ? 1 : 0;
  int all_free = free;
  MPI_Allreduce(&free, &all_free, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all_free == 0) GTEST_SKIP() << "the ranks may not run on every unit";
  cachecomm::comm c(MPI_COMM_WORLD);
  const auto& topology = c.topology();
  if (topology.node_count > 1) GTEST_SKIP() << "one machine per test";
  EXPECT_EQ(topology.cores_available, units);
  EXPECT_EQ(topology.oversubscribed, size > units) << size << " ranks, " << units << " units";
}

}  // namespace
