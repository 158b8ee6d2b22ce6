// Tuning files under MPI: the system MPI as the measured choice of every collective gives correct
// results; a measured algorithm is used; ranks that see different files still take one decision;
// mismatched, partial and corrupt files fall back to the built-in rules; a forced choice wins.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"
#include "cachecomm/config.hpp"
#include "cachecomm/error.hpp"
#include "coll/tuning_loader.hpp"
#include "coll/tuning_table.hpp"

namespace cachecomm {
namespace {

using detail::tuned_op;

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

/// A directory for this job's files (rank 0's pid, so parallel test runs do not share it).
const std::string& test_directory() {
  static const std::string directory = [] {
    long pid = static_cast<long>(::getpid());
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return "/tmp/cachecomm_tuning_test_" + std::to_string(pid);
  }();
  return directory;
}

/// This node's key, as the loader computes it.
detail::tuning_key node_key() {
  comm probe(MPI_COMM_WORLD, config::from_environment().set("CACHECOMM_TUNING", "off"));
  return detail::key_of_this_node(probe.topology().node_size, probe.topology().oversubscribed);
}

/// A table choosing `choice(op)` at every measured size (8 B and 1 MiB).
detail::tuning_table table_choosing(const std::function<std::string(tuned_op)>& choice) {
  detail::tuning_table table;
  table.key = node_key();
  table.created = "test";
  for (std::size_t op = 0; op < detail::tuned_op_count; ++op) {
    const std::string name = choice(static_cast<tuned_op>(op));
    table.entries[op] = {{8, name, {}, {}}, {1 << 20, name, {}, {}}};
  }
  return table;
}

/// Rank 0 writes `text` to `name` in the test directory; every rank gets the path.
std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = test_directory() + "/" + name;
  if (world_rank() == 0) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

std::string mpi_everywhere_file() {
  return write_file("mpi.json",
                    detail::tuning_file_text({table_choosing([](tuned_op) { return "mpi"; })}));
}

config with_tuning(const std::string& path) {
  return config::from_environment().set("CACHECOMM_TUNING", path);
}

/// The same string on every rank (a decision that differed would deadlock the collectives).
void expect_same_on_every_rank(const std::string& text) {
  const std::size_t hash = std::hash<std::string>{}(text);
  unsigned long long values[2] = {hash, ~static_cast<unsigned long long>(hash)};
  unsigned long long largest[2] = {};
  MPI_Allreduce(values, largest, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(largest[0], hash) << "ranks disagree: this rank has " << text;
  EXPECT_EQ(~largest[1], hash) << "ranks disagree: this rank has " << text;
}

/// Whether a file's "mpi" shows as "mpi": on one node of more than one rank. Across nodes
/// (CACHECOMM_RANKS_PER_NODE splits the job) a node's table cannot decide for the whole comm, and
/// one rank has nothing to choose between (no file is read): the built-in rules decide.
bool one_node(const comm& c) {
  return c.topology().node_count == 1 && c.topology().node_size > 1;
}

std::string all_choices(comm& c, std::size_t bytes) {
  return explain_broadcast(c, bytes).algorithm + " " + explain_reduce(c, bytes).algorithm + " " +
         explain_allreduce(c, bytes).algorithm + " " + explain_allgather(c, bytes).algorithm + " " +
         explain_gather(c, bytes).algorithm + " " + explain_scatter(c, bytes).algorithm + " " +
         explain_alltoall(c, bytes).algorithm + " " + explain_allgatherv(c, bytes).algorithm + " " +
         explain_alltoallv(c, bytes).algorithm + " " + explain_gatherv(c, bytes).algorithm + " " +
         std::string(to_string(c.default_barrier())) + " " + c.default_barrier_reason();
}

/// Gather, gatherv, scatter, alltoall, allgatherv and alltoallv (in place too), automatic, of
/// `count` elements per rank (`input`: this rank's, element i is i + rank).
void expect_block_collectives_correct(comm& c, const std::vector<long long>& input,
                                      std::size_t count) {
  const int rank = c.rank();
  const auto ranks = static_cast<std::size_t>(c.size());
  const int root = c.size() - 1;
  const auto value = [](std::size_t from, std::size_t i) {
    return static_cast<long long>(i) + static_cast<long long>(from);
  };
  std::vector<long long> all(count * ranks, -1);
  gather(c, input.data(), all.data(), count, datatype::int64, root);
  if (rank == root) {
    for (std::size_t from = 0; from < ranks; ++from)
      ASSERT_EQ(all[from * count + count - 1], value(from, count - 1)) << "gather";
  }
  const std::vector<std::size_t> gathered_counts(ranks, count);
  std::vector<std::size_t> gathered_offsets(ranks);
  for (std::size_t r = 0; r < ranks; ++r) gathered_offsets[r] = r * count;
  std::fill(all.begin(), all.end(), -1);
  gatherv(c, input.data(), count, all.data(), gathered_counts, gathered_offsets, datatype::int64,
          root);
  if (rank == root) {
    for (std::size_t from = 0; from < ranks; ++from)
      ASSERT_EQ(all[from * count + count - 1], value(from, count - 1)) << "gatherv";
  }
  std::vector<long long> sent(count * ranks);
  for (std::size_t to = 0; to < ranks; ++to)
    for (std::size_t i = 0; i < count; ++i) sent[to * count + i] = value(to, i) * 3;
  std::vector<long long> mine(count, -1);
  scatter(c, sent.data(), mine.data(), count, datatype::int64, root);
  ASSERT_EQ(mine[count - 1], value(static_cast<std::size_t>(rank), count - 1) * 3) << "scatter";
  for (std::size_t to = 0; to < ranks; ++to)
    for (std::size_t i = 0; i < count; ++i) sent[to * count + i] = value(to, i) + 1000 * rank;
  std::fill(all.begin(), all.end(), -1);
  alltoall(c, sent.data(), all.data(), count, datatype::int64);
  for (std::size_t from = 0; from < ranks; ++from) {
    ASSERT_EQ(all[from * count + count - 1], value(static_cast<std::size_t>(rank), count - 1) +
                                                 1000 * static_cast<long long>(from))
        << "alltoall";
  }
  const std::vector<std::size_t> counts(ranks, count);
  std::vector<std::size_t> displacements(ranks);
  for (std::size_t r = 0; r < ranks; ++r) displacements[r] = r * count;
  std::fill(all.begin(), all.end(), -1);
  allgatherv(c, input.data(), count, all.data(), counts, displacements, datatype::int64);
  for (std::size_t from = 0; from < ranks; ++from)
    ASSERT_EQ(all[from * count + count - 1], value(from, count - 1)) << "allgatherv";
  // Alltoallv chooses inside the call; in place it cannot hand its buffer to the system MPI (its
  // first step has received into it) and must still be right where the file says mpi.
  for (const bool in_place_call : {false, true}) {
    for (std::size_t to = 0; to < ranks; ++to)
      for (std::size_t i = 0; i < count; ++i) sent[to * count + i] = value(to, i) + 1000 * rank;
    std::fill(all.begin(), all.end(), -1);
    if (in_place_call) {
      all = sent;
      alltoallv(c, in_place, {}, {}, all.data(), counts, displacements, datatype::int64);
    } else {
      alltoallv(c, sent.data(), counts, displacements, all.data(), counts, displacements,
                datatype::int64);
    }
    for (std::size_t from = 0; from < ranks; ++from) {
      for (const std::size_t i : {std::size_t{0}, count - 1}) {
        ASSERT_EQ(all[from * count + i],
                  value(static_cast<std::size_t>(rank), i) + 1000 * static_cast<long long>(from))
            << "alltoallv, in place " << in_place_call;
      }
    }
  }
}

/// Every data collective and the barrier, automatic, checked against the expected values (both
/// sizes: the slot path and the large path), in place and not.
void expect_collectives_correct(comm& c) {
  const int rank = c.rank();
  const int size = c.size();
  c.barrier();
  for (std::size_t count : {std::size_t{3}, std::size_t{70000}}) {
    std::vector<long long> data(count);
    const int root = size - 1;
    for (std::size_t i = 0; i < count; ++i)
      data[i] = rank == root ? static_cast<long long>(i * 7 + 1) : -1;
    broadcast(c, data.data(), count, datatype::int64, root);
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(data[i], static_cast<long long>(i * 7 + 1));

    std::vector<long long> input(count);
    for (std::size_t i = 0; i < count; ++i) input[i] = static_cast<long long>(i) + rank;
    const auto expected = [&](std::size_t i) {
      return static_cast<long long>(i) * size + static_cast<long long>(size) * (size - 1) / 2;
    };
    std::vector<long long> output(count, 0);
    reduce(c, input.data(), output.data(), count, datatype::int64, reduce_op::sum, 0);
    if (rank == 0) {
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(output[i], expected(i));
    }
    std::vector<long long> in_place_data = input;  // non-root in_place: the input is receive
    reduce(c, in_place, in_place_data.data(), count, datatype::int64, reduce_op::sum, 0);
    if (rank == 0) {
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(in_place_data[i], expected(i));
    }
    allreduce(c, input.data(), output.data(), count, datatype::int64, reduce_op::sum);
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(output[i], expected(i));
    in_place_data = input;
    allreduce(c, in_place, in_place_data.data(), count, datatype::int64, reduce_op::sum);
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(in_place_data[i], expected(i));

    std::vector<long long> gathered(count * static_cast<std::size_t>(size), -1);
    allgather(c, input.data(), gathered.data(), count, datatype::int64);
    for (int from = 0; from < size; ++from) {
      for (std::size_t i = 0; i < count; ++i)
        ASSERT_EQ(gathered[static_cast<std::size_t>(from) * count + i],
                  static_cast<long long>(i) + from);
    }
    std::fill(gathered.begin(), gathered.end(), -1);
    std::copy(
        input.begin(), input.end(),
        gathered.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(rank) * count));
    allgather(c, in_place, gathered.data(), count, datatype::int64);
    for (int from = 0; from < size; ++from) {
      ASSERT_EQ(gathered[static_cast<std::size_t>(from) * count + count - 1],
                static_cast<long long>(count - 1) + from);
    }
    ASSERT_NO_FATAL_FAILURE(expect_block_collectives_correct(c, input, count));
  }
  c.barrier();
}

TEST(Tuning, SystemMpiChosenForEveryOperationIsCorrect) {
  comm c(MPI_COMM_WORLD, with_tuning(mpi_everywhere_file()));
  comm built_in(MPI_COMM_WORLD, with_tuning("off"));
  for (std::size_t bytes : {std::size_t{8}, std::size_t{4096}, std::size_t{1} << 20}) {
    if (!one_node(c)) {
      EXPECT_EQ(all_choices(c, bytes), all_choices(built_in, bytes));
      continue;
    }
    EXPECT_EQ(explain_broadcast(c, bytes).algorithm, "mpi");
    EXPECT_EQ(explain_reduce(c, bytes).algorithm, "mpi");
    EXPECT_EQ(explain_allreduce(c, bytes).algorithm, "mpi");
    const auto allgather_choice = explain_allgather(c, bytes);
    EXPECT_EQ(allgather_choice.algorithm, "mpi");
    EXPECT_NE(allgather_choice.reason.find("cachecomm-tune"), std::string::npos);
    EXPECT_EQ(explain_gather(c, bytes).algorithm, "mpi");
    EXPECT_EQ(explain_scatter(c, bytes).algorithm, "mpi");
    EXPECT_EQ(explain_alltoall(c, bytes).algorithm, "mpi");
    EXPECT_EQ(explain_allgatherv(c, bytes).algorithm, "mpi");
    EXPECT_EQ(explain_alltoallv(c, bytes).algorithm, "mpi");
    // A pair chooses its gatherv inside the call, from 16 KiB (where single copy is possible).
    if (c.size() == 2 && bytes >= (16U << 10) && explain_gatherv(c, 8).algorithm == "single-copy") {
      EXPECT_EQ(explain_gatherv(c, bytes).algorithm, "mpi");
    }
  }
  EXPECT_EQ(c.default_barrier_reason().find("MPI_Barrier") != std::string::npos, one_node(c))
      << c.default_barrier_reason();
  expect_collectives_correct(c);
}

// Alltoallv hands a call to the system MPI after its first step; a rank whose receive count from
// another is smaller than what that rank sends must still keep the smaller part and report both
// sizes (MPI would fail the call with a truncation), and the other ranks are not affected.
TEST(Tuning, SystemMpiAlltoallvWithADisagreeingCountFailsClearly) {
  comm c(MPI_COMM_WORLD, with_tuning(mpi_everywhere_file()));
  if (!one_node(c)) GTEST_SKIP() << "across nodes the call is MPI's whole, with its own errors";
  const auto ranks = static_cast<std::size_t>(c.size());
  constexpr std::size_t count = 70000;  // int64: beyond the slots, where the choice is taken
  // Rank 1 sends rank 0 `count + 100` elements; rank 0 expects `count`.
  std::vector<std::size_t> send_counts(ranks, count);
  std::vector<std::size_t> receive_counts(ranks, count);
  if (c.rank() == 1) send_counts[0] = count + 100;
  std::vector<std::size_t> send_offsets(ranks);
  std::vector<std::size_t> receive_offsets(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    send_offsets[r] = r * (count + 100);
    receive_offsets[r] = r * (count + 100);
  }
  std::vector<long long> sent(ranks * (count + 100));
  for (std::size_t i = 0; i < sent.size(); ++i) sent[i] = 1000LL * c.rank() + 1;
  std::vector<long long> got(ranks * (count + 100), -1);
  std::string message;
  try {
    alltoallv(c, sent.data(), send_counts, send_offsets, got.data(), receive_counts,
              receive_offsets, datatype::int64);
  } catch (const usage_error& e) {
    message = e.what();
  }
  if (c.rank() == 0) {
    EXPECT_NE(message.find(std::to_string((count + 100) * 8)), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(count * 8)), std::string::npos) << message;
    EXPECT_EQ(got[receive_offsets[1] + count - 1], 1001) << "the smaller part arrives";
    EXPECT_EQ(got[receive_offsets[1] + count], -1) << "and nothing beyond it";
  } else {
    EXPECT_EQ(message, "") << "only the receiver sees the disagreement";
    EXPECT_EQ(got[count - 1], 1) << "the others' blocks arrive";
  }
  c.barrier();
}

TEST(Tuning, MeasuredAlgorithmIsUsed) {
  const std::string path =
      write_file("central.json", detail::tuning_file_text({table_choosing([](tuned_op op) {
                   switch (op) {
                     case tuned_op::barrier: return "binomial";
                     case tuned_op::broadcast: return "central";
                     case tuned_op::allgather:
                     case tuned_op::gather:
                     case tuned_op::scatter:
                     case tuned_op::alltoall:
                     case tuned_op::allgatherv:
                     case tuned_op::alltoallv:
                     case tuned_op::gatherv: return "central";
                     default: return "reduce-scatter";
                   }
                 })}));
  comm c(MPI_COMM_WORLD, with_tuning(path));
  if (c.topology().node_size > 1) {  // one rank: nothing to choose between, no file is read
    EXPECT_EQ(explain_broadcast(c, 8).algorithm, "central");
    EXPECT_NE(explain_broadcast(c, 8).reason.find("cachecomm-tune"), std::string::npos);
    EXPECT_EQ(explain_allreduce(c, 1 << 20).algorithm, "reduce-scatter");
    EXPECT_EQ(explain_allgather(c, 1 << 22).algorithm, "central");
    EXPECT_EQ(explain_gather(c, 1 << 20).algorithm, "central");  // not the built-in MPI rule
    EXPECT_EQ(explain_alltoall(c, 1 << 20).algorithm, "central");
    EXPECT_EQ(c.default_barrier(), barrier_algorithm::binomial);
  }
  expect_collectives_correct(c);
}

TEST(Tuning, RanksThatSeeDifferentFilesStillAgree) {
  const std::string mpi_file = mpi_everywhere_file();
  const std::string corrupt = write_file("corrupt.json", "{\"format\": 1, \"tables\": [");
  const std::string missing = test_directory() + "/missing.json";
  const int rank = world_rank();
  {
    // Node rank 0 reads the MPI file; the others would read garbage or nothing: all take MPI.
    comm c(MPI_COMM_WORLD, with_tuning(rank == 0 ? mpi_file : (rank % 2 == 1 ? corrupt : missing)));
    EXPECT_EQ(explain_broadcast(c, 64).algorithm == "mpi", one_node(c));
    expect_same_on_every_rank(all_choices(c, 64) + "|" + all_choices(c, 1 << 20));
    expect_collectives_correct(c);
  }
  {
    // Node rank 0 sees a corrupt file, the others the MPI one: all take the built-in rules.
    comm c(MPI_COMM_WORLD, with_tuning(rank == 0 ? corrupt : mpi_file));
    EXPECT_NE(explain_broadcast(c, 64).algorithm, "mpi");
    expect_same_on_every_rank(all_choices(c, 64) + "|" + all_choices(c, 1 << 20));
    expect_collectives_correct(c);
  }
}

TEST(Tuning, MismatchedPartialAndCorruptFilesFallBackToBuiltInRules) {
  comm built_in(MPI_COMM_WORLD, with_tuning("off"));
  const std::string expected = all_choices(built_in, 64) + "|" + all_choices(built_in, 1 << 20);

  detail::tuning_table other_node = table_choosing([](tuned_op) { return "mpi"; });
  other_node.key.ranks_per_node += 1;
  detail::tuning_table partial = table_choosing([](tuned_op) { return "mpi"; });
  partial.entries[static_cast<std::size_t>(tuned_op::reduce)].clear();
  const std::string files[] = {
      write_file("other_node.json", detail::tuning_file_text({other_node})),
      write_file("partial.json", detail::tuning_file_text({partial})),
      write_file("corrupt.json", "not a tuning file"),
      test_directory() + "/absent.json",
  };
  for (const std::string& path : files) {
    comm c(MPI_COMM_WORLD, with_tuning(path));
    EXPECT_EQ(all_choices(c, 64) + "|" + all_choices(c, 1 << 20), expected) << path;
    expect_collectives_correct(c);
  }
}

TEST(Tuning, ForcedChoiceBeatsTuning) {
  config settings = with_tuning(mpi_everywhere_file());
  settings.set("CACHECOMM_BCAST", "tree").set("CACHECOMM_ALLREDUCE", "slots");
  settings.set("CACHECOMM_BARRIER", "tournament");
  comm c(MPI_COMM_WORLD, settings);
  EXPECT_EQ(explain_broadcast(c, 1 << 20).algorithm, "tree");
  EXPECT_EQ(explain_broadcast(c, 1 << 20).reason, "set by CACHECOMM_BCAST");
  EXPECT_EQ(explain_allreduce(c, 1 << 20).algorithm, "slots");
  // Not forced: the file decides.
  EXPECT_EQ(explain_reduce(c, 1 << 20).algorithm == "mpi", one_node(c));
  EXPECT_EQ(c.default_barrier(), barrier_algorithm::tournament);
  EXPECT_EQ(c.default_barrier_reason(), "set by CACHECOMM_BARRIER");
  expect_collectives_correct(c);
}

TEST(Tuning, DefaultLocationIsRead) {
  const std::string home = test_directory() + "/config";
  write_file("config/cachecomm/tuning.json",
             detail::tuning_file_text({table_choosing([](tuned_op) { return "mpi"; })}));
  const char* previous = std::getenv("XDG_CONFIG_HOME");
  const std::string saved = previous == nullptr ? "" : previous;
  ::setenv("XDG_CONFIG_HOME", home.c_str(), 1);
  EXPECT_EQ(detail::default_tuning_path(), home + "/cachecomm/tuning.json");
  {
    comm c(MPI_COMM_WORLD, with_tuning("auto"));
    EXPECT_EQ(explain_allreduce(c, 8).algorithm == "mpi", one_node(c));
  }
  if (previous == nullptr)
    ::unsetenv("XDG_CONFIG_HOME");
  else
    ::setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) std::filesystem::remove_all(test_directory());
}

}  // namespace
}  // namespace cachecomm
