#include "coalesce/line_store.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

namespace {
// A flush sends the whole store as one message per target; MPI counts are ints.
constexpr std::size_t max_cache_bytes = std::size_t{1} << 30;

void set_mask_bits(std::uint64_t* words, std::size_t first, std::size_t count) {
  while (count > 0) {
    const std::size_t word = first / 64;
    const std::size_t bit = first % 64;
    const std::size_t take = std::min<std::size_t>(count, 64 - bit);
    const std::uint64_t bits =
        take == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << take) - 1) << bit;
    words[word] |= bits;
    first += take;
    count -= take;
  }
}

bool mask_bit(const std::uint64_t* words, std::size_t index) {
  return (words[index / 64] >> (index % 64)) & 1U;
}
}  // namespace

void validate_geometry(const cache_geometry& geometry) {
  if (geometry.line_bytes == 0 || !std::has_single_bit(geometry.line_bytes)) {
    throw invalid_argument("cachecomm::comm_cache: line size " +
                           std::to_string(geometry.line_bytes) + " is not a power of two");
  }
  if (geometry.sets == 0)
    throw invalid_argument("cachecomm::comm_cache: the cache needs at least one set (sets = 0)");
  if (geometry.ways == 0)
    throw invalid_argument("cachecomm::comm_cache: the cache needs at least one way (ways = 0)");
  if (geometry.ways > 64) {
    throw invalid_argument("cachecomm::comm_cache: at most 64 ways (asked for " +
                           std::to_string(geometry.ways) + "); use more sets for a larger cache");
  }
  const std::size_t lines = geometry.sets * geometry.ways;
  if (lines / geometry.ways != geometry.sets || lines > max_cache_bytes / geometry.line_bytes) {
    throw invalid_argument("cachecomm::comm_cache: sets x ways x line size exceeds 1 GiB (" +
                           std::to_string(geometry.sets) + " x " + std::to_string(geometry.ways) +
                           " x " + std::to_string(geometry.line_bytes) + ")");
  }
}

line_store::line_store(const cache_geometry& geometry, std::vector<line_sink*> sink_of_target,
                       cache_statistics& statistics)
    : m_geometry(geometry),
      m_mask_words((geometry.line_bytes + 63) / 64),
      m_sink_of_target(std::move(sink_of_target)),
      m_statistics(statistics) {
  validate_geometry(geometry);
  const std::size_t slots = geometry.sets * geometry.ways;
  m_keys.assign(slots, empty_key);
  m_masks.assign(slots * m_mask_words, 0);
  m_data.resize(slots * geometry.line_bytes);
  m_way_sets.resize(geometry.ways);
  m_next_way.assign(geometry.sets, 0);
  const std::uint64_t all_ways =
      geometry.ways == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << geometry.ways) - 1;
  m_free_ways.assign(geometry.sets, all_ways);
  m_target_counts.assign(m_sink_of_target.size() + 1, 0);
  if (std::has_single_bit(geometry.sets)) m_set_mask = geometry.sets - 1;
  m_line_shift = static_cast<unsigned>(std::countr_zero(geometry.line_bytes));
  if (std::has_single_bit(geometry.ways)) {
    m_way_mask = geometry.ways - 1;
    m_way_shift = static_cast<unsigned>(std::countr_zero(geometry.ways));
  }
}

std::size_t line_store::set_of(std::uint64_t key) const {
  // Consecutive lines of one target fall into consecutive sets (a way then holds a contiguous
  // stretch that leaves as one run); other targets start elsewhere.
  const std::uint64_t target = key >> target_shift;
  const std::uint64_t line = key & ((std::uint64_t{1} << target_shift) - 1);
  const std::uint64_t spread = line + target * 0x9E3779B97F4A7C15ULL;
  return static_cast<std::size_t>(
      m_set_mask != 0 || m_geometry.sets == 1 ? spread & m_set_mask : spread % m_geometry.sets);
}

