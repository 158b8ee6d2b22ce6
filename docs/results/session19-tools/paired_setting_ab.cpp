// Paired A/B in one process: two comms that differ in settings (argv[2] for side "old", argv[3]
// for "new", each NAME=VALUE[,NAME=VALUE...]; default CACHECOMM_COLL_RING=1048576 against 0),
// blocks of calls alternating between them (order swapped every round), so that both see the same
// VM state. Prints per cell the median over rounds of each side's per-call time (slowest rank,
// back to back) and of the paired ratio old/new, and at the end the new side's region-ring
// store-mode choosers. argv[1]: rounds; argv[4]: only the operations whose name contains it.
// Build (session 19): mpicxx -O2 -std=c++20 -Iinclude -Isrc paired_setting_ab.cpp
//   -Lbuild/release/src -lcachecomm -Wl,-rpath,$PWD/build/release/src -o ab_pair
// Run: mpirun -np 2 --bind-to core ab_pair 16 CACHECOMM_STREAMING_STORES=0
//   CACHECOMM_STREAMING_STORES=auto allgather
#include <mpi.h>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>
#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"
#include "cachecomm/gather_scatter.hpp"
#include "coll/coll_engine.hpp"
#include "core/comm_impl.hpp"

using namespace cachecomm;
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  // argv[2], argv[3]: "NAME=VALUE" for side a (old) and side b (new)
  auto setting = [](config& c, std::string list) {
    for (std::size_t start = 0; start < list.size();) {
      std::size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      const std::string kv = list.substr(start, end - start);
      const auto eq = kv.find('=');
      c.set(kv.substr(0, eq), kv.substr(eq + 1));
      start = end + 1;
    }
  };
  config a = config::from_environment();
  a.set("CACHECOMM_ONLINE_SELECTION", "off");
  setting(a, argc > 2 ? argv[2] : "CACHECOMM_COLL_RING=1048576");
  config b = config::from_environment();
  b.set("CACHECOMM_ONLINE_SELECTION", "off");
  setting(b, argc > 3 ? argv[3] : "CACHECOMM_COLL_RING=0");
  const std::string only = argc > 4 ? argv[4] : "";
  comm ca(MPI_COMM_WORLD, a), cb(MPI_COMM_WORLD, b);
  std::vector<std::size_t> sizes = {4096, 16384, 32768, 65536, 131072, 262144, 1048576, 4194304};
  struct op {
    const char* name;
    std::function<void(comm&, char*, char*, std::size_t)> run;
  };
  std::vector<op> ops = {
      {"allgather-central",
       [](comm& c, char* s, char* r, std::size_t n) {
         allgather(c, s, r, n, datatype::byte, allgather_algorithm::central);
       }},
      {"alltoall-central",
       [size](comm& c, char* s, char* r, std::size_t n) {
         alltoall(c, s, r, n / size, datatype::byte, alltoall_algorithm::central);
       }},
      {"gather-central",
       [](comm& c, char* s, char* r, std::size_t n) {
         gather(c, s, r, n, datatype::byte, 0, gather_algorithm::central);
       }},
      {"scatter-central",
       [](comm& c, char* s, char* r, std::size_t n) {
         scatter(c, s, r, n, datatype::byte, 0, scatter_algorithm::central);
       }},
      {"bcast-ring",
       [](comm& c, char* s, char*, std::size_t n) {
         broadcast(c, s, n, datatype::byte, 0, broadcast_algorithm::ring);
       }},
      {"bcast-auto",
       [](comm& c, char* s, char*, std::size_t n) { broadcast(c, s, n, datatype::byte, 0); }},
      {"allreduce-auto",
       [](comm& c, char* s, char* r, std::size_t n) {
         allreduce(c, s, r, n / 4, datatype::float32, reduce_op::sum);
       }},
      {"allreduce-gather_reduce",
       [](comm& c, char* s, char* r, std::size_t n) {
         allreduce(c, s, r, n / 4, datatype::float32, reduce_op::sum,
                   reduce_algorithm::gather_reduce);
       }},
  };
  std::vector<char> send(4194304 * size, 1), recv(4194304 * size, 0);
  for (auto& o : ops)
    for (std::size_t n : sizes) {
      if (!only.empty() && std::string(o.name).find(only) == std::string::npos) continue;
      const int calls = std::clamp<int>(static_cast<int>(2000000 / (n + 2000)), 4, 200);
      std::vector<double> ta, tb, ratio;
      for (int r = 0; r < rounds; ++r) {
        double t[2];
        for (int k = 0; k < 2; ++k) {
          const bool first_a = (r % 2 == 0);
          comm& c = ((k == 0) == first_a) ? ca : cb;
          o.run(c, send.data(), recv.data(), n);  // warm
          MPI_Barrier(MPI_COMM_WORLD);
          double t0 = MPI_Wtime();
          for (int i = 0; i < calls; ++i) o.run(c, send.data(), recv.data(), n);
          double local = (MPI_Wtime() - t0) / calls * 1e6, slowest;
          MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          t[((k == 0) == first_a) ? 0 : 1] = slowest;
        }
        ta.push_back(t[0]);
        tb.push_back(t[1]);
        ratio.push_back(t[0] / t[1]);
      }
      std::sort(ratio.begin(), ratio.end());
      if (rank == 0)
        std::printf("%-24s %8zu old %9.2f new %9.2f old/new %5.2f [q1 %4.2f q3 %4.2f]\n", o.name, n,
                    median(ta), median(tb), median(ratio), ratio[ratio.size() / 4],
                    ratio[ratio.size() * 3 / 4]);
    }
  for (int r = 0; r < size; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == rank)
      for (auto& l : cachecomm::detail::coll_engine::of(cb.impl()).ring_store_modes().report())
        std::printf("rank %d: %s\n", rank, l.c_str());
  }
  MPI_Finalize();
}
