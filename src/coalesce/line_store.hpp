// The set-associative store behind comm_cache: lines keyed by (target, line index), per-byte valid
// masks, way occupancy. Knows nothing about transports: evicted lines go to a line_sink.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cachecomm/comm_cache.hpp"
#include "coalesce/line_sink.hpp"

namespace cachecomm::detail {

/// Throws invalid_argument naming the problem when `geometry` cannot describe a cache.
void validate_geometry(const cache_geometry& geometry);

class line_store {
 public:
  /// `sink_of_target[r]` carries the lines written for rank r. Statistics go to `statistics`.
  line_store(const cache_geometry& geometry, std::vector<line_sink*> sink_of_target,
             cache_statistics& statistics);

  /// Caches `bytes` at `offset` of `target`'s window (the caller has checked the range).
  void write(int target, std::uint64_t offset, const std::byte* data, std::size_t bytes);
  /// Sends every cached line, one message per target, and empties the store.
  void flush_all();

  [[nodiscard]] std::size_t cached_lines() const;

 private:
  static constexpr std::uint64_t empty_key = ~std::uint64_t{0};
  static constexpr unsigned target_shift = 44;  // key = target << 44 | line index

  [[nodiscard]] std::size_t set_of(std::uint64_t key) const;
  [[nodiscard]] std::size_t choose_free_way(std::size_t set) const;
  [[nodiscard]] std::size_t fullest_way() const;
  [[nodiscard]] std::size_t way_of_slot(std::size_t slot) const;
  void write_piece(int target, std::uint64_t line, std::size_t first, const std::byte* data,
                   std::size_t bytes);
  void evict_way(std::size_t way);
  /// Sends the lines in `slots` (valid, sorted by key) as one message per target, then frees them.
  void send_slots(std::vector<std::size_t>& slots);
  void group_by_target(std::vector<std::size_t>& slots);
  void append_line_runs(std::size_t slot, std::uint64_t line_offset);
  void record_message(std::size_t payload_bytes);

  cache_geometry m_geometry;
  std::size_t m_mask_words;
  std::vector<line_sink*> m_sink_of_target;
  cache_statistics& m_statistics;

  std::vector<std::uint64_t> m_keys;   ///< slot = set * ways + way
  std::vector<std::uint64_t> m_masks;  ///< m_mask_words per slot, bit i = byte i is valid
  std::vector<std::byte> m_data;       ///< line_bytes per slot
  std::vector<std::vector<std::uint32_t>>
      m_way_sets;                          ///< occupied sets of each way (its occupancy)
  std::vector<std::size_t> m_next_way;     ///< round-robin position per set
  std::vector<std::uint64_t> m_free_ways;  ///< bit w set: way w of the set is free
  std::size_t m_set_mask = 0;
  std::size_t m_way_mask = 0;  ///< ways - 1 when ways is a power of two
  unsigned m_line_shift = 0;   ///< log2(line size)
  unsigned m_way_shift = 0;  ///< log2(ways) when ways is a power of two              ///< sets - 1
                             ///< when sets is a power of two (no division)

  // Scratch for building messages (kept to avoid allocating per eviction).
  std::vector<std::size_t> m_slot_scratch;
  std::vector<std::size_t> m_grouped;
  std::vector<std::size_t> m_target_counts;
  line_message m_message;
};

}  // namespace cachecomm::detail
