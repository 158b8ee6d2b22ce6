#include <fcntl.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cachecomm/cachecomm.hpp"
#include "shm/segment.hpp"
#include "shm/segment_objects.hpp"
#include "support/shm_leak_check.hpp"

using cachecomm::detail::segment_sharing;
using cachecomm::detail::segment_test_hooks;
using cachecomm::detail::shm_segment;

namespace {

MPI_Comm node_comm() {
  static MPI_Comm node = [] {
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &comm);
    return comm;
  }();
  return node;
}

// Lines of /proc/self/maps that map one of our segments.
std::vector<std::string> mapped_segments() {
  std::vector<std::string> lines;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (cachecomm::testing::names_a_segment(line)) lines.push_back(line);
  }
  return lines;
}

// Every rank writes its own word and reads everyone's.
void expect_shared_contents(const shm_segment& segment) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(node_comm(), &rank);
  MPI_Comm_size(node_comm(), &size);
  auto* words = segment.at<int>(0, static_cast<std::size_t>(size));
  words[rank] = rank + 100;
  MPI_Barrier(node_comm());
  for (int peer = 0; peer < size; ++peer)
    EXPECT_EQ(words[peer], peer + 100) << "word of node rank " << peer;
  MPI_Barrier(node_comm());
}

// Watches /dev/shm for new entries with our prefix (IN_CREATE) on node rank 0; every rank learns
// how many appeared.
class dev_shm_watch {
 public:
  dev_shm_watch() {
    if (node_rank() == 0) {
      m_fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
      if (m_fd >= 0 && ::inotify_add_watch(m_fd, "/dev/shm", IN_CREATE) < 0) {
        ::close(m_fd);
        m_fd = -1;
      }
    }
    int ok = node_rank() != 0 || m_fd >= 0 ? 1 : 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, node_comm());
    m_watching = ok != 0;
    MPI_Barrier(node_comm());  // nobody creates anything before the watch is in place
  }
  ~dev_shm_watch() {
    if (m_fd >= 0) ::close(m_fd);
  }
  dev_shm_watch(const dev_shm_watch&) = delete;
  dev_shm_watch& operator=(const dev_shm_watch&) = delete;
  [[nodiscard]] bool watching() const { return m_watching; }

  /// Collective: entries named cachecomm-* created since the watch began.
  std::vector<std::string> created_names() {
    MPI_Barrier(node_comm());
    std::vector<std::string> names;
    std::string joined;
    if (m_fd >= 0) {
      alignas(inotify_event) std::array<char, 16384> buffer{};
      for (;;) {
        ssize_t got = ::read(m_fd, buffer.data(), buffer.size());
        if (got <= 0) break;
        for (ssize_t at = 0; at < got;) {
          const auto* event = reinterpret_cast<const inotify_event*>(buffer.data() + at);
          std::string name = event->len > 0 ? std::string(event->name) : std::string();
          if (name.rfind("cachecomm-", 0) == 0) joined += name + "\n";
          at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        }
      }
    }
    int length = static_cast<int>(joined.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, node_comm());
    joined.resize(static_cast<std::size_t>(length));
    MPI_Bcast(joined.data(), length, MPI_CHAR, 0, node_comm());
    for (std::size_t start = 0; start < joined.size();) {
      std::size_t end = joined.find('\n', start);
      names.push_back(joined.substr(start, end - start));
      start = end + 1;
    }
    return names;
  }

 private:
  static int node_rank() {
    int rank = 0;
    MPI_Comm_rank(node_comm(), &rank);
    return rank;
  }
  int m_fd = -1;
  bool m_watching = false;
};

// Builds every kind of node segment the library makes: bare segments, a communicator's control
// segment, the collectives', a channel's and a window's.
void build_every_kind_of_segment() {
  for (std::size_t bytes : {std::size_t{64}, std::size_t{4096}, std::size_t{1} << 20}) {
    shm_segment segment(node_comm(), bytes);
    EXPECT_EQ(segment.sharing(), segment_sharing::anonymous);
  }
  cachecomm::comm comm(MPI_COMM_WORLD);
  double value = 1.0;
  cachecomm::allreduce(comm, cachecomm::in_place, &value, 1, cachecomm::datatype::float64,
                       cachecomm::reduce_op::sum);
  EXPECT_EQ(value, static_cast<double>(comm.size()));
  cachecomm::channel channel(comm);
  cachecomm::window window(comm, 4096, sizeof(double));
  comm.barrier();
}

}  // namespace

TEST(shm_segment, every_rank_sees_the_same_memory) {
  shm_segment segment(node_comm(), 4096);
  expect_shared_contents(segment);
}

