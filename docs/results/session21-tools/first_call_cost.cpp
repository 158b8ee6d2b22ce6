// Session 21: what building a cachecomm::comm and its first collective cost (the preload builds
// both at a communicator's fourth collective call). Build against build/release (see ctor lines
// in session21.md); run under mpirun -n 2.
#include <mpi.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include "cachecomm/barrier.hpp"
#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"
static double ms(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<char> in(32768 * 2, 1), out(32768 * 2);
  for (int i = 0; i < 3; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto a = std::chrono::steady_clock::now();
    cachecomm::comm c(MPI_COMM_WORLD);
    double t_comm = ms(a);
    auto b = std::chrono::steady_clock::now();
    cachecomm::allgather(c, in.data(), out.data(), 32768, cachecomm::datatype::byte);
    double t_first = ms(b);
    auto d = std::chrono::steady_clock::now();
    cachecomm::allgather(c, in.data(), out.data(), 32768, cachecomm::datatype::byte);
    double t_second = ms(d);
    auto e = std::chrono::steady_clock::now();
    c.barrier();
    double t_barrier = ms(e);
    if (rank == 0)
      std::printf("comm %.2f ms, first allgather %.2f ms, second %.3f ms, first barrier %.3f ms\n",
                  t_comm, t_first, t_second, t_barrier);
  }
  MPI_Finalize();
}
