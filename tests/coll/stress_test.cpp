// Thousands of randomly chosen collectives back to back (seeded: CACHECOMM_STRESS_SEED), each
// checked against the system MPI.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "coll/coll_test_support.hpp"

namespace cachecomm {
namespace {

// Any entry of a collective's registry, each as likely as the automatic choice: a new algorithm
// joins the stress test by being registered.
template <typename Id>
Id pick_algorithm(const std::vector<Id>& all, unsigned pick) {
  const std::size_t index = pick % (all.size() + 1);
  return index == all.size() ? Id::automatic : all[index];
}

TEST(CollectiveStress, RandomSequenceMatchesMpi) {
  comm c(MPI_COMM_WORLD);
  const char* seed_text = std::getenv("CACHECOMM_STRESS_SEED");
  const unsigned seed = seed_text != nullptr
                            ? static_cast<unsigned>(std::strtoul(seed_text, nullptr, 10))
                            : 20261122U;
  const int operations = c.size() > 4 ? 800 : 3000;
  std::mt19937 random(seed);  // same sequence on every rank
  const auto& types = testing::reducible_types();
  const auto& ops = testing::collective_ops();
  std::vector<unsigned char> input, expected, got;
  for (int index = 0; index < operations; ++index) {
    const int kind = static_cast<int>(random() % 4);
    const datatype type = types[random() % types.size()];
    reduce_op op = ops[random() % ops.size()];
    while (!supports(type, op)) op = ops[random() % ops.size()];
    // Large (pipelined paths), tiny (a few elements) and everything between.
    const unsigned size_class = random() % 20;
    const std::size_t count = size_class == 0  ? random() % 60000
                              : size_class < 6 ? random() % 4
                                               : random() % 700;
    const int root = static_cast<int>(random() % static_cast<unsigned>(c.size()));
    const bool in_place_call = random() % 2 == 0;
    const auto algorithm_pick = static_cast<unsigned>(random());
    const std::size_t element = size_of(type);
    const std::size_t length = count * element;
    const std::size_t total = kind == 3 ? length * static_cast<std::size_t>(c.size()) : length;
    input.assign(length + 1, 0);
    expected.assign(total + 1, 0);
    got.assign(total + 1, 0x5A);
    testing::fill(input.data(), count, type, op, c.rank(), static_cast<unsigned>(index));
    const int n = static_cast<int>(count);
    std::string what;
    bool ok = true;
    switch (kind) {
      case 0: {
        what = "broadcast";
        const auto algorithm = pick_algorithm(all_broadcast_algorithms(), algorithm_pick);
        what += " " + std::string(to_string(algorithm));
        std::memcpy(expected.data(), input.data(), length);
        MPI_Bcast(expected.data(), n, testing::mpi_type(type), root, MPI_COMM_WORLD);
        std::memcpy(got.data(), input.data(), length);
        broadcast(c, got.data(), count, type, root, algorithm);
        ok = std::memcmp(got.data(), expected.data(), length) == 0;
        break;
      }
      case 1:
      case 2: {
        // Every concrete algorithm (its steps interleave with the others' in one sequence) or
        // automatic.
        const auto algorithm = pick_algorithm(all_reduce_algorithms(), algorithm_pick);
        what =
            std::string(kind == 1 ? "reduce " : "allreduce ") + std::string(to_string(algorithm));
        if (kind == 1) {
          MPI_Reduce(input.data(), expected.data(), n, testing::mpi_type(type), testing::mpi_op(op),
                     root, MPI_COMM_WORLD);
          const bool here_in_place = in_place_call && c.rank() == root;
          if (here_in_place) std::memcpy(got.data(), input.data(), length);
          reduce(c, here_in_place ? in_place : input.data(), got.data(), count, type, op, root,
                 algorithm);
          ok = c.rank() != root || testing::same_values(got.data(), expected.data(), count, type);
        } else {
          MPI_Allreduce(input.data(), expected.data(), n, testing::mpi_type(type),
                        testing::mpi_op(op), MPI_COMM_WORLD);
          if (in_place_call) std::memcpy(got.data(), input.data(), length);
          allreduce(c, in_place_call ? in_place : input.data(), got.data(), count, type, op,
                    algorithm);
          ok = testing::same_values(got.data(), expected.data(), count, type);
        }
        break;
      }
      default: {
        // Every concrete algorithm (their steps interleave with the others') or automatic.
        const auto algorithm = pick_algorithm(all_allgather_algorithms(), algorithm_pick);
        what = "allgather " + std::string(to_string(algorithm));
        MPI_Allgather(input.data(), n, testing::mpi_type(type), expected.data(), n,
                      testing::mpi_type(type), MPI_COMM_WORLD);
        if (in_place_call)
          std::memcpy(got.data() + static_cast<std::size_t>(c.rank()) * length, input.data(),
                      length);
        allgather(c, in_place_call ? in_place : input.data(), got.data(), count, type, algorithm);
        ok = std::memcmp(got.data(), expected.data(), total) == 0;
        break;
      }
    }
    ok = ok && got[total] == 0x5A;
    ASSERT_TRUE(testing::all_ranks(ok))
        << "operation " << index << " (seed " << seed << "): " << what << " type "
        << to_string(type) << " op " << to_string(op) << " count " << count << " root " << root
        << (in_place_call ? " in-place" : "");
  }
}

}  // namespace
}  // namespace cachecomm
