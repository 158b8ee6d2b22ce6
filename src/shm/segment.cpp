#include "shm/segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "cachecomm/error.hpp"
#include "core/mpi_check.hpp"
#include "shm/cache_line.hpp"
#include "shm/segment_objects.hpp"

namespace cachecomm::detail {

namespace {

constexpr std::size_t name_capacity = 64;
constexpr std::size_t message_capacity = 320;

// Segments up to this size are mapped with their page tables filled (MAP_POPULATE). Otherwise
// every rank takes a page fault on the first touch of each page, and the first calls of each
// algorithm and size paid them: 2 ranks on a KVM guest, the first allreduces of 16 KiB took 15 us
// against 3.3 once warm, so online selection's trial calls misjudged the candidates (settling on
// the system MPI, 3x slower). Larger segments (a big RMA window, a large CACHECOMM_COLL_REGION)
// stay lazy: filling gigabytes of page tables per rank would cost seconds at set-up.
constexpr std::size_t populated_max_bytes = std::size_t{64} << 20;

// What node rank 0 tells the others about the object it made (sent as bytes: same binary, same
// node).
struct creation_notice {
  int error = 0;  // errno of a failed creation or sizing; every rank then fails with it
  int named = 0;  // 0: a memfd reached through /proc/<pid>/fd/<fd>; 1: a /dev/shm name
  pid_t pid = 0;
  int fd = -1;
  dev_t device = 0;  // identity of the object, so nobody maps another one by mistake
  ino_t inode = 0;
  std::array<char, name_capacity> name{};
  std::array<char, message_capacity> message{};  // rank 0's reason when `error` is set
};

// One rank's outcome of a step. Every rank gathers all of them and takes the same decision.
enum outcome_kind : int { succeeded = 0, unreachable = 1, failed = 2, foreign_object = 3 };
struct step_outcome {
  int kind = succeeded;
  int error = 0;
};
struct verdict {
  outcome_kind kind = succeeded;
  int rank = 0;  // the first rank with the worst outcome
  int error = 0;
};

// Whether madvise(MADV_POPULATE_WRITE) works (Linux 5.14): it allocates a shared mapping's
// missing pages and reports a lack of memory as an error, not as a SIGBUS, so the pages it will
// populate need no reservation at set-up. The same on every rank of a node (one kernel).
bool populate_reports_errors() {
  static const bool works = [] {
#ifdef MADV_POPULATE_WRITE
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    void* probe = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe == MAP_FAILED) return false;
    const bool populated = ::madvise(probe, page, MADV_POPULATE_WRITE) == 0;
    ::munmap(probe, page);
    return populated;
#else
    return false;
#endif
  }();
  return works;
}

// The bytes set-up reserves: the leading part where populate() reserves the rest (it does so only
// for segments it populates).
std::size_t reserved_at_setup(std::size_t bytes, segment_population population) {
  if (population.leading_bytes >= bytes || bytes > populated_max_bytes ||
      !populate_reports_errors()) {
    return bytes;
  }
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return std::min(round_up(population.leading_bytes, page), bytes);
}

template <std::size_t N>
void copy_text(std::array<char, N>& target, const std::string& text) {
  std::strncpy(target.data(), text.c_str(), N - 1);
  target[N - 1] = '\0';
}

// system_error's text without the strerror suffix, to be rebuilt on the ranks that receive it.
std::string reason_of(const system_error& failure) {
  std::string text = failure.what();
  const std::string suffix = std::string(": ") + std::strerror(failure.errno_value());
  if (text.size() >= suffix.size() &&
      text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0) {
    text.resize(text.size() - suffix.size());
  }
  return text;
}

// Errnos of memfd_create meaning "not available here" (old kernel, seccomp filter), not "no
// memory".
bool memfd_unavailable(int error) {
  return error == ENOSYS || error == EPERM || error == EACCES || error == EINVAL;
}

// Errnos of opening /proc/<pid>/fd/<fd> meaning "no ptrace read access or no such process here"
// (hardened kernel, another PID namespace): the named path may still work.
bool descriptor_unreachable(int error) {
  return error == EACCES || error == EPERM || error == ENOENT;
}

void fail_from_notice(const creation_notice& notice, int node_rank) {
  if (notice.error == 0) return;
  std::string reason = notice.message.data();
  if (node_rank != 0) {
    const std::string prefix = "cachecomm: ";
    if (reason.rfind(prefix, 0) == 0) reason.erase(0, prefix.size());
    reason = "cachecomm: on node rank 0, " + reason;
  }
  throw system_error(reason, notice.error);
}

// Rank 0: makes the object (a memfd unless `named` or memfd is unavailable) and describes it.
creation_notice create_object(std::size_t bytes, bool named, file_descriptor& fd) {
  creation_notice notice;
  notice.named = named ? 1 : 0;
  try {
    check_segment_budget(bytes);
    if (!named) {
      try {
        fd = create_anonymous_segment();
      } catch (const system_error& failure) {
        if (!memfd_unavailable(failure.errno_value())) throw;
        notice.named = 1;
      }
    }
    if (notice.named != 0) {
      for (int attempt = 0; attempt < 8 && !fd.valid(); ++attempt) {
        std::string candidate = random_segment_name();
        try {
          fd = create_exclusive_segment(candidate);
          copy_text(notice.name, candidate);
        } catch (const system_error& failure) {
          if (failure.errno_value() != EEXIST || attempt == 7) throw;
        }
      }
    }
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0)
      throw system_error("cachecomm: fstat of a new shared segment", errno);
    notice.pid = ::getpid();
    notice.fd = fd.get();
    notice.device = info.st_dev;
    notice.inode = info.st_ino;
  } catch (const system_error& failure) {
    if (notice.named != 0 && notice.name[0] != '\0') ::shm_unlink(notice.name.data());
    fd.reset();
    notice.error = failure.errno_value();
    copy_text(notice.message, reason_of(failure));
  }
  return notice;
}