std::size_t line_store::choose_free_way(std::size_t set) const {
  const std::uint64_t free_ways = m_free_ways[set];
  if (free_ways == 0) return m_geometry.ways;
  if (m_geometry.placement == placement_policy::round_robin) {
    // The nearest free way at or after the set's position, wrapping around.
    const std::uint64_t at_or_after = free_ways & (~std::uint64_t{0} << m_next_way[set]);
    if (at_or_after != 0) return static_cast<std::size_t>(std::countr_zero(at_or_after));
  }
  return static_cast<std::size_t>(std::countr_zero(free_ways));
}

std::size_t line_store::way_of_slot(std::size_t slot) const {
  return m_way_mask != 0 || m_geometry.ways == 1 ? slot & m_way_mask : slot % m_geometry.ways;
}

std::size_t line_store::fullest_way() const {
  std::size_t fullest = 0;
  for (std::size_t way = 1; way < m_way_sets.size(); ++way) {
    if (m_way_sets[way].size() > m_way_sets[fullest].size()) fullest = way;
  }
  return fullest;
}

void line_store::write(int target, std::uint64_t offset, const std::byte* data, std::size_t bytes) {
  const std::size_t line_bytes = m_geometry.line_bytes;
  ++m_statistics.writes;
  m_statistics.bytes_written += bytes;
  while (bytes > 0) {
    // Shifts, not divisions: a 64-bit divide costs as much as the rest of a cached write.
    const std::uint64_t line = offset >> m_line_shift;
    const std::size_t first = offset & (line_bytes - 1);
    const std::size_t take = std::min(bytes, line_bytes - first);
    write_piece(target, line, first, data, take);
    offset += take;
    data += take;
    bytes -= take;
  }
}

void line_store::write_piece(int target, std::uint64_t line, std::size_t first,
                             const std::byte* data, std::size_t bytes) {
  const std::uint64_t key = (static_cast<std::uint64_t>(target) << target_shift) | line;
  const std::size_t set = set_of(key);
  const std::size_t ways = m_geometry.ways;
  const std::size_t base = set * ways;
  std::size_t hit = ways;
  for (std::size_t way = 0; way < ways; ++way) {
    if (m_keys[base + way] == key) {
      hit = way;
      break;
    }
  }
  std::size_t slot = base + hit;
  if (hit < ways) {
    ++m_statistics.merges;
  } else {
    std::size_t way = choose_free_way(set);
    if (way == ways) {
      // Conflict miss: the fullest way leaves as one message per target, freeing a way in every
      // set.
      ++m_statistics.conflict_misses;
      way = fullest_way();
      evict_way(way);
    }
    m_next_way[set] = way + 1 == ways ? 0 : way + 1;
    m_free_ways[set] &= ~(std::uint64_t{1} << way);
    slot = base + way;
    m_keys[slot] = key;
    m_way_sets[way].push_back(static_cast<std::uint32_t>(set));
    ++m_statistics.line_inserts;
  }
  std::byte* line_data = m_data.data() + slot * m_geometry.line_bytes;
  std::uint64_t* mask = m_masks.data() + slot * m_mask_words;
  if (bytes == 64 && first == 0 && m_geometry.line_bytes == 64) {
    // The common case (a whole 64-byte line): fixed-size copy, one mask word.
    copy_memory(line_data, data, 64);
    mask[0] = ~std::uint64_t{0};
    return;
  }
  copy_memory(line_data + first, data, bytes);
  set_mask_bits(mask, first, bytes);
}

void line_store::evict_way(std::size_t way) {
  // The way's list holds its sets in insertion order: no scan over empty sets, and a stream
  // leaves in address order (adjacent lines become one run).
  m_slot_scratch.clear();
  for (std::uint32_t set : m_way_sets[way]) m_slot_scratch.push_back(set * m_geometry.ways + way);
  send_slots(m_slot_scratch);
  m_way_sets[way].clear();
}

void line_store::flush_all() {
  m_slot_scratch.clear();
  for (std::size_t slot = 0; slot < m_keys.size(); ++slot) {
    if (m_keys[slot] != empty_key) m_slot_scratch.push_back(slot);
  }
  send_slots(m_slot_scratch);
  for (auto& sets : m_way_sets) sets.clear();
}

