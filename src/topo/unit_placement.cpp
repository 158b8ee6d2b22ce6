#include "topo/unit_placement.hpp"

#include <sched.h>

#include <algorithm>
#include <bit>
#include <vector>

namespace cachecomm::detail {

bool unit_mask::known() const {
  return std::any_of(bits.begin(), bits.end(), [](std::uint64_t word) { return word != 0; });
}

unit_mask allowed_units() {
  unit_mask mask;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return mask;
  constexpr std::size_t units = unit_mask::words * 64;
  static_assert(units <= CPU_SETSIZE);
  for (std::size_t unit = 0; unit < units; ++unit) {
    if (CPU_ISSET(unit, &set)) mask.add(unit);
  }
  return mask;
}

namespace {

constexpr std::size_t no_rank = ~std::size_t{0};

// Kuhn's augmenting paths: gives `rank` a unit of its mask, moving ranks already placed to
// other units of theirs where needed. `visited` marks the units this search has tried.
bool place(std::size_t rank, std::span<const unit_mask> masks, std::vector<std::size_t>& owner,
           std::vector<bool>& visited) {
  const unit_mask& mask = masks[rank];
  // A free unit first: with masks wider than one unit (the common case) every rank finds one
  // at once and no path is searched.
  for (std::size_t word = 0; word < unit_mask::words; ++word) {
    for (std::uint64_t bits = mask.bits[word]; bits != 0; bits &= bits - 1) {
      const std::size_t unit = word * 64 + static_cast<std::size_t>(std::countr_zero(bits));
      if (owner[unit] == no_rank) {
        owner[unit] = rank;
        return true;
      }
    }
  }
  for (std::size_t word = 0; word < unit_mask::words; ++word) {
    for (std::uint64_t bits = mask.bits[word]; bits != 0; bits &= bits - 1) {
      const std::size_t unit = word * 64 + static_cast<std::size_t>(std::countr_zero(bits));
      if (visited[unit]) continue;
      visited[unit] = true;
      if (place(owner[unit], masks, owner, visited)) {
        owner[unit] = rank;
        return true;
      }
    }
  }
  return false;
}

}  // namespace

unit_placement place_ranks(std::span<const unit_mask> masks) {
  unit_placement placement;
  if (masks.empty() ||
      std::any_of(masks.begin(), masks.end(), [](const unit_mask& m) { return !m.known(); })) {
    return placement;
  }
  unit_mask all;
  for (const unit_mask& mask : masks) {
    for (std::size_t word = 0; word < unit_mask::words; ++word) all.bits[word] |= mask.bits[word];
  }
  for (std::uint64_t word : all.bits) placement.units += std::popcount(word);
  if (masks.size() > static_cast<std::size_t>(placement.units)) {
    placement.own_unit_each = false;
    return placement;
  }
  std::vector<std::size_t> owner(unit_mask::words * 64, no_rank);
  std::vector<bool> visited(owner.size());
  for (std::size_t rank = 0; rank < masks.size(); ++rank) {
    std::fill(visited.begin(), visited.end(), false);
    if (!place(rank, masks, owner, visited)) {
      placement.own_unit_each = false;
      break;
    }
  }
  return placement;
}

}  // namespace cachecomm::detail