std::string where_from(const creation_notice& notice) {
  if (notice.named != 0) return std::string("/dev/shm") + notice.name.data();
  return "/proc/" + std::to_string(notice.pid) + "/fd/" + std::to_string(notice.fd);
}

// Ranks other than 0: opens rank 0's object and checks it is that object and still private.
step_outcome open_object(const creation_notice& notice, segment_test_hooks hooks,
                         file_descriptor& fd) {
  try {
    if (notice.named != 0) {
      fd = file_descriptor(::shm_open(notice.name.data(), O_RDWR | O_CLOEXEC, 0));
      if (!fd.valid()) return {failed, errno};
    } else {
      if (hooks.refuse_descriptor_sharing) return {unreachable, EACCES};
      fd = open_peer_descriptor(notice.pid, notice.fd);
    }
  } catch (const system_error& failure) {
    return {descriptor_unreachable(failure.errno_value()) ? unreachable : failed,
            failure.errno_value()};
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return {failed, errno};
  if (info.st_dev != notice.device || info.st_ino != notice.inode ||
      (info.st_mode & 0777) != 0600) {
    return {foreign_object, EBADF};
  }
  return {};
}

// Gathers every rank's outcome; every rank computes the same verdict from them.
verdict agree(MPI_Comm node_comm, step_outcome mine) {
  int size = 1;
  CACHECOMM_MPI(MPI_Comm_size(node_comm, &size));
  std::vector<step_outcome> all(static_cast<std::size_t>(size));
  CACHECOMM_MPI(MPI_Allgather(&mine, 2, MPI_INT, all.data(), 2, MPI_INT, node_comm));
  verdict worst;
  for (int rank = 0; rank < size; ++rank) {
    const auto& outcome = all[static_cast<std::size_t>(rank)];
    if (outcome.kind > worst.kind)
      worst = {static_cast<outcome_kind>(outcome.kind), rank, outcome.error};
  }
  return worst;
}

[[noreturn]] void fail_with(const verdict& worst, const std::string& step,
                            const creation_notice& notice) {
  const std::string who = "cachecomm: node rank " + std::to_string(worst.rank);
  if (worst.kind == foreign_object) {
    // Through /proc, a rank in another PID namespace reaches some other process's descriptor.
    const char* hint = notice.named == 0 && step == "opening"
                           ? "; are the node's ranks in different PID namespaces?"
                           : "";
    throw system_error(
        who + " " + step + " " + where_from(notice) +
            " found another object than node rank 0's private segment (device, inode, size or "
            "mode differ" +
            hint + ")",
        worst.error);
  }
  throw system_error(who + " failed " + step + " " + where_from(notice), worst.error);
}

}  // namespace

