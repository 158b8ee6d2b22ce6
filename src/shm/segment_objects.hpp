// The operating-system objects behind a shm_segment: descriptors of shared memory that either
// never has a name (memfd) or has one only until every rank of the node has opened it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace cachecomm::detail {

/// Move-only owner of a file descriptor.
class file_descriptor {
 public:
  file_descriptor() = default;
  explicit file_descriptor(int fd) : m_fd(fd) {}
  ~file_descriptor() { reset(); }
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  file_descriptor(file_descriptor&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }
  file_descriptor& operator=(file_descriptor&& other) noexcept;
  [[nodiscard]] int get() const { return m_fd; }
  [[nodiscard]] bool valid() const { return m_fd >= 0; }
  void reset() noexcept;

 private:
  int m_fd = -1;
};

/// Name prefix of every segment the library creates: the memfd name (seen in /proc/<pid>/maps as
/// "/memfd:cachecomm-segment (deleted)") and, on the fallback path, the short-lived /dev/shm name.
/// Tests look for leftovers with it.
inline constexpr const char* segment_name_prefix = "/cachecomm-";
inline constexpr const char* anonymous_segment_name = "cachecomm-segment";

/// Returns a fresh unguessable segment name (128 random bits from the kernel).
[[nodiscard]] std::string random_segment_name();

/// Creates shared memory that has no name anywhere (memfd_create, close-on-exec, mode 0600), size
/// 0. Throws system_error.
[[nodiscard]] file_descriptor create_anonymous_segment();

/// Creates the named POSIX object exclusively (O_EXCL, close-on-exec) with mode 0600, size 0.
/// Throws system_error (EEXIST when the name is taken). The caller unlinks it.
[[nodiscard]] file_descriptor create_exclusive_segment(const std::string& name);

/// Opens another process's descriptor through /proc/<pid>/fd/<fd> (read-write, close-on-exec).
/// Needs ptrace read access to that process. Throws system_error with the open's errno.
[[nodiscard]] file_descriptor open_peer_descriptor(pid_t pid, int fd);

/// Refuses (system_error ENOSPC) a segment larger than the free space of /dev/shm, before anything
/// is allocated: the limit named segments always had. A memfd lives on the kernel's internal
/// tmpfs, which has no size limit, so without this a request too large for the node would
/// allocate until the OOM killer stepped in instead of failing.
void check_segment_budget(std::size_t bytes);

/// Sets the size of the object to `bytes` and reserves the pages of its first `reserved_bytes`
/// now, so that a lack of memory is an error here (ENOSPC/ENOMEM) and not a SIGBUS at the first
/// touch of a page (the rest must be reserved by shm_segment::populate). `what` names the object.
void reserve_segment_memory(int fd, std::size_t bytes, std::size_t reserved_bytes,
                            const std::string& what);

}  // namespace cachecomm::detail
