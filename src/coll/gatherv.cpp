// Gatherv on one node. Only the root knows the counts. Every rank posts in its 4 KiB slot its own
// count, the address of its block and, up to 4064 bytes, the block itself; the root reads them all
// and compares each count with its own count for that rank.
//
// central: the root also posts the largest count and every count in its slot, and every other rank
// reads it and checks its own count, so both sides of a disagreement know it and report it after
// the same steps (the communicator stays usable). Blocks larger than the slot follow through the
// data region, one chunk per rank and step, as many steps as the largest block needs (every rank
// knows that number from the root's slot).
//
// single copy: no counts from the root: a rank whose block fits in its slot posts it and leaves at
// once (as in gather), and so does a block up to staged_max_bytes, which its owner copies into its
// part of the data region in the same step; a larger block is pulled by the root from its owner's
// buffer in the same step (its owner waits for that). A disagreement is reported by the root alone
// (as MPI reports a truncation at the receiver).
//
// The automatic choice of a pair (gatherv_pair): a non-root whose block has
// thresholds::pair_gatherv_planned_min_bytes or more reads the root's count for it, which the root
// posts in its small slot once it has seen that size in the non-root's slot, so where the two
// counts agree both know the block's size and choose its path inside the call (the tuning file,
// online selection with the system MPI among the candidates, or the rules): pulled by the root
// (single copy), or through the data region in chunks of half the region, which the root copies out
// while the non-root copies in the next (central). A smaller block, or counts that disagree, take
// single copy's path, decided by the non-root's count on both sides.
#include <algorithm>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "coll/coll_engine.hpp"
#include "coll/mismatch_error.hpp"
#include "coll/selection.hpp"
#include "coll/shared_copy.hpp"
#include "coll/tuning_table.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

namespace {

/// A non-root's first slot: its count, its block's address, then the block if it fits.
constexpr std::size_t header_words = 2;
constexpr std::size_t inline_bytes = coll_engine::slot_payload - header_words * 8;

std::uint64_t word(const std::byte* slot, std::size_t index) {
  std::uint64_t value = 0;
  copy_memory(&value, slot + index * 8, 8);
  return value;
}
void put_word(std::byte* slot, std::size_t index, std::uint64_t value) {
  copy_memory(slot + index * 8, &value, 8);
}

/// Single copy: a block above a slot and up to this size goes through the data region, so that its
/// owner leaves at once, as with a block in its slot (a pull makes the owner wait for the root):
/// under Intel MPI, whose non-root leaves once its block is in shared memory, osu_gatherv at 4-8
/// KiB took 2.9-3.4 us preloaded against 1.5-2.2 plain. Two copies of 32 KiB still cost about what
/// one pull costs (a system call and the pinning of 8 pages).
constexpr std::size_t staged_max_bytes = 32U << 10;

/// A rank's block and the root's count for it disagree. `rank` and `me` are node ranks.
mismatch_error count_mismatch(std::size_t rank, std::size_t me, std::size_t root, std::size_t sent,
                              std::size_t expected) {
  const std::string who = rank == me ? "this rank (node rank " + std::to_string(me) + ")"
                                     : "node rank " + std::to_string(rank);
  return mismatch_error("cachecomm: gatherv: " + who + " sends " + std::to_string(sent) +
                            " bytes, but the root's count for it (node rank " +
                            std::to_string(root) + "'s counts) is " + std::to_string(expected) +
                            " bytes",
                        mismatch_error::field::size);
}

/// A pair's root answers a planned block's owner with its count for it, whether it can hand the
/// call to the system MPI, and where the block goes in its buffer (gatherv_pair).
constexpr std::size_t root_answer_bytes = std::size_t{3} * 8;

/// A pair's non-root sets this bit of its count word when it cannot hand the call to the system MPI
/// (gatherv_pair).
constexpr std::uint64_t cannot_pass_bit = std::uint64_t{1} << 63;

/// The bytes a rank's block moves outside the first slot (0: it went in the slot, or the two sides
/// disagree about whether it does).
std::size_t large_part(std::size_t sent, std::size_t expected) {
  return sent > inline_bytes && expected > inline_bytes ? std::min(sent, expected) : 0;
}

}  // namespace