shm_segment::shm_segment(MPI_Comm node_comm, std::size_t bytes, segment_test_hooks hooks,
                         segment_population population) {
  if (bytes == 0) throw invalid_argument("cachecomm: shared segment size must be positive");
  int node_rank = 0;
  CACHECOMM_MPI(MPI_Comm_rank(node_comm, &node_rank));

  // Round 1 shares a memfd; round 2, only if some rank could not open it, a short-lived name.
  file_descriptor fd;
  creation_notice notice;
  for (bool named = node_rank == 0 && hooks.refuse_descriptor_sharing;; named = true) {
    fd.reset();
    if (node_rank == 0) notice = create_object(bytes, named, fd);
    CACHECOMM_MPI(MPI_Bcast(&notice, static_cast<int>(sizeof notice), MPI_BYTE, 0, node_comm));
    fail_from_notice(notice, node_rank);

    const step_outcome opened = node_rank == 0 ? step_outcome{} : open_object(notice, hooks, fd);
    const verdict worst = agree(node_comm, opened);
    // Every rank holds a descriptor now (or has given up): the name has done its job.
    if (node_rank == 0 && notice.named != 0) ::shm_unlink(notice.name.data());
    if (worst.kind == succeeded) break;
    if (worst.kind == unreachable && notice.named == 0) continue;
    fail_with(worst, "opening", notice);
  }

  // Sized only now, so that on the fallback path the name is gone before the slow reservation.
  if (node_rank == 0) {
    try {
      reserve_segment_memory(fd.get(), bytes, reserved_at_setup(bytes, population),
                             notice.named != 0 ? "a shared segment" : "a memfd shared segment");
    } catch (const system_error& failure) {
      notice.error = failure.errno_value();
      copy_text(notice.message, reason_of(failure));
    }
  }
  CACHECOMM_MPI(MPI_Bcast(&notice.error, 1, MPI_INT, 0, node_comm));
  CACHECOMM_MPI(MPI_Bcast(notice.message.data(), message_capacity, MPI_CHAR, 0, node_comm));
  fail_from_notice(notice, node_rank);

  step_outcome mapped;
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    mapped = {failed, errno};
  } else if (static_cast<std::size_t>(info.st_size) != bytes) {
    mapped = {foreign_object, EBADF};  // not the object rank 0 sized: refuse it
  } else {
    const std::size_t leading = std::min(population.leading_bytes, bytes);
    const int populate = leading == bytes && bytes <= populated_max_bytes ? MAP_POPULATE : 0;
    void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | populate, fd.get(), 0);
    if (base == MAP_FAILED) {
      mapped = {failed, errno};
    } else {
      m_base = base;
      m_size = bytes;
      m_sharing = notice.named != 0 ? segment_sharing::unlinked_name : segment_sharing::anonymous;
      if (populate == 0 && leading > 0 && bytes <= populated_max_bytes &&
          this->populate(0, leading) != 0) {
        mapped = {failed, ENOMEM};  // the leading part was reserved: not expected
      }
    }
  }
  // Every descriptor closes on return; the mappings keep the memory.
  const verdict worst = agree(node_comm, mapped);
  if (worst.kind != succeeded) {
    release();
    fail_with(worst, "mapping", notice);
  }
}

int shm_segment::populate(std::size_t offset, std::size_t length) const {
  check_range(offset, length, 1);
  if (length == 0 || m_size > populated_max_bytes) return 0;
  // Whole pages: the range's first and last may be shared with its neighbours.
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t first = offset / page * page;
  const std::size_t end = std::min(round_up(offset + length, page), m_size);
  std::byte* start = static_cast<std::byte*>(m_base) + first;
#ifdef MADV_POPULATE_WRITE
  if (populate_reports_errors()) {
    // Write-populating a shared mapping neither writes nor zeroes the memory: a peer's data stays.
    // A page nobody allocated yet is allocated here (reserved_at_setup left it out).
    while (::madvise(start, end - first, MADV_POPULATE_WRITE) != 0) {
      if (errno != EINTR) return errno;
    }
    return 0;
  }
#endif
  // An older kernel: set-up reserved every page, and reading maps each of them.
  for (std::size_t at = 0; at < end - first; at += page) {
    (void)*static_cast<volatile const std::byte*>(start + at);
  }
  return 0;
}

shm_segment::~shm_segment() {
  release();
}

shm_segment::shm_segment(shm_segment&& other) noexcept
    : m_base(std::exchange(other.m_base, nullptr)),
      m_size(std::exchange(other.m_size, 0)),
      m_sharing(std::exchange(other.m_sharing, segment_sharing::none)) {}

shm_segment& shm_segment::operator=(shm_segment&& other) noexcept {
  if (this != &other) {
    release();
    m_base = std::exchange(other.m_base, nullptr);
    m_size = std::exchange(other.m_size, 0);
    m_sharing = std::exchange(other.m_sharing, segment_sharing::none);
  }
  return *this;
}

void shm_segment::release() noexcept {
  if (m_base != nullptr) ::munmap(m_base, m_size);
  m_base = nullptr;
  m_size = 0;
  m_sharing = segment_sharing::none;
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
