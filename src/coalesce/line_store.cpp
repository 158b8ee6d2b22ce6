#include "coalesce/line_store.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "cachecomm/error.hpp"

namespace cachecomm::detail {

namespace {
// A flush sends the whole store as one message per target; MPI counts are ints.
constexpr std::size_t max_cache_bytes = std::size_t{1} << 30;

void set_mask_bits(std::uint64_t* words, std::size_t first, std::size_t count) {
  while (count > 0) {
    const std::size_t word = first / 64;
    const std::size_t bit = first % 64;
    const std::size_t take = std::min<std::size_t>(count, 64 - bit);
    const std::uint64_t bits = take == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << take) - 1) << bit;
    words[word] |= bits;
    first += take;
    count -= take;
  }
}

bool mask_bit(const std::uint64_t* words, std::size_t index) { return (words[index / 64] >> (index % 64)) & 1U; }
}  // namespace

void validate_geometry(const cache_geometry& geometry) {
  if (geometry.line_bytes == 0 || !std::has_single_bit(geometry.line_bytes)) {
    throw invalid_argument("cachecomm::comm_cache: line size " + std::to_string(geometry.line_bytes) +
                           " is not a power of two");
  }
  if (geometry.sets == 0) throw invalid_argument("cachecomm::comm_cache: the cache needs at least one set (sets = 0)");
  if (geometry.ways == 0) throw invalid_argument("cachecomm::comm_cache: the cache needs at least one way (ways = 0)");
  const std::size_t lines = geometry.sets * geometry.ways;
  if (lines / geometry.ways != geometry.sets || lines > max_cache_bytes / geometry.line_bytes) {
    throw invalid_argument("cachecomm::comm_cache: sets x ways x line size exceeds 1 GiB (" +
                           std::to_string(geometry.sets) + " x " + std::to_string(geometry.ways) + " x " +
                           std::to_string(geometry.line_bytes) + ")");
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
  m_way_occupancy.assign(geometry.ways, 0);
  m_next_way.assign(geometry.sets, 0);
}

std::size_t line_store::set_of(std::uint64_t key) const {
  // Consecutive lines of one target fall into consecutive sets (a way then holds a contiguous
  // stretch that leaves as one run); other targets start elsewhere.
  const std::uint64_t target = key >> target_shift;
  const std::uint64_t line = key & ((std::uint64_t{1} << target_shift) - 1);
  return static_cast<std::size_t>((line + target * 0x9E3779B97F4A7C15ULL) % m_geometry.sets);
}

std::size_t line_store::choose_free_way(std::size_t set) {
  const std::size_t ways = m_geometry.ways;
  const std::size_t base = set * ways;
  const std::size_t start = m_geometry.placement == placement_policy::round_robin ? m_next_way[set] : 0;
  for (std::size_t step = 0; step < ways; ++step) {
    const std::size_t way = (start + step) % ways;
    if (m_keys[base + way] == empty_key) {
      m_next_way[set] = (way + 1) % ways;
      return way;
    }
  }
  return ways;
}

std::size_t line_store::fullest_way() const {
  return static_cast<std::size_t>(std::max_element(m_way_occupancy.begin(), m_way_occupancy.end()) -
                                  m_way_occupancy.begin());
}

void line_store::write(int target, std::uint64_t offset, const std::byte* data, std::size_t bytes) {
  const std::size_t line_bytes = m_geometry.line_bytes;
  ++m_statistics.writes;
  m_statistics.bytes_written += bytes;
  while (bytes > 0) {
    const std::uint64_t line = offset / line_bytes;
    const std::size_t first = offset % line_bytes;
    const std::size_t take = std::min(bytes, line_bytes - first);
    write_piece(target, line, first, data, take);
    offset += take;
    data += take;
    bytes -= take;
  }
}

void line_store::write_piece(int target, std::uint64_t line, std::size_t first, const std::byte* data,
                             std::size_t bytes) {
  const std::uint64_t key = (static_cast<std::uint64_t>(target) << target_shift) | line;
  const std::size_t set = set_of(key);
  const std::size_t base = set * m_geometry.ways;
  std::size_t slot = base + m_geometry.ways;
  for (std::size_t way = 0; way < m_geometry.ways; ++way) {
    if (m_keys[base + way] == key) {
      slot = base + way;
      break;
    }
  }
  if (slot < base + m_geometry.ways) {
    ++m_statistics.merges;
  } else {
    std::size_t way = choose_free_way(set);
    if (way == m_geometry.ways) {
      // Conflict miss: the fullest way leaves as one message per target, freeing a way in every set.
      ++m_statistics.conflict_misses;
      way = fullest_way();
      evict_way(way);
    }
    slot = base + way;
    m_keys[slot] = key;
    ++m_way_occupancy[way];
    ++m_statistics.line_inserts;
  }
  std::memcpy(m_data.data() + slot * m_geometry.line_bytes + first, data, bytes);
  set_mask_bits(m_masks.data() + slot * m_mask_words, first, bytes);
}

void line_store::evict_way(std::size_t way) {
  m_slot_scratch.clear();
  for (std::size_t set = 0; set < m_geometry.sets; ++set) {
    const std::size_t slot = set * m_geometry.ways + way;
    if (m_keys[slot] != empty_key) m_slot_scratch.push_back(slot);
  }
  std::sort(m_slot_scratch.begin(), m_slot_scratch.end(),
            [&](std::size_t a, std::size_t b) { return m_keys[a] < m_keys[b]; });
  send_slots(m_slot_scratch);
}

void line_store::flush_all() {
  m_slot_scratch.clear();
  for (std::size_t slot = 0; slot < m_keys.size(); ++slot) {
    if (m_keys[slot] != empty_key) m_slot_scratch.push_back(slot);
  }
  std::sort(m_slot_scratch.begin(), m_slot_scratch.end(),
            [&](std::size_t a, std::size_t b) { return m_keys[a] < m_keys[b]; });
  send_slots(m_slot_scratch);
}

void line_store::append_line_runs(std::size_t slot, std::uint64_t line_offset) {
  const std::size_t line_bytes = m_geometry.line_bytes;
  const std::uint64_t* mask = m_masks.data() + slot * m_mask_words;
  const std::byte* data = m_data.data() + slot * line_bytes;
  auto append = [&](std::size_t first, std::size_t length) {
    const std::uint64_t offset = line_offset + first;
    // Runs that touch extend each other: their bytes are already adjacent in the payload.
    if (!m_runs.empty() && m_runs.back().offset + m_runs.back().length == offset) {
      m_runs.back().length += length;
    } else {
      m_runs.push_back(line_run{offset, length});
    }
    m_payload.insert(m_payload.end(), data + first, data + first + length);
  };
  bool full = true;
  for (std::size_t word = 0; word < m_mask_words && full; ++word) {
    const std::size_t bits = std::min<std::size_t>(64, line_bytes - word * 64);
    const std::uint64_t all = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    full = mask[word] == all;
  }
  if (full) {
    append(0, line_bytes);
    return;
  }
  for (std::size_t index = 0; index < line_bytes;) {
    if (!mask_bit(mask, index)) {
      ++index;
      continue;
    }
    std::size_t end = index;
    while (end < line_bytes && mask_bit(mask, end)) ++end;
    append(index, end - index);
    index = end;
  }
}

void line_store::send_slots(std::vector<std::size_t>& slots) {
  const std::uint64_t line_mask = (std::uint64_t{1} << target_shift) - 1;
  std::size_t begin = 0;
  while (begin < slots.size()) {
    const std::uint64_t target = m_keys[slots[begin]] >> target_shift;
    m_runs.clear();
    m_payload.clear();
    std::size_t end = begin;
    for (; end < slots.size() && (m_keys[slots[end]] >> target_shift) == target; ++end) {
      append_line_runs(slots[end], (m_keys[slots[end]] & line_mask) * m_geometry.line_bytes);
    }
    m_sink_of_target[target]->send(static_cast<int>(target), m_runs, m_payload);
    record_message(m_payload.size());
    begin = end;
  }
  for (std::size_t slot : slots) {
    m_keys[slot] = empty_key;
    std::fill_n(m_masks.data() + slot * m_mask_words, m_mask_words, 0);
    --m_way_occupancy[slot % m_geometry.ways];
  }
}

void line_store::record_message(std::size_t payload_bytes) {
  ++m_statistics.messages;
  m_statistics.payload_bytes += payload_bytes;
  const std::size_t bucket = payload_bytes == 0 ? 0 : static_cast<std::size_t>(std::bit_width(payload_bytes) - 1);
  ++m_statistics.message_size_histogram[std::min(bucket, cache_statistics::histogram_buckets - 1)];
}

std::size_t line_store::cached_lines() const {
  return static_cast<std::size_t>(std::count_if(m_keys.begin(), m_keys.end(), [](std::uint64_t key) { return key != empty_key; }));
}

}  // namespace cachecomm::detail