TEST(shm_segment, never_has_a_name_in_dev_shm) {
  // A job running beside this one (another test, another checkout) may create a cachecomm entry
  // while we watch; only a name seen in every attempt is ours.
  std::vector<std::string> seen;
  for (int attempt = 0; attempt < 5; ++attempt) {
    dev_shm_watch watch;
    if (!watch.watching()) {
      GTEST_SKIP() << "cannot watch /dev/shm with inotify";
    }
    build_every_kind_of_segment();
    seen = watch.created_names();
    if (seen.empty()) break;
  }
  for (const auto& name : seen)
    ADD_FAILURE() << "/dev/shm/" << name << " appeared while segments were built";
}

TEST(shm_segment, memory_is_a_private_memfd_mapped_as_a_deleted_file) {
  shm_segment segment(node_comm(), 1 << 16);
  EXPECT_EQ(segment.sharing(), segment_sharing::anonymous);
  // Mapped once, as a deleted memfd, shared and writable.
  auto maps = mapped_segments();
  ASSERT_EQ(maps.size(), 1U);
  EXPECT_NE(maps[0].find("/memfd:cachecomm-segment (deleted)"), std::string::npos) << maps[0];
  EXPECT_NE(maps[0].find("rw-s"), std::string::npos)
      << "not a shared read-write mapping: " << maps[0];
  MPI_Barrier(node_comm());
}

TEST(shm_segment, forced_fallback_on_one_rank_moves_every_rank_to_a_name_it_unlinks) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(node_comm(), &rank);
  MPI_Comm_size(node_comm(), &size);
  // Only the last rank "cannot open /proc/<pid>/fd": all must agree to fall back (at one rank,
  // rank 0 itself refuses and goes straight to the named path).
  segment_test_hooks hooks;
  hooks.refuse_descriptor_sharing = rank == size - 1;
  auto before = cachecomm::testing::cachecomm_segments();
  dev_shm_watch watch;
  {
    shm_segment segment(node_comm(), 1 << 16, hooks);
    EXPECT_EQ(segment.sharing(), segment_sharing::unlinked_name);
    expect_shared_contents(segment);
    auto maps = mapped_segments();
    EXPECT_EQ(maps.size(), 1U);
    for (const auto& line : maps) {
      EXPECT_NE(line.find("/dev/shm/cachecomm-"), std::string::npos) << line;
      EXPECT_NE(line.find("(deleted)"), std::string::npos) << "name not unlinked: " << line;
    }
    // The name is gone while the segment is still in use.
    EXPECT_TRUE(cachecomm::testing::leaked_segments(before).empty()) << "segment still has a name";
    MPI_Barrier(node_comm());
  }
  if (watch.watching()) {
    EXPECT_FALSE(watch.created_names().empty()) << "the fallback never created a name";
  }
}

TEST(shm_segment, forced_fallback_on_every_rank_uses_a_name) {
  segment_test_hooks hooks;
  hooks.refuse_descriptor_sharing = true;
  auto before = cachecomm::testing::cachecomm_segments();
  shm_segment segment(node_comm(), 4096, hooks);
  EXPECT_EQ(segment.sharing(), segment_sharing::unlinked_name);
  expect_shared_contents(segment);
  EXPECT_TRUE(cachecomm::testing::leaked_segments(before).empty()) << "segment still has a name";
}

TEST(shm_segment, moved_segments_keep_their_mapping_and_sharing) {
  shm_segment first(node_comm(), 4096);
  void* base = first.data();
  shm_segment second(std::move(first));
  EXPECT_EQ(first.data(),
            nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_EQ(first.sharing(), segment_sharing::none);
  EXPECT_EQ(second.data(), base);
  EXPECT_EQ(second.sharing(), segment_sharing::anonymous);
  shm_segment third;
  third = std::move(second);
  EXPECT_EQ(third.data(), base);
  EXPECT_EQ(mapped_segments().size(), 1U);
  MPI_Barrier(node_comm());
}

// This rank's resident pages of the mapping that starts at `base` (/proc/self/smaps: pages whose
// page tables are filled, the segment's memory being allocated whole when it is sized).
std::size_t resident_bytes(const void* base) {
  std::ifstream smaps("/proc/self/smaps");
  const auto start = reinterpret_cast<std::uintptr_t>(base);
  bool in_mapping = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t low = 0;
    std::uintptr_t high = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &low, &high) == 2) {  // a mapping's first line
      in_mapping = low == start;
    } else if (in_mapping && line.rfind("Rss:", 0) == 0) {
      return std::stoul(line.substr(4)) * 1024;
    }
  }
  ADD_FAILURE() << "no mapping at " << base << " in /proc/self/smaps";
  return 0;
}

