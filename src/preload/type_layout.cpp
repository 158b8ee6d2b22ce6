#include "preload/type_layout.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <exception>
#include <string>

#include "cachecomm/error.hpp"

namespace cachecomm::detail::preload {

namespace {

// Deeper nesting is packed (and not reduced) rather than walked.
constexpr int max_depth = 32;

// What the walk learns about one datatype.
struct walk {
  bool dense = false;
};

// The datatypes get_contents returns: derived ones are new handles this walk must free.
class contents {
 public:
  explicit contents(MPI_Datatype type, int integers, int addresses, int datatypes)
      : m_ints(static_cast<std::size_t>(integers)),
        m_addresses(static_cast<std::size_t>(addresses)),
        m_types(static_cast<std::size_t>(datatypes), MPI_DATATYPE_NULL) {
    if (PMPI_Type_get_contents(type, integers, addresses, datatypes, m_ints.data(),
                               m_addresses.data(), m_types.data()) != MPI_SUCCESS) {
      throw mpi_error("MPI_Type_get_contents", MPI_ERR_TYPE);
    }
  }
  ~contents() {
    for (MPI_Datatype& type : m_types) {
      int integers = 0;
      int addresses = 0;
      int datatypes = 0;
      int combiner = MPI_COMBINER_NAMED;
      if (type == MPI_DATATYPE_NULL ||
          PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner) != MPI_SUCCESS)
        continue;
      if (combiner != MPI_COMBINER_NAMED) PMPI_Type_free(&type);
    }
  }
  contents(const contents&) = delete;
  contents& operator=(const contents&) = delete;

  [[nodiscard]] int integer(std::size_t i) const { return m_ints.at(i); }
  [[nodiscard]] MPI_Aint address(std::size_t i) const { return m_addresses.at(i); }
  [[nodiscard]] MPI_Datatype type(std::size_t i) const { return m_types.at(i); }
  [[nodiscard]] std::size_t types() const { return m_types.size(); }

 private:
  std::vector<int> m_ints;
  std::vector<MPI_Aint> m_addresses;
  std::vector<MPI_Datatype> m_types;
};

struct extents {
  int size = 0;
  MPI_Aint lower = 0;
  MPI_Aint extent = 0;
  MPI_Aint true_lower = 0;
  MPI_Aint true_extent = 0;
};

extents extents_of(MPI_Datatype type) {
  extents e;
  if (PMPI_Type_size(type, &e.size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(type, &e.lower, &e.extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(type, &e.true_lower, &e.true_extent) != MPI_SUCCESS) {
    throw mpi_error("MPI_Type_size/MPI_Type_get_extent", MPI_ERR_TYPE);
  }
  return e;
}

// Blocks (byte displacement, length in child elements) follow each other without a gap, from 0.
class block_chain {
 public:
  void add(MPI_Aint displacement, long long blocklength, MPI_Aint child_extent) {
    if (blocklength <= 0) return;
    if (displacement != m_next) m_ordered = false;
    m_next = displacement + static_cast<MPI_Aint>(blocklength) * child_extent;
  }
  [[nodiscard]] bool ordered() const { return m_ordered; }

 private:
  MPI_Aint m_next = 0;
  bool m_ordered = true;
};

walk describe(MPI_Datatype type, int depth);

// Walks the children of a derived type; `ordered` is what its combiner says about the blocks.
walk describe_derived(MPI_Datatype type, int combiner, const contents& parts, int depth) {
  walk result;
  std::vector<walk> children;
  for (std::size_t i = 0; i < parts.types(); ++i) {
    // Struct blocks of length 0 are not part of the signature.
    if (combiner == MPI_COMBINER_STRUCT && parts.integer(1 + i) == 0) {
      walk nothing;
      nothing.dense = true;
      children.push_back(nothing);
      continue;
    }
    children.push_back(describe(parts.type(i), depth + 1));
  }
  if (children.empty()) return result;  // Fortran parameterized types and the like: packed
  const extents self = extents_of(type);
  const bool self_dense = self.lower == 0 && self.true_lower == 0 && self.extent == self.size &&
                          self.true_extent == self.size;
  bool ordered = false;
  const auto child_extent = [&](std::size_t i) { return extents_of(parts.type(i)).extent; };
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_RESIZED: ordered = true; break;
    case MPI_COMBINER_VECTOR:
      ordered = parts.integer(0) <= 1 || parts.integer(2) == parts.integer(1);
      break;
    case MPI_COMBINER_HVECTOR:
      ordered = parts.integer(0) <= 1 ||
                parts.address(0) == static_cast<MPI_Aint>(parts.integer(1)) * child_extent(0);
      break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT: {
      const int count = parts.integer(0);
      const bool block =
          combiner == MPI_COMBINER_INDEXED_BLOCK || combiner == MPI_COMBINER_HINDEXED_BLOCK;
      const bool in_elements =
          combiner == MPI_COMBINER_INDEXED || combiner == MPI_COMBINER_INDEXED_BLOCK;
      block_chain chain;
      for (int i = 0; i < count; ++i) {
        const auto index = static_cast<std::size_t>(i);
        const std::size_t child = combiner == MPI_COMBINER_STRUCT ? index : 0;
        const MPI_Aint extent = child_extent(child);
        const int length = block ? parts.integer(1) : parts.integer(1 + index);
        const std::size_t displacement_at =
            (block ? 2 : 1 + static_cast<std::size_t>(count)) + index;
        const MPI_Aint displacement =
            in_elements ? static_cast<MPI_Aint>(parts.integer(displacement_at)) * extent
                        : parts.address(index);
        chain.add(displacement, length, extent);
      }
      ordered = chain.ordered();
      break;
    }
    default: ordered = false; break;  // subarray, darray...: packed
  }
  bool children_dense = true;
  for (const walk& child : children) children_dense = children_dense && child.dense;
  result.dense = self_dense && ordered && children_dense;
  return result;
}

walk describe(MPI_Datatype type, int depth) {
  int integers = 0;
  int addresses = 0;
  int datatypes = 0;
  int combiner = MPI_COMBINER_NAMED;
  if (PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner) != MPI_SUCCESS)
    throw mpi_error("MPI_Type_get_envelope", MPI_ERR_TYPE);
  if (combiner == MPI_COMBINER_NAMED) {
    walk result;
    const extents e = extents_of(type);
    // Pair types such as MPI_DOUBLE_INT have padding inside.
    result.dense = e.lower == 0 && e.extent == e.size && e.size > 0;
    return result;
  }
  if (depth >= max_depth) return {};
  const contents parts(type, integers, addresses, datatypes);
  return describe_derived(type, combiner, parts, depth);
}

}  // namespace

