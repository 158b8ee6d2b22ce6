// Decomposition arithmetic, field layouts and the untyped grid storage.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "cachecomm/grid.hpp"
#include "shm/cache_line.hpp"

namespace cachecomm {

const char* to_string(boundary value) {
  return value == boundary::fixed ? "fixed" : "periodic";
}
const char* to_string(halo_shape value) {
  return value == halo_shape::faces ? "faces" : "full";
}
const char* to_string(grid_layout value) {
  return value == grid_layout::row_major ? "row-major" : "tiled";
}

namespace {

[[nodiscard]] std::string dim_name(int internal_d, int dims) {
  return "dimension " + std::to_string(dims == 2 ? internal_d - 1 : internal_d);
}

// Cells rank `coord` of `parts` gets of `cells` (the first cells % parts ranks get one more).
long block_size(long cells, int parts, int coord) {
  return cells / parts + (coord < cells % parts ? 1 : 0);
}
long block_start(long cells, int parts, int coord) {
  return coord * (cells / parts) + std::min<long>(coord, cells % parts);
}

}  // namespace

decomposition::decomposition(const grid_spec& spec, int ranks) : m_spec(spec), m_ranks(ranks) {
  const auto dims = spec.global_size.size();
  if (dims != 2 && dims != 3) {
    throw invalid_argument("cachecomm::grid: global_size must have 2 or 3 entries, got " +
                           std::to_string(dims));
  }
  m_dims = static_cast<int>(dims);
  const int first = grid_max_dims - m_dims;  // internal index of the first user dimension
  if (ranks < 1) throw invalid_argument("cachecomm::grid: rank count must be at least 1");
  if (spec.ghost_width < 1) {
    throw invalid_argument("cachecomm::grid: ghost width must be at least 1, got " +
                           std::to_string(spec.ghost_width));
  }
  if (!spec.boundaries.empty() && spec.boundaries.size() != dims) {
    throw invalid_argument("cachecomm::grid: boundaries must list one entry per dimension (" +
                           std::to_string(dims) + "), got " +
                           std::to_string(spec.boundaries.size()));
  }
  for (int d = first; d < grid_max_dims; ++d) {
    const long cells = spec.global_size[static_cast<std::size_t>(d - first)];
    if (cells < 1) {
      throw invalid_argument("cachecomm::grid: global size along " + dim_name(d, m_dims) +
                             " must be at least 1, got " + std::to_string(cells));
    }
    m_global[d] = cells;
    m_ghost[d] = spec.ghost_width;
    if (!spec.boundaries.empty())
      m_boundary[d] = spec.boundaries[static_cast<std::size_t>(d - first)];
  }
  if (m_dims == 2) m_ghost[0] = 0;

  const bool automatic = spec.ranks_per_dim.empty() ||
                         std::all_of(spec.ranks_per_dim.begin(), spec.ranks_per_dim.end(),
                                     [](int p) { return p == 0; });
  if (!automatic) {
    if (spec.ranks_per_dim.size() != dims) {
      throw invalid_argument("cachecomm::grid: ranks_per_dim must list one entry per dimension");
    }
    long product = 1;
    for (int d = first; d < grid_max_dims; ++d) {
      int parts = spec.ranks_per_dim[static_cast<std::size_t>(d - first)];
      if (parts < 1)
        throw invalid_argument("cachecomm::grid: ranks_per_dim entries must be at least 1");
      m_ranks_per_dim[d] = parts;
      product *= parts;
    }
    if (product != ranks) {
      throw invalid_argument("cachecomm::grid: ranks_per_dim multiplies to " +
                             std::to_string(product) + " but there are " + std::to_string(ranks) +
                             " ranks");
    }
  } else {
    // Smallest halo surface per rank; ties go to cutting slower dimensions (contiguous faces).
    double best = std::numeric_limits<double>::max();
    bool found = false;
    const int max0 = m_dims == 3 ? ranks : 1;
    for (int p0 = 1; p0 <= max0; ++p0) {
      if (ranks % p0 != 0) continue;
      for (int p1 = 1; p1 <= ranks / p0; ++p1) {
        if ((ranks / p0) % p1 != 0) continue;
        std::array<int, 3> parts{p0, p1, ranks / p0 / p1};
        bool fits = true;
        for (int d = 0; d < 3; ++d) fits = fits && parts[d] <= m_global[d];
        if (!fits) continue;
        double surface = 0;
        for (int d = first; d < 3; ++d) {
          if (parts[d] == 1 && m_boundary[d] == boundary::fixed) continue;
          double face = 1;
          for (int e = first; e < 3; ++e) {
            if (e != d) face *= static_cast<double>(m_global[e]) / parts[e];
          }
          surface += face;
        }
        const bool tie = surface <= best + 1e-9 && surface >= best - 1e-9;
        if (surface < best - 1e-9 || (tie && parts > m_ranks_per_dim)) {
          best = surface;
          m_ranks_per_dim = parts;
          found = true;
        }
      }
    }
    if (!found) {
      throw invalid_argument("cachecomm::grid: " + std::to_string(ranks) +
                             " ranks cannot be laid out over a grid of " +
                             std::to_string(m_global[0] * m_global[1] * m_global[2]) +
                             " cells (more ranks than cells along the dimensions)");
    }
  }
  for (int d = first; d < grid_max_dims; ++d) {
    if (m_ranks_per_dim[d] > m_global[d]) {
      throw invalid_argument("cachecomm::grid: " + std::to_string(m_ranks_per_dim[d]) +
                             " ranks along " + dim_name(d, m_dims) + " but only " +
                             std::to_string(m_global[d]) + " cells (more ranks than cells)");
    }
    const long smallest = m_global[d] / m_ranks_per_dim[d];
    if (smallest < m_ghost[d]) {
      throw invalid_argument("cachecomm::grid: ghost width " + std::to_string(m_ghost[d]) +
                             " is wider than the smallest subdomain along " + dim_name(d, m_dims) +
                             " (" + std::to_string(smallest) + " cells)");
    }
  }
}

std::array<int, grid_max_dims> decomposition::coords_of(int rank) const {
  std::array<int, grid_max_dims> coords{};
  for (int d = grid_max_dims - 1; d >= 0; --d) {
    coords[d] = rank % m_ranks_per_dim[d];
    rank /= m_ranks_per_dim[d];
  }
  return coords;
}

int decomposition::rank_at(const std::array<int, grid_max_dims>& coords) const {
  int rank = 0;
  for (int d = 0; d < grid_max_dims; ++d) rank = rank * m_ranks_per_dim[d] + coords[d];
  return rank;
}

int decomposition::neighbour(int rank, const std::array<int, grid_max_dims>& offset) const {
  auto coords = coords_of(rank);
  for (int d = 0; d < grid_max_dims; ++d) {
    int c = coords[d] + offset[d];
    if (c < 0 || c >= m_ranks_per_dim[d]) {
      if (m_boundary[d] == boundary::fixed || m_ghost[d] == 0) return -1;
      c = (c + m_ranks_per_dim[d]) % m_ranks_per_dim[d];
    }
    coords[d] = c;
  }
  return rank_at(coords);
}

index3 decomposition::local_size(int rank) const {
  auto coords = coords_of(rank);
  index3 size{};
  for (int d = 0; d < grid_max_dims; ++d)
    size[d] = block_size(m_global[d], m_ranks_per_dim[d], coords[d]);
  return size;
}

index3 decomposition::global_offset(int rank) const {
  auto coords = coords_of(rank);
  index3 start{};
  for (int d = 0; d < grid_max_dims; ++d)
    start[d] = block_start(m_global[d], m_ranks_per_dim[d], coords[d]);
  return start;
}

index3 decomposition::wrap(index3 global) const {
  for (int d = 0; d < grid_max_dims; ++d)
    global[d] = ((global[d] % m_global[d]) + m_global[d]) % m_global[d];
  return global;
}

field_layout::field_layout(const index3& local_size, const std::array<int, grid_max_dims>& ghost,
                           grid_layout layout, const std::array<int, grid_max_dims>& tile)
    : m_ghost(ghost), m_kind(layout) {
  std::array<std::size_t, grid_max_dims> extent{};
  for (int d = 0; d < grid_max_dims; ++d)
    extent[d] = static_cast<std::size_t>(local_size[d]) + 2 * static_cast<std::size_t>(ghost[d]);
  if (layout == grid_layout::row_major) {
    std::size_t stride = 1;
    for (int d = grid_max_dims - 1; d >= 0; --d) {
      m_table[d].resize(extent[d]);
      for (std::size_t index = 0; index < extent[d]; ++index) m_table[d][index] = index * stride;
      stride *= extent[d];
    }
    m_cells = stride;
    return;
  }
  std::array<std::size_t, grid_max_dims> t{}, tiles{};
  std::size_t tile_cells = 1;
  for (int d = 0; d < grid_max_dims; ++d) {
    t[d] = static_cast<std::size_t>(std::max(1, tile[d]));
    tiles[d] = (extent[d] + t[d] - 1) / t[d];
    tile_cells *= t[d];
  }
  // offset = tile number * tile_cells + position inside the tile, both row-major: separable per
  // dimension.
  std::size_t tile_stride = tile_cells, inner_stride = 1;
  for (int d = grid_max_dims - 1; d >= 0; --d) {
    m_table[d].resize(extent[d]);
    for (std::size_t index = 0; index < extent[d]; ++index) {
      m_table[d][index] = (index / t[d]) * tile_stride + (index % t[d]) * inner_stride;
    }
    tile_stride *= tiles[d];
    inner_stride *= t[d];
  }
  m_cells = tile_stride;
}

namespace {

std::array<int, grid_max_dims> tile_of(const decomposition& decomp) {
  const auto& tile = decomp.spec().tile;
  if (tile.empty()) {
    return decomp.dims() == 2 ? std::array<int, 3>{1, 8, 8} : std::array<int, 3>{4, 4, 8};
  }
  if (static_cast<int>(tile.size()) != decomp.dims()) {
    throw invalid_argument("cachecomm::grid: tile must list one extent per dimension");
  }
  std::array<int, grid_max_dims> result{1, 1, 1};
  for (int d = 0; d < decomp.dims(); ++d) {
    if (tile[static_cast<std::size_t>(d)] < 1)
      throw invalid_argument("cachecomm::grid: tile extents must be at least 1");
    result[static_cast<std::size_t>(grid_max_dims) - static_cast<std::size_t>(decomp.dims()) +
           static_cast<std::size_t>(d)] = tile[static_cast<std::size_t>(d)];
  }
  return result;
}

std::array<int, grid_max_dims> ghosts_of(const decomposition& decomp) {
  return {decomp.ghost(0), decomp.ghost(1), decomp.ghost(2)};
}

// Field starts are page aligned: the kernels stream them, and peers write into them.
constexpr std::size_t field_alignment = 4096;

}  // namespace

grid_base::grid_base(grid_transport& transport, const grid_spec& spec, int fields,
                     std::size_t element_bytes)
    : m_transport(&transport),
      m_decomposition(spec, transport.size()),
      m_rank(transport.rank()),
      m_fields(fields),
      m_element_bytes(element_bytes) {
  if (fields < 1) throw invalid_argument("cachecomm::grid: a grid needs at least one field");
  m_local_size = m_decomposition.local_size(m_rank);
  m_global_offset = m_decomposition.global_offset(m_rank);
  m_layout = layout_of(m_rank);
  m_field_bytes = detail::round_up(m_layout.cells() * element_bytes, field_alignment);
  m_memory = transport.allocate(storage_bytes_of(m_rank));
  std::memset(m_memory->local(), 0, storage_bytes_of(m_rank));
  transport.barrier();  // nobody writes into a peer before the peer cleared its memory
}

field_layout grid_base::layout_of(int rank) const {
  return field_layout(m_decomposition.local_size(rank), ghosts_of(m_decomposition),
                      m_decomposition.spec().layout, tile_of(m_decomposition));
}

std::size_t grid_base::storage_bytes_of(int rank) const {
  const std::size_t cells = rank == m_rank ? m_layout.cells() : layout_of(rank).cells();
  const std::size_t field = detail::round_up(cells * m_element_bytes, field_alignment);
  const std::size_t origin = m_decomposition.spec().checked
                                 ? detail::round_up(cells * sizeof(halo_origin), field_alignment)
                                 : 0;
  return static_cast<std::size_t>(m_fields) * (field + origin);
}

std::byte* grid_base::field_bytes(int field) const {
  return m_memory->local() + static_cast<std::size_t>(field) * m_field_bytes;
}

std::byte* grid_base::peer_field_bytes(int rank, int field) const {
  std::byte* base = m_memory->peer(rank);
  if (base == nullptr) return nullptr;
  const std::size_t cells = layout_of(rank).cells();
  return base + static_cast<std::size_t>(field) *
                    detail::round_up(cells * m_element_bytes, field_alignment);
}

halo_origin* grid_base::origins(int field) const {
  return peer_origins(m_rank, field);
}

halo_origin* grid_base::peer_origins(int rank, int field) const {
  if (!m_decomposition.spec().checked) return nullptr;
  std::byte* base = rank == m_rank ? m_memory->local() : m_memory->peer(rank);
  if (base == nullptr) return nullptr;
  const std::size_t cells = rank == m_rank ? m_layout.cells() : layout_of(rank).cells();
  const std::size_t field_size = detail::round_up(cells * m_element_bytes, field_alignment);
  const std::size_t origin_size = detail::round_up(cells * sizeof(halo_origin), field_alignment);
  return reinterpret_cast<halo_origin*>(base + static_cast<std::size_t>(m_fields) * field_size +
                                        static_cast<std::size_t>(field) * origin_size);
}

}  // namespace cachecomm
