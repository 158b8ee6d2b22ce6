#include "core/machine_sharing.hpp"

#include <algorithm>
#include <vector>

#include "core/mpi_check.hpp"
#include "topo/machine.hpp"
#include "topo/unit_placement.hpp"

namespace cachecomm::detail {

machine_sharing share_machine(MPI_Comm shared) {
  machine_sharing sharing;
  CACHECOMM_MPI(MPI_Comm_size(shared, &sharing.ranks));
  const unit_mask mine = allowed_units();
  std::vector<unit_mask> masks(static_cast<std::size_t>(sharing.ranks));
  static_assert(sizeof(unit_mask) == unit_mask::words * sizeof(std::uint64_t));
  constexpr int words = static_cast<int>(unit_mask::words);
  CACHECOMM_MPI(MPI_Allgather(mine.bits.data(), words, MPI_UINT64_T, masks.data(), words,
                              MPI_UINT64_T, shared));
  const unit_placement placement = place_ranks(masks);
  sharing.units = this_machine().processing_units;
  if (placement.units > 0) sharing.units = std::min(sharing.units, placement.units);
  sharing.oversubscribed = sharing.ranks > sharing.units || !placement.own_unit_each;
  // Agreed, not read alone: it sizes the collectives' shared segment, whose layout every rank
  // computes for itself.
  auto l2 = static_cast<unsigned long long>(this_machine().l2_cache_bytes);
  CACHECOMM_MPI(MPI_Allreduce(MPI_IN_PLACE, &l2, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, shared));
  sharing.l2_cache_bytes = static_cast<std::size_t>(l2);
  return sharing;
}

}  // namespace cachecomm::detail
