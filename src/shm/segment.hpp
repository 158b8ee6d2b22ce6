// RAII owner of one POSIX shared-memory mapping shared by the ranks of one node.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

namespace cachecomm::detail {

class shm_segment {
 public:
  shm_segment() = default;
  /// Collective over `node_comm` (all ranks must share memory). Rank 0 creates the object
  /// exclusively (O_EXCL, mode 0600) under a random name, passes the name over MPI, and unlinks it
  /// once every rank has mapped it, so a crash afterwards cannot leave it behind.
  shm_segment(MPI_Comm node_comm, std::size_t bytes);
  ~shm_segment();

  shm_segment(const shm_segment&) = delete;
  shm_segment& operator=(const shm_segment&) = delete;
  shm_segment(shm_segment&& other) noexcept;
  shm_segment& operator=(shm_segment&& other) noexcept;

  [[nodiscard]] void* data() const { return m_base; }
  [[nodiscard]] std::size_t size() const { return m_size; }
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

 private:
  void check_range(std::size_t offset, std::size_t length, std::size_t alignment) const;
  void release() noexcept;

  void* m_base = nullptr;
  std::size_t m_size = 0;
};

/// Name prefix of every segment the library creates (tests look for leftovers with it).
inline constexpr const char* segment_name_prefix = "/cachecomm-";

/// Returns a fresh unguessable segment name (128 random bits from the kernel).
[[nodiscard]] std::string random_segment_name();

/// Creates the named object exclusively (O_EXCL) with mode 0600 and size `bytes`; returns its
/// descriptor. Throws system_error (EEXIST when the name is taken).
[[nodiscard]] int create_exclusive_segment(const std::string& name, std::size_t bytes);

}  // namespace cachecomm::detail
