#include "shm/segment_objects.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>

#include "cachecomm/error.hpp"

namespace cachecomm::detail {

file_descriptor& file_descriptor::operator=(file_descriptor&& other) noexcept {
  if (this != &other) {
    reset();
    m_fd = other.m_fd;
    other.m_fd = -1;
  }
  return *this;
}

void file_descriptor::reset() noexcept {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
}

std::string random_segment_name() {
  std::array<unsigned char, 16> random{};
  std::size_t filled = 0;
  while (filled < random.size()) {
    ssize_t got = ::getrandom(random.data() + filled, random.size() - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw system_error("cachecomm: getrandom for a segment name", errno);
    }
    filled += static_cast<std::size_t>(got);
  }
  std::string name = segment_name_prefix;
  for (unsigned char byte : random) {
    std::array<char, 3> hex{};
    std::snprintf(hex.data(), hex.size(), "%02x", byte);
    name += hex.data();
  }
  return name;
}

namespace {

// fchmod: the umask must not widen or narrow what peers of the same user may do (a memfd starts
// as 0777).
void make_private(const file_descriptor& fd, const std::string& what) {
  if (::fchmod(fd.get(), S_IRUSR | S_IWUSR) != 0)
    throw system_error("cachecomm: fchmod 0600 of " + what, errno);
}

}  // namespace

file_descriptor create_anonymous_segment() {
  file_descriptor fd(::memfd_create(anonymous_segment_name, MFD_CLOEXEC));
  if (!fd.valid()) throw system_error("cachecomm: memfd_create for a shared segment", errno);
  make_private(fd, "a memfd segment");
  return fd;
}

file_descriptor create_exclusive_segment(const std::string& name) {
  file_descriptor fd(
      ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, S_IRUSR | S_IWUSR));
  if (!fd.valid()) throw system_error("cachecomm: shm_open(" + name + ", O_EXCL)", errno);
  try {
    make_private(fd, name);
  } catch (...) {
    ::shm_unlink(name.c_str());
    throw;
  }
  return fd;
}

file_descriptor open_peer_descriptor(pid_t pid, int fd) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  file_descriptor opened(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!opened.valid()) throw system_error("cachecomm: open(" + path + ")", errno);
  return opened;
}

void check_segment_budget(std::size_t bytes) {
  struct statvfs info {};
  if (::statvfs("/dev/shm", &info) != 0 || info.f_blocks == 0) return;  // none, or no size limit
  const auto available =
      static_cast<std::size_t>(info.f_bavail) * static_cast<std::size_t>(info.f_frsize);
  if (bytes > available) {
    throw system_error("cachecomm: a shared segment of " + std::to_string(bytes) +
                           " bytes does not fit in the " + std::to_string(available) +
                           " bytes free in /dev/shm, which bounds cachecomm's segments",
                       ENOSPC);
  }
}

void reserve_segment_memory(int fd, std::size_t bytes, std::size_t reserved_bytes,
                            const std::string& what) {
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0)
    throw system_error("cachecomm: sizing " + what, errno);
  // ftruncate only sets the size: the first touch of a page the tmpfs cannot supply would be a
  // SIGBUS. Reserve the pages now instead, so that a lack of room is an error here.
  reserved_bytes = std::min(reserved_bytes, bytes);
  if (reserved_bytes == 0) return;
  if (int failed = ::posix_fallocate(fd, 0, static_cast<off_t>(reserved_bytes)); failed != 0) {
    throw system_error(
        "cachecomm: reserving " + std::to_string(reserved_bytes) + " bytes for " + what, failed);
  }
}

}  // namespace cachecomm::detail
