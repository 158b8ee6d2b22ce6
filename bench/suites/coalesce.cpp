// coalesce: the seed's communication cache (sections 3.2, 5.5) against sending every small write
// alone and against per-destination record buffering, over MPI between (pretend) nodes and over
// shared memory within the node. Rank 0 writes 64-byte pieces into rank 1's window.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "cachecomm/comm.hpp"
#include "cachecomm/comm_cache.hpp"
#include "coalesce/mpi_line_sink.hpp"
#include "coalesce/record_aggregator.hpp"
#include "coalesce/shm_line_sink.hpp"
#include "coll/barrier.hpp"
#include "common/interleaved.hpp"
#include "common/report.hpp"
#include "common/suite.hpp"
#include "core/comm_impl.hpp"
#include "shm/segment.hpp"

namespace cachecomm::bench {

namespace {

constexpr int writer_rank = 0;
constexpr int target_rank = 1;
constexpr int offset_slices = 4;  // iterations cycle through this many fresh offset sequences

struct coalesce_options {
  std::vector<std::string> paths{"mpi", "shm"};
  std::vector<std::string> patterns{"random", "streaming", "repeated"};
  std::vector<std::size_t> sets{64, 256, 1024, 4096};
  std::vector<std::size_t> ways{4, 16};
  std::size_t line_bytes = 64;
  std::size_t write_bytes = 64;
  std::size_t writes = 16384;
  std::size_t window_mib = 16;
  std::size_t aggregate_bytes = 64 * 1024;
  std::size_t hot_lines = 1024;
  std::size_t large_bytes = 1 << 20;
  timing_plan plan{2, 15, 1};
};

// Offsets for `slices` iterations of `writes` writes each, aligned to the write size.
std::vector<std::uint64_t> make_offsets(const std::string& pattern, const coalesce_options& options,
                                        std::size_t window) {
  const std::size_t pieces = window / options.write_bytes;
  std::vector<std::uint64_t> offsets(options.writes * offset_slices);
  std::mt19937_64 random(42);
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    std::size_t piece = 0;
    if (pattern == "random") {
      piece = random() % pieces;
    } else if (pattern == "streaming") {
      piece = i % pieces;
    } else if (pattern == "repeated") {
      piece = random() % std::min(options.hot_lines, pieces);
    } else {
      throw invalid_argument("cachecomm-bench coalesce: unknown pattern '" + pattern +
                             "' (use random, streaming, repeated)");
    }
    offsets[i] = piece * options.write_bytes;
  }
  return offsets;
}

// Windows, sinks and the MPI window the baselines use (the caches bring their own).
struct baseline_path {
  baseline_path(comm& communicator, std::size_t window, bool over_mpi)
      : impl(communicator.impl()), mpi(over_mpi) {
    const auto& topology = impl.topology();
    segment =
        detail::shm_segment(impl.node(), window * static_cast<std::size_t>(topology.node_size));
    own_window = segment.bytes_at(window * static_cast<std::size_t>(topology.node_rank), window);
    std::vector<std::byte*> window_of_rank(static_cast<std::size_t>(impl.size()), nullptr);
    for (int node_rank = 0; node_rank < topology.node_size; ++node_rank) {
      window_of_rank[static_cast<std::size_t>(
          topology.node_ranks[static_cast<std::size_t>(node_rank)])] =
          segment.bytes_at(window * static_cast<std::size_t>(node_rank), window);
    }
    target_window = window_of_rank[target_rank];
    shm_sink = std::make_unique<detail::shm_line_sink>(window_of_rank);
    if (mpi) {
      mpi_sink = std::make_unique<detail::mpi_line_sink>(impl.world(),
                                                         std::span<std::byte>(own_window, window));
      MPI_Win_create(own_window, static_cast<MPI_Aint>(window), 1, MPI_INFO_NULL, impl.world(),
                     &put_window);
      MPI_Win_lock_all(MPI_MODE_NOCHECK, put_window);
    }
  }
  ~baseline_path() {
    if (put_window != MPI_WIN_NULL) {
      MPI_Win_unlock_all(put_window);
      MPI_Win_free(&put_window);
    }
  }
  baseline_path(const baseline_path&) = delete;
  baseline_path& operator=(const baseline_path&) = delete;

