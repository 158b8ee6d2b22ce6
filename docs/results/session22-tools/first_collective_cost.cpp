// Session 22: what a communicator's first collectives cost, by message size. Each round builds a
// cachecomm::comm, times its first allreduce of BYTES (the engine's segment is built there), then
// its next nine, and frees it. Build (release tree):
//   mpicxx -O2 -std=c++20 -Iinclude -Ibuild/release/include first_collective_cost.cpp \
//     -Lbuild/release/src -lcachecomm -Wl,-rpath,$PWD/build/release/src -o /tmp/fcc
// Run: mpirun -n 2 /tmp/fcc BYTES ROUNDS
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::size_t bytes = argc > 1 ? std::strtoul(argv[1], nullptr, 0) : 8;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 10;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<float> in(std::max<std::size_t>(bytes / 4, 1), 1.0F);
  std::vector<float> out(in.size());
  std::vector<double> first;
  std::vector<double> next;
  for (int round = 0; round < rounds; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    cachecomm::comm c(MPI_COMM_WORLD);
    auto start = std::chrono::steady_clock::now();
    cachecomm::allreduce(c, in.data(), out.data(), in.size(), cachecomm::datatype::float32,
                         cachecomm::reduce_op::sum);
    first.push_back(ms_since(start));
    start = std::chrono::steady_clock::now();
    for (int call = 0; call < 9; ++call)
      cachecomm::allreduce(c, in.data(), out.data(), in.size(), cachecomm::datatype::float32,
                           cachecomm::reduce_op::sum);
    next.push_back(ms_since(start));
  }
  std::sort(first.begin(), first.end());
  std::sort(next.begin(), next.end());
  if (rank == 0)
    std::printf("%zu B: first allreduce median %.3f ms (min %.3f, max %.3f), next nine %.3f ms\n",
                bytes, first[first.size() / 2], first.front(), first.back(), next[next.size() / 2]);
  MPI_Finalize();
}
