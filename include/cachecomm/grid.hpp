// cachecomm::grid: a 2D or 3D Cartesian grid of numbers decomposed over the ranks of a transport,
// with ghost cells around each rank's subdomain.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cachecomm/error.hpp"
#include "cachecomm/grid_transport.hpp"

namespace cachecomm {

enum class boundary { fixed, periodic };
/// Which ghost regions an exchange fills: faces only, or faces, edges and corners.
enum class halo_shape { faces, full };
/// Row-major (last dimension contiguous) or tiled (blocks of `grid_spec::tile` cells stored
/// contiguously, so that every face of a tile is a few cache lines).
enum class grid_layout { row_major, tiled };

[[nodiscard]] const char* to_string(boundary value);
[[nodiscard]] const char* to_string(halo_shape value);
[[nodiscard]] const char* to_string(grid_layout value);

/// What the grid looks like. Dimensions are listed slowest first: {rows, columns} in 2D,
/// {planes, rows, columns} in 3D; the last one is contiguous in row-major layout.
struct grid_spec {
  std::vector<long> global_size;     ///< 2 or 3 entries, each >= 1
  std::vector<int> ranks_per_dim;    ///< empty (or all 0): automatic factorization
  int ghost_width = 1;               ///< ghost cells on each side, >= 1
  std::vector<boundary> boundaries;  ///< per dimension; empty: fixed everywhere
  halo_shape shape = halo_shape::faces;
  grid_layout layout = grid_layout::row_major;
  std::vector<int> tile;  ///< tile extents for the tiled layout; empty: 8 per 2D axis, 4x4x8 in 3D
  bool checked = false;   ///< checked halos: every value travels with its origin (seed 6.2)
};

/// Internally every grid has three dimensions; a 2D grid has a first dimension of one cell and no
/// ghosts along it.
inline constexpr int grid_max_dims = 3;
using index3 = std::array<long, grid_max_dims>;

/// Half-open box [low, high) of local cell coordinates (owned cells start at 0, ghosts are negative
/// or >= the local size).
struct box3 {
  index3 low{};
  index3 high{};
  [[nodiscard]] long count() const {
    long cells = 1;
    for (int d = 0; d < grid_max_dims; ++d) cells *= high[d] > low[d] ? high[d] - low[d] : 0;
    return cells;
  }
};

/// Which rank owns which block: pure arithmetic, identical on every rank.
class decomposition {
 public:
  /// Validates `spec` for `ranks` ranks and factorizes them; throws invalid_argument naming the
  /// problem.
  decomposition(const grid_spec& spec, int ranks);

  [[nodiscard]] int dims() const { return m_dims; }  ///< 2 or 3
  [[nodiscard]] int ranks() const { return m_ranks; }
  [[nodiscard]] int ghost(int d) const {
    return m_ghost[d];
  }  ///< ghost width along internal dimension d
  [[nodiscard]] const index3& global_size() const { return m_global; }  ///< internal (3D) form
  [[nodiscard]] const std::array<int, grid_max_dims>& ranks_per_dim() const {
    return m_ranks_per_dim;
  }
  [[nodiscard]] boundary boundary_of(int d) const { return m_boundary[d]; }
  [[nodiscard]] const grid_spec& spec() const { return m_spec; }

  [[nodiscard]] std::array<int, grid_max_dims> coords_of(int rank) const;
  [[nodiscard]] int rank_at(const std::array<int, grid_max_dims>& coords) const;
  /// Rank in direction `offset` (-1, 0 or 1 per dimension) from `rank`, or -1 past a fixed
  /// boundary.
  [[nodiscard]] int neighbour(int rank, const std::array<int, grid_max_dims>& offset) const;
  [[nodiscard]] index3 local_size(int rank) const;
  [[nodiscard]] index3 global_offset(int rank) const;
  /// Global cell a (possibly out-of-domain) global coordinate refers to after periodic wrapping.
  [[nodiscard]] index3 wrap(index3 global) const;

