// Sums each rank's number with cachecomm and checks the result against MPI's.
#include <mpi.h>

#include <cachecomm/cachecomm.hpp>
#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int failed = 0;
  {
    cachecomm::comm comm(MPI_COMM_WORLD);
    double value = comm.rank() + 1.0;
    cachecomm::allreduce(comm, cachecomm::in_place, &value, 1, cachecomm::datatype::float64,
                         cachecomm::reduce_op::sum);
    const double expected = comm.size() * (comm.size() + 1) / 2.0;
    failed = value != expected;
    if (comm.rank() == 0)
      std::printf("cachecomm %s: allreduce over %d ranks = %g (%s)\n", cachecomm::version,
                  comm.size(), value, failed ? "WRONG" : "ok");
  }
  MPI_Finalize();
  return failed;
}
