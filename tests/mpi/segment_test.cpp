#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "cachecomm/error.hpp"
#include "shm/segment.hpp"
#include "support/shm_leak_check.hpp"

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
    if (line.find("/dev/shm/cachecomm-") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

}  // namespace

TEST(shm_segment, every_rank_sees_the_same_memory) {
  int rank = 0;
  MPI_Comm_rank(node_comm(), &rank);
  shm_segment segment(node_comm(), 4096);
  auto* words = segment.at<int>(0, 1024);
  words[rank] = rank + 100;
  MPI_Barrier(node_comm());
  int size = 0;
  MPI_Comm_size(node_comm(), &size);
  for (int peer = 0; peer < size; ++peer) EXPECT_EQ(words[peer], peer + 100);
  MPI_Barrier(node_comm());
}

TEST(shm_segment, name_is_unlinked_once_every_rank_has_mapped_it) {
  auto before = cachecomm::testing::cachecomm_segments();
  shm_segment segment(node_comm(), 1 << 16);
  MPI_Barrier(node_comm());
  EXPECT_TRUE(cachecomm::testing::leaked_segments(before).empty()) << "segment still has a name";
  // Still mapped, as a deleted file, and only this one.
  auto maps = mapped_segments();
  ASSERT_EQ(maps.size(), 1U);
  EXPECT_NE(maps[0].find("(deleted)"), std::string::npos) << maps[0];
  EXPECT_NE(maps[0].find("rw-s"), std::string::npos) << "not a shared read-write mapping: " << maps[0];
  MPI_Barrier(node_comm());
}

TEST(shm_segment, mapping_is_gone_after_destruction) {
  { shm_segment segment(node_comm(), 8192); }
  EXPECT_TRUE(mapped_segments().empty());
}

TEST(shm_segment, created_private_and_exclusive) {
  // The creation step alone: mode 0600 and O_EXCL (a second create of the same name fails).
  auto name = cachecomm::detail::random_segment_name();
  int fd = cachecomm::detail::create_exclusive_segment(name, 4096);
  ASSERT_GE(fd, 0);
  struct stat info {};
  ASSERT_EQ(::fstat(fd, &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600U);
  EXPECT_EQ(info.st_size, 4096);
  EXPECT_THROW((void)cachecomm::detail::create_exclusive_segment(name, 4096), cachecomm::system_error);
  ::close(fd);
  ::shm_unlink(name.c_str());
}

TEST(shm_segment, access_checks_name_the_problem) {
  shm_segment segment(node_comm(), 256);
  EXPECT_NO_THROW((void)segment.at<double>(248));
  try {
    (void)segment.at<double>(256);
    FAIL() << "out-of-range access allowed";
  } catch (const cachecomm::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("outside its 256 bytes"), std::string::npos) << error.what();
  }
  EXPECT_THROW((void)segment.at<double>(4), cachecomm::invalid_argument);  // misaligned
  EXPECT_THROW(shm_segment(node_comm(), 0), cachecomm::invalid_argument);
}

TEST(shm_segment, larger_than_dev_shm_is_an_error_not_a_later_sigbus) {
  struct statvfs info {};
  ASSERT_EQ(::statvfs("/dev/shm", &info), 0);
  const auto capacity = static_cast<std::size_t>(info.f_blocks) * static_cast<std::size_t>(info.f_frsize);
  if (capacity == 0) GTEST_SKIP() << "/dev/shm has no size limit";
  // More than /dev/shm can ever hold: the kernel refuses the reservation without allocating anything.
  try {
    shm_segment segment(node_comm(), capacity + (std::size_t{64} << 20));
    ADD_FAILURE() << "a segment larger than /dev/shm was created; touching it would raise SIGBUS";
  } catch (const cachecomm::system_error& error) {
    EXPECT_EQ(error.errno_value(), ENOSPC) << error.what();
  }
  EXPECT_TRUE(mapped_segments().empty());
}