  [[nodiscard]] detail::line_sink& sink() {
    return mpi ? static_cast<detail::line_sink&>(*mpi_sink) : *shm_sink;
  }
  /// What ends every timed iteration: the target has applied everything and all ranks know it.
  void close_epoch() {
    if (mpi_sink) mpi_sink->complete_epoch();
    cachecomm::detail::node_aware_barrier(impl);
  }

  detail::comm_impl& impl;
  bool mpi;
  detail::shm_segment segment;
  std::byte* own_window = nullptr;
  std::byte* target_window = nullptr;
  std::unique_ptr<detail::shm_line_sink> shm_sink;
  std::unique_ptr<detail::mpi_line_sink> mpi_sink;
  MPI_Win put_window = MPI_WIN_NULL;
};

// "4K:3 8K:40": the message size histogram in one table cell (bucket = lower bound).
std::string histogram_text(const cache_statistics& statistics) {
  std::string text;
  for (std::size_t bucket = 0; bucket < statistics.message_size_histogram.size(); ++bucket) {
    const auto count = statistics.message_size_histogram[bucket];
    if (count == 0) continue;
    const std::size_t bytes = std::size_t{1} << bucket;
    std::string size = bytes >= (1U << 20)   ? std::to_string(bytes >> 20) + "M"
                       : bytes >= (1U << 10) ? std::to_string(bytes >> 10) + "K"
                                             : std::to_string(bytes);
    text += (text.empty() ? "" : " ") + size + ":" + std::to_string(count);
  }
  return text;
}

json histogram_json(const cache_statistics& statistics) {
  json histogram = json::object();
  for (std::size_t bucket = 0; bucket < statistics.message_size_histogram.size(); ++bucket) {
    if (statistics.message_size_histogram[bucket] != 0) {
      histogram[std::to_string(std::size_t{1} << bucket)] =
          statistics.message_size_histogram[bucket];
    }
  }
  return histogram;
}

class coalesce_suite final : public suite {
 public:
  [[nodiscard]] std::string name() const override { return "coalesce"; }
  [[nodiscard]] std::string description() const override {
    return "Communication cache: small remote writes coalesced into large messages, beside "
           "per-write sends and "
           "per-destination buffering";
  }
  void add_options(CLI::App& command) override {
    command.add_option("--paths", m_options.paths, "mpi (forced node split) and/or shm")
        ->delimiter(',')
        ->capture_default_str();
    command.add_option("--patterns", m_options.patterns, "random, streaming, repeated")
        ->delimiter(',')
        ->capture_default_str();
    command.add_option("--sets", m_options.sets, "Cache sets to sweep")
        ->delimiter(',')
        ->capture_default_str();
    command.add_option("--ways", m_options.ways, "Cache ways to sweep")
        ->delimiter(',')
        ->capture_default_str();
    command.add_option("--line", m_options.line_bytes, "Cache line bytes")->capture_default_str();
    command.add_option("--writes", m_options.writes, "Writes per timed iteration")
        ->capture_default_str();
    command.add_option("--window-mib", m_options.window_mib, "Target window size in MiB")
        ->capture_default_str();
    command
        .add_option("--aggregate-bytes", m_options.aggregate_bytes,
                    "Per-destination buffer of the aggregation baseline")
        ->capture_default_str();
    command.add_option("--batches", m_options.plan.batches, "Samples per candidate")
        ->capture_default_str();
  }