constinit thread_local last_predefined g_last_predefined __attribute__((tls_model("initial-exec")));

std::optional<type_layout> look_up_layout(MPI_Datatype type, outcome& why_not) {
  if (type == MPI_DATATYPE_NULL) {
    why_not = outcome::invalid_argument;
    return std::nullopt;
  }
  type_layout layout;
  try {
    const extents e = extents_of(type);
    if (e.size < 0) {
      why_not = outcome::invalid_argument;
      return std::nullopt;
    }
    const walk w = describe(type, 0);
    layout.size = static_cast<std::size_t>(e.size);
    layout.extent = e.extent;
    layout.dense = w.dense;
    int integers = 0;
    int addresses = 0;
    int datatypes = 0;
    int combiner = MPI_COMBINER_NAMED;
    PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner);
    layout.predefined = combiner == MPI_COMBINER_NAMED;
  } catch (const std::exception&) {
    why_not = outcome::invalid_argument;  // MPI reports the bad handle itself
    return std::nullopt;
  }
  if (layout.predefined) g_last_predefined = {true, type, layout};
  return layout;
}

std::vector<std::byte>& scratch(int which) {
  thread_local std::array<std::vector<std::byte>, 2> buffers
      __attribute__((tls_model("initial-exec")));
  return buffers.at(static_cast<std::size_t>(which));
}

namespace {

// MPI_Pack and MPI_Unpack count in int: large messages go in batches of whole elements.
template <typename Step>
void in_batches(std::size_t count, const type_layout& layout, Step&& step) {
  if (layout.size > static_cast<std::size_t>(INT_MAX)) {
    throw unsupported_error("cachecomm: a datatype element of " + std::to_string(layout.size) +
                            " bytes cannot be packed through MPI_Pack (int sizes)");
  }
  const std::size_t per_batch =
      layout.size == 0 ? count : static_cast<std::size_t>(INT_MAX) / layout.size;
  for (std::size_t done = 0; done < count; done += per_batch) {
    const std::size_t n = std::min(per_batch, count - done);
    step(done, static_cast<int>(n), static_cast<int>(n * layout.size));
  }
}

}  // namespace

void pack(const void* buffer, std::size_t count, MPI_Datatype type, const type_layout& layout,
          std::byte* packed, MPI_Comm comm) {
  const auto base = reinterpret_cast<std::uintptr_t>(buffer);
  in_batches(count, layout, [&](std::size_t done, int n, int bytes) {
    int position = 0;
    const auto* from = reinterpret_cast<const void*>(
        base + static_cast<std::uintptr_t>(static_cast<MPI_Aint>(done) * layout.extent));
    const int code = PMPI_Pack(from, n, type, packed + done * layout.size, bytes, &position, comm);
    if (code != MPI_SUCCESS) throw mpi_error("MPI_Pack", code);
    if (position != bytes) {
      throw unsupported_error("cachecomm: MPI_Pack produced " + std::to_string(position) +
                              " bytes for " + std::to_string(bytes) + " bytes of data");
    }
  });
}

const void* dense_send_block(const void* buffer, std::size_t count, MPI_Datatype type,
                             const type_layout& layout, std::size_t block, MPI_Comm comm) {
  const std::size_t own_bytes = count * layout.size;
  if (layout.dense && own_bytes == block) return buffer;
  std::vector<std::byte>& own = scratch(0);
  own.assign(std::max(own_bytes, block), std::byte{0});
  pack(buffer, count, type, layout, own.data(), comm);
  return own.data();
}

void throw_truncate(const char* call, const char* what, std::size_t got, std::size_t block) {
  throw mpi_error(std::string(call) + ": " + what + " " + std::to_string(got) +
                      " bytes but the blocks of this call are " + std::to_string(block),
                  MPI_ERR_TRUNCATE);
}

void unpack(const std::byte* packed, std::size_t count, MPI_Datatype type,
            const type_layout& layout, void* buffer, MPI_Comm comm) {
  const auto base = reinterpret_cast<std::uintptr_t>(buffer);
  in_batches(count, layout, [&](std::size_t done, int n, int bytes) {
    int position = 0;
    auto* to = reinterpret_cast<void*>(
        base + static_cast<std::uintptr_t>(static_cast<MPI_Aint>(done) * layout.extent));
    const int code = PMPI_Unpack(packed + done * layout.size, bytes, &position, to, n, type, comm);
    if (code != MPI_SUCCESS) throw mpi_error("MPI_Unpack", code);
  });
}

}  // namespace cachecomm::detail::preload