void line_store::append_line_runs(std::size_t slot, std::uint64_t line_offset) {
  const std::size_t line_bytes = m_geometry.line_bytes;
  const std::uint64_t* mask = m_masks.data() + slot * m_mask_words;
  const std::byte* data = m_data.data() + slot * line_bytes;
  bool full = true;
  for (std::size_t word = 0; word < m_mask_words && full; ++word) {
    const std::size_t bits = std::min<std::size_t>(64, line_bytes - word * 64);
    const std::uint64_t all = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    full = mask[word] == all;
  }
  if (full) {
    m_message.append(line_offset, data, line_bytes);
    return;
  }
  // Only the bytes the program wrote travel: a partial line must not overwrite the target's others.
  for (std::size_t index = 0; index < line_bytes;) {
    if (!mask_bit(mask, index)) {
      ++index;
      continue;
    }
    std::size_t end = index;
    while (end < line_bytes && mask_bit(mask, end)) ++end;
    m_message.append(line_offset + index, data + index, end - index);
    index = end;
  }
}

void line_store::group_by_target(std::vector<std::size_t>& slots) {
  // Counting sort by target, keeping set order within a target (a comparison sort of a 1024-line
  // way costs more than the writes that filled it). One line address is cached at most once, so
  // the order of lines inside a message does not matter for correctness.
  const std::uint64_t first_target = m_keys[slots.front()] >> target_shift;
  const bool one_target = std::all_of(slots.begin(), slots.end(), [&](std::size_t slot) {
    return (m_keys[slot] >> target_shift) == first_target;
  });
  if (one_target) return;
  std::fill(m_target_counts.begin(), m_target_counts.end(), 0);
  for (std::size_t slot : slots) ++m_target_counts[(m_keys[slot] >> target_shift) + 1];
  for (std::size_t target = 1; target < m_target_counts.size(); ++target)
    m_target_counts[target] += m_target_counts[target - 1];
  m_grouped.resize(slots.size());
  for (std::size_t slot : slots) m_grouped[m_target_counts[m_keys[slot] >> target_shift]++] = slot;
  slots.swap(m_grouped);
}

void line_store::send_slots(std::vector<std::size_t>& slots) {
  if (slots.empty()) return;
  group_by_target(slots);
  const std::uint64_t line_mask = (std::uint64_t{1} << target_shift) - 1;
  std::size_t begin = 0;
  while (begin < slots.size()) {
    const std::uint64_t target = m_keys[slots[begin]] >> target_shift;
    m_message.clear();
    std::size_t end = begin;
    for (; end < slots.size() && (m_keys[slots[end]] >> target_shift) == target; ++end) {
      append_line_runs(slots[end], (m_keys[slots[end]] & line_mask) * m_geometry.line_bytes);
    }
    const std::size_t payload_bytes = m_message.payload_bytes();
    m_sink_of_target[target]->send(static_cast<int>(target), m_message);
    record_message(payload_bytes);
    begin = end;
  }
  for (std::size_t slot : slots) {
    m_keys[slot] = empty_key;
    std::uint64_t* mask = m_masks.data() + slot * m_mask_words;
    for (std::size_t word = 0; word < m_mask_words; ++word) mask[word] = 0;
    const std::size_t way = way_of_slot(slot);
    const std::size_t set =
        m_way_mask != 0 || m_geometry.ways == 1 ? slot >> m_way_shift : slot / m_geometry.ways;
    m_free_ways[set] |= std::uint64_t{1} << way;
  }
}

void line_store::record_message(std::size_t payload_bytes) {
  ++m_statistics.messages;
  m_statistics.payload_bytes += payload_bytes;
  const std::size_t bucket =
      payload_bytes == 0 ? 0 : static_cast<std::size_t>(std::bit_width(payload_bytes) - 1);
  ++m_statistics.message_size_histogram[std::min(bucket, cache_statistics::histogram_buckets - 1)];
}

std::size_t line_store::cached_lines() const {
  return static_cast<std::size_t>(std::count_if(
      m_keys.begin(), m_keys.end(), [](std::uint64_t key) { return key != empty_key; }));
}

}  // namespace cachecomm::detail