TEST(shm_segment, only_the_leading_bytes_are_populated_until_asked) {
  constexpr std::size_t bytes = std::size_t{4} << 20;
  constexpr std::size_t leading = 64 << 10;
  shm_segment segment(node_comm(), bytes, {}, {.leading_bytes = leading});
  EXPECT_GE(resident_bytes(segment.data()), leading);
  EXPECT_LT(resident_bytes(segment.data()), bytes / 2);
  // Every rank's word is written before the others populate: populating keeps what is there.
  expect_shared_contents(segment);
  auto* words = segment.at<int>(0, 1);
  MPI_Barrier(node_comm());
  EXPECT_EQ(segment.populate(0, bytes), 0);
  EXPECT_EQ(resident_bytes(segment.data()), bytes);
  EXPECT_EQ(words[0], 100);
  MPI_Barrier(node_comm());
  // By default the whole segment is populated at once.
  shm_segment whole(node_comm(), bytes);
  EXPECT_EQ(resident_bytes(whole.data()), bytes);
  MPI_Barrier(node_comm());
}

TEST(shm_segment, mapping_is_gone_after_destruction) {
  { shm_segment segment(node_comm(), 8192); }
  EXPECT_TRUE(mapped_segments().empty());
}

TEST(shm_segment, memfd_is_private_whatever_the_umask) {
  const mode_t previous = ::umask(0);
  auto fd = cachecomm::detail::create_anonymous_segment();
  ::umask(previous);
  cachecomm::detail::reserve_segment_memory(fd.get(), 4096, 4096, "a test memfd");
  struct stat info {};
  ASSERT_EQ(::fstat(fd.get(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600U);
  EXPECT_EQ(info.st_size, 4096);
  // What a peer does: reopen it through /proc; it is the same object.
  auto reopened = cachecomm::detail::open_peer_descriptor(::getpid(), fd.get());
  struct stat again {};
  ASSERT_EQ(::fstat(reopened.get(), &again), 0);
  EXPECT_EQ(again.st_ino, info.st_ino);
  EXPECT_EQ(again.st_dev, info.st_dev);
  EXPECT_NE(::fcntl(reopened.get(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST(shm_segment, opening_a_missing_peer_descriptor_names_the_path) {
  try {
    (void)cachecomm::detail::open_peer_descriptor(::getpid(), 987654);
    FAIL() << "opened a descriptor that does not exist";
  } catch (const cachecomm::system_error& error) {
    EXPECT_EQ(error.errno_value(), ENOENT);
    EXPECT_NE(std::string(error.what()).find("/fd/987654"), std::string::npos) << error.what();
  }
}

TEST(shm_segment, named_fallback_object_is_private_and_exclusive) {
  // The creation step alone: mode 0600 and O_EXCL (a second create of the same name fails).
  const mode_t previous = ::umask(0);
  auto name = cachecomm::detail::random_segment_name();
  auto fd = cachecomm::detail::create_exclusive_segment(name);
  ::umask(previous);
  ASSERT_TRUE(fd.valid());
  struct stat info {};
  ASSERT_EQ(::fstat(fd.get(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600U);
  EXPECT_THROW((void)cachecomm::detail::create_exclusive_segment(name), cachecomm::system_error);
  ::shm_unlink(name.c_str());
}

TEST(shm_segment, access_checks_name_the_problem) {
  shm_segment segment(node_comm(), 256);
  EXPECT_NO_THROW((void)segment.at<double>(248));
  try {
    (void)segment.at<double>(256);
    FAIL() << "out-of-range access allowed";
  } catch (const cachecomm::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("outside its 256 bytes"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW((void)segment.at<double>(4), cachecomm::invalid_argument);  // misaligned
  EXPECT_THROW(shm_segment(node_comm(), 0), cachecomm::invalid_argument);
}

TEST(shm_segment, larger_than_dev_shm_is_an_error_not_a_later_sigbus) {
  struct statvfs info {};
  ASSERT_EQ(::statvfs("/dev/shm", &info), 0);
  const auto capacity =
      static_cast<std::size_t>(info.f_blocks) * static_cast<std::size_t>(info.f_frsize);
  if (capacity == 0) GTEST_SKIP() << "/dev/shm has no size limit";
  // More than /dev/shm can ever hold: the kernel refuses the reservation without allocating
  // anything.
  try {
    shm_segment segment(node_comm(), capacity + (std::size_t{64} << 20));
    ADD_FAILURE() << "a segment larger than /dev/shm was created; touching it would raise SIGBUS";
  } catch (const cachecomm::system_error& error) {
    EXPECT_EQ(error.errno_value(), ENOSPC) << error.what();
    // Every rank reports rank 0's reason, and the others say whose it is.
    const std::string text = error.what();
    EXPECT_NE(text.find("does not fit in the"), std::string::npos) << text;
    int rank = 0;
    MPI_Comm_rank(node_comm(), &rank);
    if (rank != 0) {
      EXPECT_NE(text.find("on node rank 0, "), std::string::npos) << text;
    }
  }
  EXPECT_TRUE(mapped_segments().empty());
}
