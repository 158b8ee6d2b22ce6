// RAII owner of one shared-memory mapping shared by the ranks of one node.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

namespace cachecomm::detail {

/// How the ranks of a node came to share a segment's memory.
enum class segment_sharing {
  none,           ///< no mapping (default-constructed or moved from)
  anonymous,      ///< rank 0's memfd, opened by the others through /proc/<pid>/fd: never had a name
  unlinked_name,  ///< fallback: a /dev/shm name that existed only until every rank had opened it
};

/// Test hook: this rank behaves as though it could not open rank 0's descriptor through /proc
/// (EACCES), as on hardened kernels; on rank 0 it skips memfd altogether. Forces the named path.
struct segment_test_hooks {
  bool refuse_descriptor_sharing = false;
};

/// The part of a segment made ready when it is built: reserved, and mapped with its page tables
/// filled (up to a bound, segment.cpp). The rest is made ready by populate(), where the kernel
/// can report a lack of memory there (Linux 5.14); otherwise it is reserved at set-up as well.
struct segment_population {
  /// Bytes from the start of the segment; the default: all of it.
  std::size_t leading_bytes = ~std::size_t{0};
};

class shm_segment {
 public:
  shm_segment() = default;
  /// Collective over `node_comm` (all ranks must share memory). Rank 0 creates a memfd (mode 0600)
  /// and the others open it through /proc/<rank 0's pid>/fd, so the memory never has a name a
  /// crash could leave behind. If any rank cannot open it (no ptrace read access: hardened kernel,
  /// container), all ranks agree to fall back to a POSIX object created exclusively (O_EXCL, 0600)
  /// under a random name, which rank 0 unlinks as soon as every rank has opened it, before sizing.
  shm_segment(MPI_Comm node_comm, std::size_t bytes, segment_test_hooks hooks = {},
              segment_population population = {});
  ~shm_segment();

  shm_segment(const shm_segment&) = delete;
  shm_segment& operator=(const shm_segment&) = delete;
  shm_segment(shm_segment&& other) noexcept;
  shm_segment& operator=(shm_segment&& other) noexcept;

  [[nodiscard]] void* data() const { return m_base; }
  [[nodiscard]] std::size_t size() const { return m_size; }
  [[nodiscard]] segment_sharing sharing() const { return m_sharing; }
  /// Pointer to `offset`, checked against the segment's size and the type's alignment.
  template <typename T>
  [[nodiscard]] T* at(std::size_t offset, std::size_t count = 1) const {
    check_range(offset, count * sizeof(T), alignof(T));
    return reinterpret_cast<T*>(static_cast<std::byte*>(m_base) + offset);
  }
  [[nodiscard]] std::byte* bytes_at(std::size_t offset, std::size_t length) const {
    check_range(offset, length, 1);
    return static_cast<std::byte*>(m_base) + offset;
  }
  /// Makes [offset, offset + length) ready for this rank without changing its data: reserves
  /// the pages set-up left unreserved (segment_population) and fills this rank's page tables, so
  /// that the first touches take no page faults. Returns 0, or the errno of a lack of memory
  /// (then the range must not be touched: it would be a SIGBUS). Segments too large to populate
  /// were reserved whole at set-up and fault in on first touch: nothing to do.
  [[nodiscard]] int populate(std::size_t offset, std::size_t length) const;

 private:
  void check_range(std::size_t offset, std::size_t length, std::size_t alignment) const;
  void release() noexcept;

  void* m_base = nullptr;
  std::size_t m_size = 0;
  segment_sharing m_sharing = segment_sharing::none;
};

}  // namespace cachecomm::detail