void coll_engine::gatherv(const vector_call& call, gatherv_algorithm algorithm) {
  const gatherv_entry& entry = entry_of(algorithm);  // refuses `automatic` first
  if (m_size == 1) {
    const std::size_t n = std::min(call.own_bytes, call.bytes[0]);
    auto* own = static_cast<std::byte*>(call.output) + call.offsets[0];
    if (n != 0 && call.input != own) copy_memory(own, call.input, n);
    if (call.own_bytes != call.bytes[0]) {
      throw mismatch_error("cachecomm: gatherv: the root sends " + std::to_string(call.own_bytes) +
                               " bytes but its counts give it " + std::to_string(call.bytes[0]),
                           mismatch_error::field::size);
    }
    return;
  }
  // The root's first slot holds the largest count and every count.
  if ((static_cast<std::size_t>(m_size) + 1) * 8 > slot_payload) {
    throw unsupported_error("cachecomm: gatherv: more than " +
                            std::to_string(slot_payload / 8 - 1) +
                            " ranks on one node (the root's counts must fit in one slot)");
  }
  begin_call(call_kind::gatherv, 0, datatype::byte, 0xffU);
  entry.run(*this, call);
}

void coll_engine::gatherv(const vector_call& call, bool single_copy) {
  const auto me = static_cast<std::size_t>(m_rank);
  const auto size = static_cast<std::size_t>(m_size);
  const auto root = static_cast<std::size_t>(call.root);
  const bool is_root = me == root;
  const auto* in = static_cast<const std::byte*>(call.input);
  auto* out = static_cast<std::byte*>(call.output);
  // The first disagreement this rank saw: the rank, what it sends, what the root expects.
  int disagreeing = -1;
  std::size_t disagreeing_sent = 0;
  std::size_t disagreeing_expected = 0;
  auto disagree = [&](std::size_t rank, std::size_t sent, std::size_t expected) {
    if (disagreeing < 0) {
      disagreeing = static_cast<int>(rank);
      disagreeing_sent = sent;
      disagreeing_expected = expected;
    }
  };

  // Single copy: each rank's part of the data region, and whether a block of `sent` bytes goes
  // there (both sides decide from the sender's count).
  const std::size_t region_part = m_tuning.region_bytes / size / cache_line_size * cache_line_size;
  auto staged = [&](std::size_t sent) {
    return single_copy && sent > inline_bytes && sent <= std::min(staged_max_bytes, region_part);
  };
  const bool staging = !is_root && staged(call.own_bytes);
  const std::uint32_t step = begin_step();
  std::size_t largest = 0;   // central: the largest block that goes through the region
  std::size_t expected = 0;  // central, non-root: the root's count for this rank
  int error_number = 0;
  int failed_rank = -1;
  if (is_root) {
    if (!single_copy) {
      // The counts, for the others to check theirs and to know the data steps.
      ensure_free(step, slot_depth(slot_payload));
      std::byte* own_slot = slot_data(m_rank, step, slot_payload);
      for (std::size_t r = 0; r < size; ++r) {
        if (r != me) largest = std::max(largest, call.bytes[r]);
      }
      put_word(own_slot, 0, largest);
      copy_memory(own_slot + 8, call.bytes, size * 8);
      post_slot(step, slot_payload);
    }
    const std::size_t own = std::min(call.own_bytes, call.bytes[me]);
    if (own != 0 && in != out + call.offsets[me]) copy_memory(out + call.offsets[me], in, own);
    if (call.own_bytes != call.bytes[me]) disagree(me, call.own_bytes, call.bytes[me]);
    for (std::size_t distance = 1; distance < size; ++distance) {
      const std::size_t rank = (me + distance) % size;
      wait_slot(static_cast<int>(rank), step, slot_payload, "gatherv (a rank's slot)");
      const std::byte* slot = slot_data(static_cast<int>(rank), step, slot_payload);
      const std::size_t sent = word(slot, 0);
      const std::size_t wanted = call.bytes[rank];
      m_addresses[rank] = sent;  // what the data steps below move from this rank
      std::byte* into = out + call.offsets[rank];
      if (sent != wanted) disagree(rank, sent, wanted);
      if (wanted <= inline_bytes) {
        const std::size_t n = sent <= inline_bytes ? std::min(sent, wanted) : 0;
        if (n != 0) copy_memory(into, slot + header_words * 8, n);
      } else if (staged(sent)) {
        wait_region(static_cast<int>(rank), step, "gatherv (a rank's block)");
        copy_memory(into, region(step) + rank * region_part, std::min(sent, wanted));
      } else if (single_copy && error_number == 0 && large_part(sent, wanted) != 0) {
        error_number = m_cross->copy_from(static_cast<int>(rank), into, word(slot, 1),
                                          large_part(sent, wanted));
        if (error_number != 0) failed_rank = static_cast<int>(rank);
      }
    }
  } else {
    // The region's half of this step was last used two steps ago.
    ensure_free(step, staging ? 2U : slot_depth(slot_payload));
    if (staging) {
      copy_to_shared(region(step) + me * region_part, in, call.own_bytes,
                     m_tuning.streaming_stores);
      post_region(step);
    }
    std::byte* own_slot = slot_data(m_rank, step, slot_payload);
    put_word(own_slot, 0, call.own_bytes);
    put_word(own_slot, 1, reinterpret_cast<std::uintptr_t>(call.input));
    if (call.own_bytes <= inline_bytes && call.own_bytes != 0)
      copy_memory(own_slot + header_words * 8, in, call.own_bytes);
    post_slot(step, slot_payload);
    if (!single_copy) {
      wait_slot(call.root, step, slot_payload, "gatherv (the root's counts)");
      const std::byte* counts = slot_data(call.root, step, slot_payload);
      largest = word(counts, 0);
      expected = word(counts, 1 + me);
      if (call.own_bytes != expected) disagree(me, call.own_bytes, expected);
    }
  }
  finish_step(step);

  if (single_copy && !is_root && call.own_bytes > inline_bytes && !staging) {
    // The root reads this rank's buffer in this step (unless its count for it fits in a slot):
    // the caller may reuse the buffer only after.
    m_wait->wait_reach(m_done[root].value, step, call.root,
                       "gatherv (the root reading this rank's block)");
  }
  if (!single_copy && largest > inline_bytes) {
    // Every rank takes these steps; only the ranks with a block larger than a slot post in them.
    const std::size_t chunk = m_tuning.region_bytes / size / cache_line_size * cache_line_size;
    const std::size_t sending = is_root ? 0 : large_part(call.own_bytes, expected);
    for (std::size_t offset = 0; offset < largest; offset += chunk) {
      const std::uint32_t data_step = begin_step();
      if (sending > offset) {
        ensure_free(data_step, 2);
        copy_to_shared(region(data_step) + me * chunk, in + offset,
                       std::min(chunk, sending - offset), m_tuning.streaming_stores);
        post_region(data_step);
      }
      if (is_root) {
        for (std::size_t distance = 1; distance < size; ++distance) {
          const std::size_t rank = (me + distance) % size;
          const std::size_t moved = large_part(m_addresses[rank], call.bytes[rank]);
          if (moved <= offset) continue;
          wait_region(static_cast<int>(rank), data_step, "gatherv (a rank's block)");
          copy_memory(out + call.offsets[rank] + offset, region(data_step) + rank * chunk,
                      std::min(chunk, moved - offset));
        }
      }
      finish_step(data_step);
    }
  }
  if (error_number != 0) {
    throw cross_memory_failure("single-copy gatherv", false, failed_rank, error_number);
  }
  if (disagreeing >= 0) {
    throw count_mismatch(static_cast<std::size_t>(disagreeing), me, root, disagreeing_sent,
                         disagreeing_expected);
  }
}

