#include "shm/segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "cachecomm/error.hpp"
#include "core/mpi_check.hpp"

namespace cachecomm::detail {

namespace {

constexpr int name_capacity = 64;

// Owns a file descriptor only until the mapping exists; the mapping outlives it.
class file_descriptor {
 public:
  explicit file_descriptor(int fd) : m_fd(fd) {}
  ~file_descriptor() {
    if (m_fd >= 0) ::close(m_fd);
  }
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  [[nodiscard]] int get() const { return m_fd; }

 private:
  int m_fd;
};

void* map_shared(int fd, std::size_t bytes) {
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) throw system_error("cachecomm: mmap of shared segment", errno);
  return base;
}

}  // namespace

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

int create_exclusive_segment(const std::string& name, std::size_t bytes) {
  int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, S_IRUSR | S_IWUSR);
  if (fd < 0) throw system_error("cachecomm: shm_open(" + name + ", O_EXCL)", errno);
  // fchmod: the umask must not widen or narrow what peers of the same user may do.
  if (::fchmod(fd, S_IRUSR | S_IWUSR) != 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int saved = errno;
    ::close(fd);
    ::shm_unlink(name.c_str());
    throw system_error("cachecomm: sizing shared segment " + name, saved);
  }
  // ftruncate only sets the size: on a /dev/shm smaller than the segment (64 MiB in a default
  // container) the first touch of a missing page would be SIGBUS. Reserve the pages now instead,
  // so that a lack of room is an ENOSPC error here.
  if (int failed = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); failed != 0) {
    ::close(fd);
    ::shm_unlink(name.c_str());
    throw system_error("cachecomm: reserving " + std::to_string(bytes) + " bytes of /dev/shm for " + name, failed);
  }
  return fd;
}

shm_segment::shm_segment(MPI_Comm node_comm, std::size_t bytes) {
  if (bytes == 0) throw invalid_argument("cachecomm: shared segment size must be positive");
  int node_rank = 0;
  CACHECOMM_MPI(MPI_Comm_rank(node_comm, &node_rank));

  // Rank 0 creates; `status` carries its errno so every rank fails together with the same reason.
  std::array<char, name_capacity> name{};
  int status = 0;
  int creator_fd = -1;
  if (node_rank == 0) {
    for (int attempt = 0; attempt < 8 && creator_fd < 0; ++attempt) {
      std::string candidate = random_segment_name();
      try {
        creator_fd = create_exclusive_segment(candidate, bytes);
        std::strncpy(name.data(), candidate.c_str(), name.size() - 1);
        status = 0;
      } catch (const system_error& failure) {
        status = failure.errno_value();
        if (status != EEXIST) break;
      }
    }
  }
  CACHECOMM_MPI(MPI_Bcast(&status, 1, MPI_INT, 0, node_comm));
  if (status != 0) throw system_error("cachecomm: creating a shared-memory segment", status);
  CACHECOMM_MPI(MPI_Bcast(name.data(), name_capacity, MPI_CHAR, 0, node_comm));

  // Every rank maps; the result is agreed on before the name disappears.
  int local_error = 0;
  {
    file_descriptor fd(node_rank == 0 ? creator_fd : ::shm_open(name.data(), O_RDWR | O_CLOEXEC, 0));
    struct stat info {};
    if (fd.get() < 0) {
      local_error = errno;
    } else if (::fstat(fd.get(), &info) != 0) {
      local_error = errno;
    } else if (static_cast<std::size_t>(info.st_size) != bytes || (info.st_mode & 0777) != 0600) {
      local_error = EBADF;  // not the object rank 0 made: refuse it
    } else {
      try {
        m_base = map_shared(fd.get(), bytes);
        m_size = bytes;
      } catch (const system_error& failure) {
        local_error = failure.errno_value();
      }
    }
  }
  int worst_error = 0;
  CACHECOMM_MPI(MPI_Allreduce(&local_error, &worst_error, 1, MPI_INT, MPI_MAX, node_comm));
  if (node_rank == 0) ::shm_unlink(name.data());
  if (worst_error != 0) {
    release();
    throw system_error("cachecomm: mapping the node's shared-memory segment", worst_error);
  }
}

shm_segment::~shm_segment() { release(); }

shm_segment::shm_segment(shm_segment&& other) noexcept
    : m_base(std::exchange(other.m_base, nullptr)), m_size(std::exchange(other.m_size, 0)) {}

shm_segment& shm_segment::operator=(shm_segment&& other) noexcept {
  if (this != &other) {
    release();
    m_base = std::exchange(other.m_base, nullptr);
    m_size = std::exchange(other.m_size, 0);
  }
  return *this;
}

void shm_segment::release() noexcept {
  if (m_base != nullptr) ::munmap(m_base, m_size);
  m_base = nullptr;
  m_size = 0;
}

void shm_segment::check_range(std::size_t offset, std::size_t length, std::size_t alignment) const {
  if (m_base == nullptr) throw usage_error("cachecomm: access to an unmapped shared segment");
  if (offset > m_size || length > m_size - offset) {
    throw invalid_argument("cachecomm: shared segment access [" + std::to_string(offset) + ", +" +
                           std::to_string(length) + ") is outside its " + std::to_string(m_size) +
                           " bytes");
  }
  auto address = reinterpret_cast<std::uintptr_t>(m_base) + offset;
  if (alignment != 0 && address % alignment != 0) {
    throw invalid_argument("cachecomm: shared segment offset " + std::to_string(offset) +
                           " is not aligned to " + std::to_string(alignment) + " bytes");
  }
}

}  // namespace cachecomm::detail