  int run(const common_options& common) override {
    coalesce_options options = m_options;
    if (common.quick) {
      options.writes = 512;
      options.window_mib = 1;
      options.sets = {16, 64};
      options.ways = {4};
      options.large_bytes = 64 * 1024;
      options.plan = timing_plan{1, 3, 1};
    }
    int world_size = 0;
    int world_rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    report results("coalesce", MPI_COMM_WORLD);
    const bool print = world_rank == 0 && !common.quiet;
    if (world_size < 2) {
      if (world_rank == 0)
        std::fprintf(stderr, "cachecomm-bench coalesce: needs at least 2 ranks\n");
      return 2;
    }
    if (print) {
      std::printf(
          "cachecomm-bench coalesce: rank %d writes %zu x %zu B per iteration into rank %d's %zu "
          "MiB window%s\n",
          writer_rank, options.writes, options.write_bytes, target_rank, options.window_mib,
          results.oversubscribed() ? " (OVERSUBSCRIBED: ranks outnumber cores)" : "");
    }
    for (const std::string& path : options.paths) {
      config settings = config::from_environment();
      if (path == "mpi") settings.set("CACHECOMM_RANKS_PER_NODE", "1");
      comm communicator(MPI_COMM_WORLD, settings);
      const auto& node_ranks = communicator.topology().node_ranks;
      const bool target_on_node =
          std::find(node_ranks.begin(), node_ranks.end(), target_rank) != node_ranks.end();
      int mismatch =
          (path == "shm" && communicator.rank() == writer_rank && !target_on_node) ? 1 : 0;
      MPI_Allreduce(MPI_IN_PLACE, &mismatch, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (path != "mpi" && path != "shm")
        throw invalid_argument("cachecomm-bench coalesce: unknown path '" + path + "'");
      if (mismatch != 0) {
        results.note(
            "shm path skipped: ranks 0 and 1 are not on one node (CACHECOMM_RANKS_PER_NODE set?)");
        continue;
      }
      const std::size_t first = results.document()["results"].size();
      for (const std::string& pattern : options.patterns)
        run_pattern(communicator, path, pattern, options, results);
      if (print) {
        std::printf("\n== %s path ==\n", path.c_str());
        json slice = json::array();
        for (std::size_t i = first; i < results.document()["results"].size(); ++i)
          slice.push_back(results.document()["results"][i]);
        print_table(slice, {"pattern", "algorithm", "sets", "ways", "placement", "gbps",
                            "fraction_of_limit", "vs_alone", "vs_aggregate", "avg_message_bytes",
                            "messages_per_iter", "merges_per_iter", "median_us", "histogram"});
      }
    }
    results.note("fraction_of_limit: median payload bandwidth over the best bandwidth of one " +
                 std::to_string(options.large_bytes) +
                 "-byte message on the same path (mpi: a record message applied at the target; "
                 "shm: memcpy); fraction_of_put_large: the same against one MPI_Put of that size + "
                 "MPI_Win_flush");
    if (world_rank == 0 && !common.json_path.empty()) results.write(common.json_path);
    return 0;
  }

 private:
  void run_pattern(comm& communicator, const std::string& path, const std::string& pattern,
                   const coalesce_options& options, report& results) {
    const bool over_mpi = path == "mpi";
    const std::size_t window = options.window_mib << 20;
    const bool writer = communicator.rank() == writer_rank;
    const auto offsets = make_offsets(pattern, options, window);
    std::vector<std::byte> source(256 * options.write_bytes);
    for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<std::byte>(i * 7 + 1);
    auto data_of = [&](std::size_t i) { return source.data() + (i % 256) * options.write_bytes; };
    const double payload = static_cast<double>(options.writes * options.write_bytes);
    baseline_path base(communicator, window, over_mpi);
    long slice = 0;
    auto prepare = [&slice](long iteration) { slice = iteration % offset_slices; };
    auto offsets_now = [&] {
      return offsets.data() + static_cast<std::size_t>(slice) * options.writes;
    };

    std::vector<detail::line_sink*> sinks(static_cast<std::size_t>(communicator.size()),
                                          &base.sink());
    auto aggregator = std::make_shared<detail::record_aggregator>(sinks, options.aggregate_bytes);
    long aggregate_iterations = 0;
    auto aggregate_operation = [&] {
      if (writer) {
        const std::uint64_t* now = offsets_now();
        for (std::size_t i = 0; i < options.writes; ++i)
          aggregator->write(target_rank, now[i], data_of(i), options.write_bytes);
        aggregator->flush();
        ++aggregate_iterations;
      }
      base.close_epoch();
    };
    const std::string aggregate_name =
        "aggregate-" + std::to_string(options.aggregate_bytes / 1024) + "KiB";

    // Baselines: every write alone, per-destination buffering, one large message.
    std::vector<candidate> baselines;
    if (over_mpi) {
      baselines.push_back({"mpi", "put-per-write",
                           [&] {
                             if (writer) {
                               const std::uint64_t* now = offsets_now();
                               for (std::size_t i = 0; i < options.writes; ++i) {
                                 MPI_Put(data_of(i), static_cast<int>(options.write_bytes),
                                         MPI_BYTE, target_rank, static_cast<MPI_Aint>(now[i]),
                                         static_cast<int>(options.write_bytes), MPI_BYTE,
                                         base.put_window);
                                 MPI_Win_flush(target_rank, base.put_window);
                               }
                             }
                             base.close_epoch();
                           },
                           prepare});
    } else {
      baselines.push_back({"cachecomm", "store-per-write",
                           [&] {
                             if (writer) {
                               const std::uint64_t* now = offsets_now();
                               for (std::size_t i = 0; i < options.writes; ++i) {
                                 std::memcpy(base.target_window + now[i], data_of(i),
                                             options.write_bytes);
                               }
                             }
                             base.close_epoch();
                           },
                           prepare});
    }
    baselines.push_back({"cachecomm", aggregate_name, aggregate_operation, prepare});
    std::vector<std::byte> large(options.large_bytes, std::byte{3});
    detail::line_message large_message;
    baselines.push_back({"cachecomm", over_mpi ? "message-large" : "memcpy-large", [&] {
                           if (writer) {
                             large_message.append(0, large.data(), large.size());
                             base.sink().send(target_rank, large_message);
                           }
                           base.close_epoch();
                         }});
    if (over_mpi) {
      baselines.push_back({"mpi", "put-large", [&] {
                             if (writer) {
                               MPI_Put(large.data(), static_cast<int>(large.size()), MPI_BYTE,
                                       target_rank, 0, static_cast<int>(large.size()), MPI_BYTE,
                                       base.put_window);
                               MPI_Win_flush(target_rank, base.put_window);
                             }
                             base.close_epoch();
                           }});
    }
    auto times = measure_interleaved(communicator.mpi_comm(), baselines, options.plan);
    const double alone_gbps = payload / times[0].median * 1e-3;
    // The limit is the best the path showed for one large message (its capability; on a shared
    // machine its median also carries every preemption that hit a single long transfer).
    const double large_gbps = static_cast<double>(options.large_bytes) / times[2].min * 1e-3;
    const double put_large_gbps =
        over_mpi ? static_cast<double>(options.large_bytes) / times[3].min * 1e-3 : 0.0;
    const int timed_iterations = options.plan.batches * options.plan.iterations_per_batch;
    auto row = [&](const candidate& entry) {
      return json{{"op", "coalesce"},
                  {"path", path},
                  {"pattern", pattern},
                  {"impl", entry.impl},
                  {"algorithm", entry.algorithm},
                  {"iters", timed_iterations}};
    };
    for (std::size_t i = 0; i < baselines.size(); ++i) {
      const bool large_message = i >= 2;
      const double bytes = large_message ? static_cast<double>(options.large_bytes) : payload;
      const double gbps = bytes / times[i].median * 1e-3;
      json fields = row(baselines[i]);
      fields["bytes"] = bytes;
      fields["writes"] = large_message ? 1 : options.writes;
      fields["gbps"] = gbps;
      fields["fraction_of_limit"] = gbps / large_gbps;
      if (!large_message) fields["vs_alone"] = gbps / alone_gbps;
      if (put_large_gbps > 0) fields["fraction_of_put_large"] = gbps / put_large_gbps;
      if (i == 0) {
        fields["avg_message_bytes"] = options.write_bytes;
        fields["messages_per_iter"] = options.writes;
      }
      if (i == 1 && aggregate_iterations > 0) {
        fields["avg_message_bytes"] = static_cast<double>(aggregator->payload_bytes()) /
                                      static_cast<double>(aggregator->messages());
        fields["messages_per_iter"] =
            static_cast<double>(aggregator->messages()) / static_cast<double>(aggregate_iterations);
      }
      if (i == 1) fields["buffer_bytes"] = options.aggregate_bytes;
      results.add(fields, times[i]);
    }

    // The cache across the geometry sweep, both placements, beside the aggregation baseline.
    for (std::size_t sets : options.sets) {
      for (std::size_t ways : options.ways) {
        std::vector<std::unique_ptr<comm_cache>> caches;
        std::vector<long> iterations;
        for (placement_policy placement :
             {placement_policy::first_free, placement_policy::round_robin}) {
          caches.push_back(std::make_unique<comm_cache>(
              communicator, window, cache_geometry{options.line_bytes, sets, ways, placement}));
        }
        iterations.assign(caches.size(), 0);
        std::vector<candidate> candidates;
        for (std::size_t c = 0; c < caches.size(); ++c) {
          candidates.push_back({"cachecomm", "cache",
                                [&, c] {
                                  comm_cache& cache = *caches[c];
                                  if (writer) {
                                    const std::uint64_t* now = offsets_now();
                                    for (std::size_t i = 0; i < options.writes; ++i) {
                                      cache.write(target_rank, now[i], data_of(i),
                                                  options.write_bytes);
                                    }
                                    ++iterations[c];
                                  }
                                  cache.fence();
                                },
                                prepare});
        }
        candidates.push_back({"cachecomm", aggregate_name, aggregate_operation, prepare});
        auto cache_times = measure_interleaved(communicator.mpi_comm(), candidates, options.plan);
        const double aggregate_gbps = payload / cache_times.back().median * 1e-3;
        for (std::size_t c = 0; c < caches.size(); ++c) {
          const auto& statistics = caches[c]->statistics();
          const double gbps = payload / cache_times[c].median * 1e-3;
          const double runs = static_cast<double>(std::max<long>(iterations[c], 1));
          json fields = row(candidates[c]);
          fields.update(
              {{"bytes", payload},
               {"writes", options.writes},
               {"line_bytes", options.line_bytes},
               {"sets", sets},
               {"ways", ways},
               {"placement", std::string(to_string(caches[c]->geometry().placement))},
               {"gbps", gbps},
               {"fraction_of_limit", gbps / large_gbps},
               {"vs_alone", gbps / alone_gbps},
               {"vs_aggregate", gbps / aggregate_gbps},
               {"avg_message_bytes", statistics.average_message_bytes()},
               {"messages_per_iter", static_cast<double>(statistics.messages) / runs},
               {"merges_per_iter", static_cast<double>(statistics.merges) / runs},
               {"conflict_misses_per_iter", static_cast<double>(statistics.conflict_misses) / runs},
               {"message_size_histogram", histogram_json(statistics)},
               {"histogram", histogram_text(statistics)}});
          if (put_large_gbps > 0) fields["fraction_of_put_large"] = gbps / put_large_gbps;
          if (writer) results.add(fields, cache_times[c]);
        }
        // Only the writer's statistics mean anything; rank 0 is the writer and writes the JSON.
      }
    }
  }

  coalesce_options m_options;
};

const suite_registration<coalesce_suite> registration;

}  // namespace

}  // namespace cachecomm::bench