void coll_engine::gatherv_pair(const vector_call& call, in_call_planner& planner) {
  const auto me = static_cast<std::size_t>(m_rank);
  const auto root = static_cast<std::size_t>(call.root);
  const bool is_root = me == root;
  const std::size_t other = 1 - me;
  const auto* in = static_cast<const std::byte*>(call.input);
  auto* out = static_cast<std::byte*>(call.output);
  const std::size_t region_part = m_tuning.region_bytes / 2 / cache_line_size * cache_line_size;
  // A block above a slot and below the planned sizes is staged in the region (posted and left);
  // both sides decide it from the non-root's count.
  auto staged = [&](std::size_t n) {
    return n > inline_bytes && n < thresholds::pair_gatherv_planned_min_bytes &&
           n <= std::min(staged_max_bytes, region_part);
  };
  begin_call(call_kind::gatherv, 0, datatype::byte, 0xffU);
  const std::uint32_t step = begin_step();
  std::size_t sent = 0;       // the non-root's count
  std::size_t expected = 0;   // the root's count for the non-root
  std::uint64_t address = 0;  // root: the non-root's block; non-root: where it goes at the root
  // Both ranks can hand the call to the system MPI (each posts its own answer beside its count).
  bool system_possible = planner.system_possible();
  auto copy_own_block = [&] {
    const std::size_t own = std::min(call.own_bytes, call.bytes[me]);
    if (own != 0 && in != out + call.offsets[me]) copy_memory(out + call.offsets[me], in, own);
  };
  // Where the root expects a planned block, it answers the non-root before copying its own, so
  // that a pushed block moves while it copies (push, below).
  const bool answer_first =
      is_root && call.bytes[other] >= thresholds::pair_gatherv_planned_min_bytes;
  if (is_root) {
    expected = call.bytes[other];
    if (!answer_first) copy_own_block();
    wait_slot(static_cast<int>(other), step, slot_payload, "gatherv (the non-root's slot)");
    const std::byte* slot = slot_data(static_cast<int>(other), step, slot_payload);
    sent = word(slot, 0) & ~cannot_pass_bit;
    address = word(slot, 1);
    if (sent >= thresholds::pair_gatherv_planned_min_bytes) {
      // Only such a non-root reads the root's count: a small call posts nothing from the root.
      ensure_free(step, slot_depth(root_answer_bytes));
      std::byte* own_slot = slot_data(m_rank, step, root_answer_bytes);
      put_word(own_slot, 0, expected);
      put_word(own_slot, 1, system_possible ? 1 : 0);
      put_word(own_slot, 2, reinterpret_cast<std::uintptr_t>(out + call.offsets[other]));
      post_slot(step, root_answer_bytes);
    }
    system_possible = system_possible && (word(slot, 0) & cannot_pass_bit) == 0;
    if (answer_first) copy_own_block();
  } else {
    sent = call.own_bytes;
    const bool staging = staged(sent);
    ensure_free(step, staging ? 2U : slot_depth(slot_payload));
    if (staging) {
      copy_to_shared(region(step) + me * region_part, in, sent, m_tuning.streaming_stores);
      post_region(step);
    }
    std::byte* own_slot = slot_data(m_rank, step, slot_payload);
    put_word(own_slot, 0, sent | (system_possible ? 0 : cannot_pass_bit));
    put_word(own_slot, 1, reinterpret_cast<std::uintptr_t>(call.input));
    if (sent <= inline_bytes && sent != 0) copy_memory(own_slot + header_words * 8, in, sent);
    post_slot(step, slot_payload);
    if (sent >= thresholds::pair_gatherv_planned_min_bytes) {
      wait_slot(call.root, step, root_answer_bytes, "gatherv (the root's count)");
      const std::byte* root_slot = slot_data(call.root, step, root_answer_bytes);
      expected = word(root_slot, 0);
      system_possible = system_possible && word(root_slot, 1) != 0;
      address = word(root_slot, 2);
    } else {
      expected = sent;  // not read: the path below depends on the non-root's count alone
    }
  }
  // Both sides know both counts wherever a plan is possible (below the planned sizes the non-root
  // does not read the root's, and neither side plans).
  const bool planned = sent >= thresholds::pair_gatherv_planned_min_bytes && sent == expected;
  const std::int8_t choice = planned ? planner.choose(sent, system_possible)
                                     : static_cast<std::int8_t>(gatherv_algorithm::single_copy);
  if (choice == tuning_choices::system_mpi) {
    finish_step(step);
    planner.system_call(nullptr);
    return;
  }
  const bool through_region =
      choice == static_cast<std::int8_t>(gatherv_algorithm::central) || !single_copy_available();
  // Single copy of a planned block: its owner writes it into the root's buffer while the root
  // copies its own block, rather than the root doing both one after the other (Intel MPI's
  // gatherv of 4 MiB: 200-350 us; the root pulling after its own copy: 320-480). Its word 2 says
  // whether the write failed (the root then pulls the block itself).
  const bool push = planned && !through_region && m_cma_push;
  const std::size_t taken = std::min(sent, expected);
  int error_number = 0;
  bool pushed = false;
  if (push && !is_root) {
    const int write_error = m_cross->copy_to(call.root, in, address, sent);
    put_word(slot_data(m_rank, step, slot_payload), 2, static_cast<std::uint64_t>(write_error));
    pushed = write_error == 0;  // otherwise the root pulls the block and reports its own failure
  }
  if (push && is_root) {
    m_wait->wait_reach(m_done[other].value, step, static_cast<int>(other),
                       "gatherv (the non-root writing its block)");
    pushed = word(slot_data(static_cast<int>(other), step, slot_payload), 2) == 0;
  }
  if (is_root && !(planned && through_region) && !pushed) {
    std::byte* into = out + call.offsets[other];
    const std::byte* slot = slot_data(static_cast<int>(other), step, slot_payload);
    if (expected <= inline_bytes || sent <= inline_bytes) {
      if (sent <= inline_bytes && taken != 0) copy_memory(into, slot + header_words * 8, taken);
    } else if (staged(sent)) {
      wait_region(static_cast<int>(other), step, "gatherv (the non-root's block)");
      copy_memory(into, region(step) + other * region_part, taken);
    } else {
      error_number = m_cross->copy_from(static_cast<int>(other), into, address, taken);
    }
  }
  finish_step(step);
  if (!is_root && !(planned && through_region) && !pushed &&
      sent >= thresholds::pair_gatherv_planned_min_bytes && expected > inline_bytes) {
    // The root reads this rank's buffer in this step: the caller may reuse it only after.
    m_wait->wait_reach(m_done[root].value, step, call.root,
                       "gatherv (the root reading this rank's block)");
  }
  if (planned && through_region) {
    // Half the region per step: the root copies a chunk out while the non-root copies the next in.
    for (std::size_t offset = 0; offset < sent; offset += region_part) {
      const std::uint32_t data_step = begin_step();
      const std::size_t n = std::min(region_part, sent - offset);
      if (is_root) {
        wait_region(static_cast<int>(other), data_step, "gatherv (the non-root's block)");
        copy_memory(out + call.offsets[other] + offset, region(data_step) + other * region_part, n);
      } else {
        ensure_free(data_step, 2);
        copy_to_shared(region(data_step) + me * region_part, in + offset, n,
                       m_tuning.streaming_stores);
        post_region(data_step);
      }
      finish_step(data_step);
    }
  }
  if (error_number != 0) {
    throw cross_memory_failure("single-copy gatherv", false, static_cast<int>(other), error_number);
  }
  if (sent != expected) throw count_mismatch(is_root ? other : me, me, root, sent, expected);
  if (is_root && call.own_bytes != call.bytes[me])
    throw count_mismatch(me, me, root, call.own_bytes, call.bytes[me]);
}

}  // namespace cachecomm::detail
