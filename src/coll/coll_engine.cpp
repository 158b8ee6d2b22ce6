// Engine setup: settings, the segment layout, and the step primitives every
// algorithm shares (slots, the data region, `done`).
#include "coll/coll_engine.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_settings.hpp"
#include "coll/mismatch_error.hpp"
#include "coll/selection.hpp"
#include "coll/shared_copy.hpp"
#include "core/comm_impl.hpp"
#include "core/mpi_check.hpp"

namespace cachecomm::detail {

namespace {

// A rank's posted line also carries the description of its call (after the flag word): the call's
// first step (0 while being rewritten: a seqlock, since a writer a step ahead may be in its next
// call while a reader still checks this one), the call info and the byte count.
std::uint32_t& posted_first_step(padded_flag& line) {
  return reinterpret_cast<std::uint32_t*>(&line)[1];
}
std::uint32_t& posted_info(padded_flag& line) {
  return reinterpret_cast<std::uint32_t*>(&line)[2];
}
std::uint64_t& posted_bytes(padded_flag& line) {
  return reinterpret_cast<std::uint64_t*>(&line)[2];
}

std::string describe_call(std::uint32_t info, std::uint64_t bytes, std::int32_t root) {
  const auto kind = info >> 16U;
  if (kind == 9) return "per-rank counts with fingerprint " + std::to_string(bytes);
  if (kind == 10 || kind == 11 || kind == 12) return "its block";
  if (kind == 13) {
    // reduce_scatter: the total in the high bits, a digest of the per-rank counts in the low ones.
    const auto type = static_cast<datatype>((info >> 8U) & 0xffU);
    const auto op = static_cast<reduce_op>(info & 0xffU);
    char digest[16];
    std::snprintf(digest, sizeof digest, "%06llx",
                  static_cast<unsigned long long>(bytes & 0xffffffU));
    return "recvcounts of " + std::to_string(bytes >> 24U) + " bytes in all (per-rank counts " +
           "digest " + digest + ") of " + std::string(to_string(type)) + ", " +
           std::string(to_string(op));
  }
  std::string text = std::to_string(bytes) + " bytes";
  if (kind == 2 || kind == 7 || kind == 8) {
    const auto type = static_cast<datatype>((info >> 8U) & 0xffU);
    const auto op = static_cast<reduce_op>(info & 0xffU);
    text += " of " + std::string(to_string(type)) + " (" + std::to_string(bytes / size_of(type)) +
            " elements), " + std::string(to_string(op));
  }
  // A reduction without a root is an allreduce; the other rooted calls always have one.
  if (root >= 0)
    text += ", root node rank " + std::to_string(root);
  else if (kind == 2)
    text += ", no root (allreduce)";
  return text;
}

const char* kind_name(std::uint32_t info) {
  switch (info >> 16U) {
    case 1: return "broadcast";
    case 2: return "reduction";
    case 3: return "allgather";
    case 4: return "gather";
    case 5: return "scatter";
    case 6: return "alltoall";
    case 7: return "scan";
    case 8: return "reduce_scatter_block";
    case 9: return "allgatherv";
    case 10: return "gatherv";
    case 11: return "scatterv";
    case 12: return "alltoallv";
    case 13: return "reduce_scatter";
    default: return "collective";
  }
}

}  // namespace

coll_engine& coll_engine::of(comm_impl& impl) {
  auto& state = impl.collectives_state();
  if (!state) state = std::make_shared<coll_engine>(impl);
  return *state;
}

coll_engine::coll_engine(comm_impl& impl) {
  static_assert(slot_payload + slot_header_bytes == slot_stride);
  static_assert(slot_payload == thresholds::slot_message_bytes,
                "the automatic choice must know where the slot path ends");
  static_assert(slot_header_bytes + thresholds::slot_flag_line_payload_bytes == cache_line_size,
                "the automatic choice must know which payloads share their flag's line");
  const node_topology& topology = impl.topology();
  m_size = topology.node_size;
  m_rank = topology.node_rank;
  m_oversubscribed = topology.oversubscribed;
  m_wait = &impl.wait();

  const coll_settings settings = read_coll_settings(impl.settings());
  const auto size = static_cast<std::size_t>(m_size);
  // Every rank needs room for a few lines of its own in a large reduction's staging area.
  m_tuning.region_bytes = round_up(std::max(settings.region_bytes, size * 16384), 4096);
  m_tuning.chunk_bytes =
      std::min(round_up(settings.chunk_bytes, cache_line_size), m_tuning.region_bytes);
  m_half_bytes = region_half_bytes(m_tuning.region_bytes, settings.ring_bytes,
                                   topology.l2_cache_bytes, m_oversubscribed);
  m_tuning.check = settings.check;
  // Ordinary stores unless asked: streaming ones were adopted on AMD against a 2.2 GB/s copy that
  // turned out to be glibc's `rep movsb` trap (shm/memory_copy.hpp), not line ownership; with
  // copy_memory, ordinary stores were faster on the Zen 3 EPYC VM for allgather (OSU, 16 KiB-4 MiB:
  // 1.26-1.79x plain MPI's speed against 0.94-1.20 streaming), reduce (1-4 MiB: 68-274 us against
  // 99-452) and broadcast (16-256 KiB), and never clearly slower (docs/architecture.md, "The `rep
  // movsb` trap"). Oversubscribed they were slower still (a reader often runs on the writer's
  // core).
  m_tuning.streaming_stores = settings.streaming == streaming_choice::on;
  // On AMD (not oversubscribed) gather-reduce's allreduce staging still measures both store modes
  // per call: with its ring through the whole region the faster mode changed with the vCPU
  // placement of the EPYC VM (store_mode.hpp), and it was ahead at 128 KiB and 4 MiB in OSU here.
  m_tuning.adaptive_stores = settings.streaming == streaming_choice::adaptive ||
                             (settings.streaming == streaming_choice::automatic &&
                              !m_oversubscribed && store_modes_adapt_by_default());
  m_tuning.amd_cpu = cpu_is_amd();
  m_tuning.allgather_staging = settings.allgather_staging;
  m_tuning.broadcast = settings.broadcast;
  m_tuning.reduce = settings.reduce;
  m_tuning.allreduce = settings.allreduce;
  m_tuning.allgather = settings.allgather;
  m_tuning.gather = settings.gather;
  m_tuning.scatter = settings.scatter;
  m_tuning.alltoall = settings.alltoall;
  m_tuning.scan = settings.scan;
  m_online =
      online_selector(settings.online_selection, settings.online_recheck, settings.selection_metric,
                      m_oversubscribed, settings.online_budget_percent);
  m_tuning.reduce_scatter = settings.reduce_scatter;
  m_tuning.allgatherv = settings.allgatherv;
  m_tuning.gatherv = settings.gatherv;
  m_tuning.scatterv = settings.scatterv;
  m_tuning.alltoallv = settings.alltoallv;

  segment_layout layout;
  const std::size_t posted = layout.reserve(slot_array<padded_flag>::bytes_for(size));
  const std::size_t done = layout.reserve(slot_array<padded_flag>::bytes_for(size));
  const std::size_t address = layout.reserve(slot_array<padded_flag>::bytes_for(size));
  const std::size_t call_lines = layout.reserve(slot_array<padded_flag>::bytes_for(size));
  const std::size_t prepared = layout.reserve(slot_array<padded_flag>::bytes_for(size));
  m_trial_stride = round_up(trial_values_per_rank * sizeof(std::uint64_t), cache_line_size) /
                   sizeof(std::uint64_t);
  const std::size_t trial_bytes = size * m_trial_stride * sizeof(std::uint64_t);
  const std::size_t trial_values = layout.reserve(trial_bytes, cache_line_size);
  m_slot_ring = settings.slot_ring != 0 ? settings.slot_ring : (m_oversubscribed ? 32U : 8U);
  m_small_slot_ring = m_oversubscribed ? 256U : 64U;
  const std::size_t slots = layout.reserve(m_slot_ring * size * slot_stride, 4096);
  const std::size_t small_slots =
      layout.reserve(m_small_slot_ring * size * small_slot_stride, 4096);
  // The data region last: its page tables are filled at its first use (prepare_region), not
  // here. Filling them took 2.8-3.1 ms of a communicator's first collective (4 MiB, 2 ranks, EPYC
  // VM), which a communicator whose calls all fit the slots never needs.
  m_region_offset = layout.reserve(2 * m_half_bytes, 4096);
  m_segment = shm_segment(impl.node(), layout.size(), {}, {.leading_bytes = m_region_offset});
  m_posted = slot_array<padded_flag>(m_segment.bytes_at(posted, size * cache_line_size), size);
  m_done = slot_array<padded_flag>(m_segment.bytes_at(done, size * cache_line_size), size);
  m_address = slot_array<padded_flag>(m_segment.bytes_at(address, size * cache_line_size), size);
  m_call_lines =
      slot_array<padded_flag>(m_segment.bytes_at(call_lines, size * cache_line_size), size);
  m_region_prepared =
      slot_array<padded_flag>(m_segment.bytes_at(prepared, size * cache_line_size), size);
  m_check.inspect = [](void* engine, int waited_node_rank, wait_check::ready_function ready,
                       void* ready_context) {
    static_cast<coll_engine*>(engine)->inspect_peers(waited_node_rank, ready, ready_context);
  };
  m_check.context = this;
  m_trial_values = reinterpret_cast<std::uint64_t*>(m_segment.bytes_at(trial_values, trial_bytes));
  m_slots = m_segment.bytes_at(slots, m_slot_ring * size * slot_stride);
  m_small_slots = m_segment.bytes_at(small_slots, m_small_slot_ring * size * small_slot_stride);
  m_region = m_segment.bytes_at(m_region_offset, 2 * m_half_bytes);
  m_inputs.resize(size);
  m_addresses.resize(size);
  m_peer_words.resize(peer_words * size);

  // Single copy is the comm's, probed once and shared with its channels.
  m_cross = &impl.single_copy();
  m_cma = m_cross->can_read();
  m_cma_push = m_cross->can_read() && m_cross->can_write();
}

void coll_engine::prepare_region() {
  // Reserves the region's memory too (shm_segment::populate): a rank that finds none tells the
  // others through its flag, and every rank fails the call naming it, rather than one SIGBUS.
  constexpr std::uint32_t prepared = 1;
  constexpr std::uint32_t failed = 2;
  // Its own part of each half first: the ranks allocate the region's pages side by side, then
  // map the others' (1 ms less than all of them at once, 2 ranks).
  const std::size_t own_part = m_half_bytes / static_cast<std::size_t>(m_size);
  int error = 0;
  for (std::uint32_t half = 0; half < 2 && error == 0; ++half) {
    error = m_segment.populate(
        m_region_offset + half * m_half_bytes + static_cast<std::size_t>(m_rank) * own_part,
        own_part);
  }
  if (error == 0) error = m_segment.populate(m_region_offset, 2 * m_half_bytes);
  if (error != 0) {
    m_wait->publish(m_region_prepared[static_cast<std::size_t>(m_rank)].value, failed);
    throw system_error("cachecomm: reserving the " + std::to_string(2 * m_half_bytes) +
                           "-byte data region of a communicator's collectives",
                       error);
  }
  // Each rank writes its own part of both halves once, where the region ring puts its areas, and
  // the ranks wait for each other (a ring broadcast's root may write any part from its first call
  // on). Untouched, the deep ring's lines came from memory for the first pass through it, and
  // online selection's trial, which times a candidate's early calls, took central alltoall of 128
  // KiB at 20-25 us against 11-12 settled (2 ranks, EPYC VM) and kept single copy at 15-21.
  for (std::uint32_t half = 0; half < 2; ++half)
    std::memset(region(half) + static_cast<std::size_t>(m_rank) * own_part, 0, own_part);
  m_wait->publish(m_region_prepared[static_cast<std::size_t>(m_rank)].value, prepared);
  for (int rank = 0; rank < m_size; ++rank) {
    if (rank == m_rank) continue;
    const auto& flag = m_region_prepared[static_cast<std::size_t>(rank)].value;
    wait_for(flag, prepared, rank, "the data region's first use");
    if (flag.load(std::memory_order_acquire) == failed) {
      throw system_error("cachecomm: node rank " + std::to_string(rank) +
                             " could not reserve the data region of a communicator's collectives",
                         ENOMEM);
    }
  }
  m_region_ready = true;
}

coll_engine::~coll_engine() {
  if (m_rank != 0) return;
  try {
    std::vector<std::string> lines = m_online.report();
    for (std::string& line : m_store_modes.report()) lines.push_back("node rank 0's " + line);
    for (std::string& line : m_ring_store_modes.report()) lines.push_back("node rank 0's " + line);
    if (lines.empty()) return;
    const std::string prefix = "communicator of " + std::to_string(m_size) + " node ranks: ";
    for (std::string& line : lines) line.insert(0, prefix);
    add_to_selection_log(lines);
  } catch (...) {  // a report lost is better than a destructor that throws
  }
}

void coll_engine::describe_slot(std::uint32_t step, std::size_t bytes) const {
  auto* header = reinterpret_cast<slot_header*>(slot(m_rank, step, bytes));
  header->call_info = m_call.info;
  header->call_bytes = m_call.bytes;
}

void coll_engine::check_call(int rank, std::uint32_t step, std::uint32_t info,
                             std::uint64_t bytes) {
  if (info != m_call.info || bytes != m_call.bytes) [[unlikely]]
    call_mismatch(rank, step, info, bytes, m_call.root);  // slot headers carry no root
}

void coll_engine::call_mismatch(int rank, std::uint32_t step, std::uint32_t info,
                                std::uint64_t bytes, std::int32_t root) {
  finish_step(step);  // this rank reads no more of the step; the others may go on
  auto differs = mismatch_error::field::size;
  if ((info >> 16U) != (m_call.info >> 16U)) {
    differs = mismatch_error::field::collective;
  } else if (((info >> 8U) & 0xffU) != ((m_call.info >> 8U) & 0xffU)) {
    differs = mismatch_error::field::datatype;
  } else if ((info & 0xffU) != (m_call.info & 0xffU)) {
    differs = mismatch_error::field::operation;
  } else if (bytes == m_call.bytes && root != m_call.root) {
    differs = mismatch_error::field::root;
  }
  throw mismatch_error(std::string("cachecomm: ") + kind_name(m_call.info) + ": node rank " +
                           std::to_string(rank) + " passed " + describe_call(info, bytes, root) +
                           " to its " + kind_name(info) + ", this rank (node rank " +
                           std::to_string(m_rank) + ") " +
                           describe_call(m_call.info, m_call.bytes, m_call.root),
                       differs);
}

void coll_engine::call_abandoned(int rank, std::uint32_t number) {
  finish_step(m_step);
  throw mismatch_error(
      std::string("cachecomm: ") + kind_name(m_call.info) + ": node rank " + std::to_string(rank) +
          " left this call (collective " + std::to_string(m_call.number) +
          " of the communicator; it is in " + std::to_string(number) + ") without what node rank " +
          std::to_string(m_rank) +
          " waits for: the ranks passed different arguments, which took them different ways "
          "(this rank " +
          describe_call(m_call.info, m_call.bytes, m_call.root) + ")",
      mismatch_error::field::size);
}

std::uint32_t coll_engine::begin_step() {
  return ++m_step;
}

void coll_engine::ensure_free(std::uint32_t step, std::uint32_t depth) {
  const std::uint32_t needed = step - depth;
  if (sequence_reached(m_all_done, needed)) return;
  // A writer that has run a whole ring ahead waits until its readers are half a ring behind, not
  // just one slot: otherwise it would re-read their `done` lines (and they re-acquire them) on
  // every step. Safe for deep rings only: every rank has finished all steps but its last one or
  // two.
  const std::uint32_t target = depth >= 8 ? step - depth / 2 : needed;
  std::uint32_t lowest = m_step;
  for (int rank = 0; rank < m_size; ++rank) {
    if (rank == m_rank) continue;
    auto& word = m_done[static_cast<std::size_t>(rank)].value;
    std::uint32_t value = word.load(std::memory_order_acquire);
    if (!sequence_reached(value, needed) || (depth >= 8 && !sequence_reached(value, target))) {
      wait_for(word, target, rank,
               "collective (a rank still reading the buffer about to be reused)");
      value = word.load(std::memory_order_acquire);
    }
    if (!sequence_reached(value, lowest)) lowest = value;
  }
  m_all_done = lowest;
}

void coll_engine::finish_step(std::uint32_t step) {
  m_wait->publish_lazy(m_done[static_cast<std::size_t>(m_rank)].value, step);
}

void coll_engine::post_slot(std::uint32_t step, std::size_t bytes) {
  describe_slot(step, bytes);
  m_wait->publish_lazy(slot_sequence(m_rank, step, bytes), step);
  // Ask for ownership of the first line of the slot two steps on, so a later post does not stall
  // on it: the publish's fence waits until the payload's line is owned, and one step's lead is
  // shorter than the line transfer when a broadcast root runs ahead (measured at 2 ranks: lead 1,
  // 97 ns per 8-byte broadcast; lead 2 or 4, 35 ns; lead 8, 46 ns; lead 16, 74 ns).
  __builtin_prefetch(slot(m_rank, step + 2, bytes), 1, 3);
}

void coll_engine::store_slot(std::uint32_t step, std::size_t bytes) {
  // A release store, not publish(): its fence would wait until this rank owns the slot's line again
  // (a rank already polling it has taken a copy), and only then start reading the others' slots.
  // Without it the ownership request and those reads overlap. wake_slot does the fence later.
  describe_slot(step, bytes);
  slot_sequence(m_rank, step, bytes).store(step, std::memory_order_release);
  __builtin_prefetch(slot(m_rank, step + 2, bytes), 1, 3);  // as in post_slot
}

void coll_engine::wake_slot(std::uint32_t step, std::size_t bytes) {
  // The Dekker pair with a sleeper (see waiter::publish_lazy): the store above, the fence when the
  // wait mode sleeps early, then the sleeper count. A rank asleep on the slot meanwhile waited at
  // most for this rank's own waits, which need only slots posted before their owners wait.
  m_wait->wake_lazy(reinterpret_cast<const std::uint32_t*>(&slot_sequence(m_rank, step, bytes)));
}

void coll_engine::wait_slot(int rank, std::uint32_t step, std::size_t bytes, const char* what) {
  wait_for(slot_sequence(rank, step, bytes), step, rank, what);
  const auto* header = reinterpret_cast<const slot_header*>(slot(rank, step, bytes));
  check_call(rank, step, header->call_info, header->call_bytes);
}

void coll_engine::post_region(std::uint32_t step) {
  auto& line = m_posted[static_cast<std::size_t>(m_rank)];
  std::atomic_ref<std::uint32_t> first_step(posted_first_step(line));
  if (first_step.load(std::memory_order_relaxed) != m_call.first_step) {
    first_step.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    std::atomic_ref<std::uint32_t>(posted_info(line)).store(m_call.info, std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(posted_bytes(line))
        .store(m_call.bytes, std::memory_order_relaxed);
    first_step.store(m_call.first_step, std::memory_order_release);
  }
  // A release store, as the slots' posts (publish_lazy): the fence stalled the poster until it
  // owned the line again, before its next copy.
  m_wait->publish_lazy(line.value, step);
}

void coll_engine::wait_region(int rank, std::uint32_t step, const char* what) {
  auto& line = m_posted[static_cast<std::size_t>(rank)];
  wait_for(line.value, step, rank, what);
  // Compared only while the line still describes this call (its writer may have moved on).
  std::atomic_ref<std::uint32_t> first_step(posted_first_step(line));
  const std::uint32_t before = first_step.load(std::memory_order_acquire);
  if (before != m_call.first_step || before == 0) return;
  const std::uint32_t info =
      std::atomic_ref<std::uint32_t>(posted_info(line)).load(std::memory_order_relaxed);
  const std::uint64_t bytes =
      std::atomic_ref<std::uint64_t>(posted_bytes(line)).load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (first_step.load(std::memory_order_relaxed) != before) return;
  check_call(rank, step, info, bytes);
}

}  // namespace cachecomm::detail
