// The pattern of one halo exchange: which box of which field goes to which rank, built once.
#pragma once

#include <array>
#include <vector>

#include "cachecomm/grid.hpp"

namespace cachecomm::detail {

struct halo_transfer {
  int peer = -1;      ///< the other rank
  int direction = 0;  ///< index of `offset` in {-1,0,1}^3 (0..26), the sender's view
  std::array<int, grid_max_dims> offset{};  ///< where the peer lies, seen from this rank
  box3 source;                              ///< cells read, in the sender's local coordinates
  box3 destination;                         ///< cells written, in the receiver's local coordinates
};

struct halo_plan {
  std::vector<int> fields;
  std::vector<halo_transfer> sends;  ///< source in my coordinates, destination in the peer's
  std::vector<halo_transfer>
      receives;         ///< destination is my ghost box, source in the peer's coordinates
  int exchange_id = 0;  ///< keeps the message tags of different exchanges apart
  int slot = 0;         ///< flag slot in shared memory
};

[[nodiscard]] inline int direction_index(const std::array<int, grid_max_dims>& offset) {
  return (offset[0] + 1) * 9 + (offset[1] + 1) * 3 + (offset[2] + 1);
}

/// Builds the pattern of rank `g.rank()` for `fields`.
[[nodiscard]] halo_plan build_halo_plan(const grid_base& g, std::vector<int> fields);

}  // namespace cachecomm::detail