 private:
  grid_spec m_spec;
  int m_dims = 2;
  int m_ranks = 1;
  index3 m_global{1, 1, 1};
  std::array<int, grid_max_dims> m_ghost{0, 1, 1};
  std::array<int, grid_max_dims> m_ranks_per_dim{1, 1, 1};
  std::array<boundary, grid_max_dims> m_boundary{boundary::fixed, boundary::fixed, boundary::fixed};
};

/// Where cell (i, j, k) of one rank's field lives: offset = row[i] + column[j] + element[k]
/// (both layouts are separable, so copies and kernels share one addressing scheme).
class field_layout {
 public:
  field_layout() = default;
  field_layout(const index3& local_size, const std::array<int, grid_max_dims>& ghost,
               grid_layout layout, const std::array<int, grid_max_dims>& tile);
  [[nodiscard]] std::size_t offset(long i, long j, long k) const {
    return m_table[0][static_cast<std::size_t>(i + m_ghost[0])] +
           m_table[1][static_cast<std::size_t>(j + m_ghost[1])] +
           m_table[2][static_cast<std::size_t>(k + m_ghost[2])];
  }
  /// Offsets along dimension d for local coordinate `index` (ghosts included).
  [[nodiscard]] std::size_t part(int d, long index) const {
    return m_table[d][static_cast<std::size_t>(index + m_ghost[d])];
  }
  [[nodiscard]] std::size_t cells() const { return m_cells; }  ///< storage cells, padding included
  [[nodiscard]] grid_layout kind() const { return m_kind; }
  [[nodiscard]] bool contiguous_rows() const { return m_kind == grid_layout::row_major; }

 private:
  std::array<std::vector<std::size_t>, grid_max_dims> m_table;
  std::array<int, grid_max_dims> m_ghost{};
  std::size_t m_cells = 0;
  grid_layout m_kind = grid_layout::row_major;
};

/// Metadata that travels with every halo value in checked mode (seed 6.2).
struct halo_origin {
  std::uint32_t exchange = 0;  ///< sequence number of the exchange that wrote it
  std::int32_t sender = -1;    ///< rank that sent it
  std::int32_t source[grid_max_dims] = {0, 0, 0};       ///< global cell it was read from
  std::int32_t destination[grid_max_dims] = {0, 0, 0};  ///< global (unwrapped) cell it is meant for
};
static_assert(sizeof(halo_origin) == 32);

/// Untyped storage of the fields of one rank; grid<T> adds the element type.
class grid_base {
 public:
  /// Collective over `transport`.
  grid_base(grid_transport& transport, const grid_spec& spec, int fields,
            std::size_t element_bytes);
  grid_base(const grid_base&) = delete;
  grid_base& operator=(const grid_base&) = delete;

  [[nodiscard]] grid_transport& transport() const { return *m_transport; }
  [[nodiscard]] const decomposition& decomp() const { return m_decomposition; }
  [[nodiscard]] int rank() const { return m_rank; }
  [[nodiscard]] int fields() const { return m_fields; }
  [[nodiscard]] std::size_t element_bytes() const { return m_element_bytes; }
  [[nodiscard]] const index3& local_size() const { return m_local_size; }
  [[nodiscard]] const index3& global_offset() const { return m_global_offset; }
  [[nodiscard]] const field_layout& layout() const { return m_layout; }
  /// Layout of any rank's fields (every rank can compute every layout).
  [[nodiscard]] field_layout layout_of(int rank) const;
  [[nodiscard]] std::byte* field_bytes(int field) const;
  /// Field `field` of direct peer `rank` (null when not reachable through shared memory).
  [[nodiscard]] std::byte* peer_field_bytes(int rank, int field) const;
  /// Checked mode: origin record of every cell of `field` (same indexing as the field), or null.
  [[nodiscard]] halo_origin* origins(int field) const;
  [[nodiscard]] halo_origin* peer_origins(int rank, int field) const;
  [[nodiscard]] field_memory& memory() const { return *m_memory; }
  /// Bytes one rank's storage takes (fields, then origin records in checked mode).
  [[nodiscard]] std::size_t field_stride_bytes() const { return m_field_bytes; }
  /// Each exchange built on this grid takes a slot of synchronization flags.
  [[nodiscard]] int claim_exchange_slot() { return m_exchange_slots++; }

 private:
  [[nodiscard]] std::size_t storage_bytes_of(int rank) const;
  grid_transport* m_transport;
  decomposition m_decomposition;
  int m_rank;
  int m_fields;
  std::size_t m_element_bytes;
  index3 m_local_size{};
  index3 m_global_offset{};
  field_layout m_layout;
  std::size_t m_field_bytes = 0;  // one field, padded to a cache line
  std::unique_ptr<field_memory> m_memory;
  int m_exchange_slots = 0;
};

/// A decomposed grid holding `fields` fields of T (e.g. X and Y of a Jacobi solver).
template <typename T>
class grid : public grid_base {
  static_assert(std::is_trivially_copyable_v<T>, "grid cells are copied as bytes");

 public:
  grid(grid_transport& transport, const grid_spec& spec, int fields = 1)
      : grid_base(transport, spec, fields, sizeof(T)) {}
  [[nodiscard]] T* data(int field = 0) const { return reinterpret_cast<T*>(field_bytes(field)); }
  /// Cell (i, j, k) in local coordinates; 2D grids use i = 0.
  [[nodiscard]] T& at(int field, long i, long j, long k) const {
    return data(field)[layout().offset(i, j, k)];
  }
};

}  // namespace cachecomm
