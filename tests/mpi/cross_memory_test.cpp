// Single copy (src/shm/cross_memory): one probe per comm shared by the collectives and the
// channel, one setting, one copy loop, one error.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cachecomm/cachecomm.hpp"
#include "coll/coll_engine.hpp"
#include "core/comm_impl.hpp"
#include "p2p/channel_impl.hpp"

using cachecomm::detail::cross_memory;

namespace {

cachecomm::config with(const char* name, const char* value) {
  cachecomm::config settings = cachecomm::config::from_environment();
  settings.set(name, value);
  return settings;
}

// Every node rank's value of `mine`, in node rank order.
std::vector<std::uint64_t> node_gather(cachecomm::comm& c, std::uint64_t mine) {
  std::vector<std::uint64_t> all(static_cast<std::size_t>(c.topology().node_size));
  MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, c.impl().node());
  return all;
}

std::uint64_t address_of(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer);
}

TEST(cross_memory, one_probe_serves_the_collectives_and_the_channel) {
  cachecomm::comm c;
  const cross_memory& probed = c.impl().single_copy();
  cachecomm::channel ch(c);
  auto& engine = cachecomm::detail::coll_engine::of(c.impl());
  EXPECT_EQ(&c.impl().single_copy(), &probed) << "the probe ran again";
  EXPECT_EQ(engine.single_copy_available(), probed.can_read());
  EXPECT_EQ(engine.single_copy_push_available(), probed.can_read() && probed.can_write());
  EXPECT_EQ(ch.impl().single_copy_enabled(), probed.can_read());
  if (c.topology().node_size == 1) {
    EXPECT_EQ(probed.features(), 0U);
  }
}

TEST(cross_memory, copies_from_and_to_every_node_peer) {
  cachecomm::comm c;
  const cross_memory& cross = c.impl().single_copy();
  const int size = c.topology().node_size;
  const int me = c.topology().node_rank;
  if (!cross.can_read() || !cross.can_write()) GTEST_SKIP() << "cross-memory attach refused here";
  // More than one page, at an odd offset, so the copy crosses page boundaries unaligned.
  constexpr std::size_t bytes = (3U << 20) + 13;
  std::vector<std::byte> source(bytes + 1);
  std::vector<std::byte> inbox(bytes * static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < bytes; ++i)
    source[i + 1] = static_cast<std::byte>((i * 7 + static_cast<std::size_t>(me)) & 0xffU);
  const auto sources = node_gather(c, address_of(source.data() + 1));
  const auto inboxes = node_gather(c, address_of(inbox.data()));
  std::vector<std::byte> pulled(bytes);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == me) continue;
    ASSERT_EQ(cross.copy_from(peer, pulled.data(), sources[static_cast<std::size_t>(peer)], bytes),
              0);
    for (std::size_t i = 0; i < bytes; i += 4093) {
      ASSERT_EQ(pulled[i], static_cast<std::byte>((i * 7 + static_cast<std::size_t>(peer)) & 0xffU))
          << "byte " << i << " from node rank " << peer;
    }
    // Into this rank's own slice of the peer's inbox.
    ASSERT_EQ(cross.copy_to(
                  peer, source.data() + 1,
                  inboxes[static_cast<std::size_t>(peer)] + static_cast<std::uint64_t>(me) * bytes,
                  bytes),
              0);
  }
  MPI_Barrier(c.impl().node());
  for (int peer = 0; peer < size; ++peer) {
    if (peer == me) continue;
    const std::byte* slice = inbox.data() + static_cast<std::size_t>(peer) * bytes;
    EXPECT_EQ(slice[bytes - 1],
              static_cast<std::byte>(((bytes - 1) * 7 + static_cast<std::size_t>(peer)) & 0xffU))
        << "node rank " << peer << " wrote into this rank's buffer";
    EXPECT_EQ(slice[0], static_cast<std::byte>(peer & 0xff));
  }
  MPI_Barrier(c.impl().node());  // every write into this rank's inbox is done before it goes
}

TEST(cross_memory, a_failed_copy_returns_its_errno_and_reads_the_same_everywhere) {
  cachecomm::comm c;
  const cross_memory& cross = c.impl().single_copy();
  const int size = c.topology().node_size;
  std::uint64_t word = 0;
  // No such node rank: the copy cannot start.
  EXPECT_EQ(cross.copy_from(size, &word, address_of(&word), sizeof word), ESRCH);
  if (!cross.can_read()) GTEST_SKIP() << "cross-memory attach refused here";
  const int peer = (c.topology().node_rank + 1) % size;
  // Page 0 is never mapped.
  EXPECT_EQ(cross.copy_from(peer, &word, 8, sizeof word), EFAULT);
  EXPECT_EQ(cross.copy_to(peer, &word, 8, sizeof word), EFAULT);
  const auto failure = cachecomm::detail::cross_memory_failure("a test", false, peer, EFAULT);
  EXPECT_EQ(failure.errno_value(), EFAULT);
  EXPECT_EQ(std::string(failure.what()), "cachecomm: a test: process_vm_readv from node rank " +
                                             std::to_string(peer) +
                                             " failed: " + std::strerror(EFAULT));
  const auto write_failure = cachecomm::detail::cross_memory_failure("x", true, 3, EPERM);
  EXPECT_NE(std::string(write_failure.what()).find("process_vm_writev to node rank 3"),
            std::string::npos);
}

TEST(cross_memory, off_turns_it_off_for_collectives_and_channel) {
  cachecomm::comm c(MPI_COMM_WORLD, with("CACHECOMM_SINGLE_COPY", "off"));
  cachecomm::channel ch(c);
  EXPECT_EQ(c.impl().single_copy().features(), 0U);
  EXPECT_FALSE(cachecomm::single_copy_available(c));
  EXPECT_FALSE(ch.impl().single_copy_enabled());
  // Broadcast and allgather by single copy still run (through shared memory).
  std::vector<int> data(70000, c.rank() == 0 ? 5 : 0);
  cachecomm::broadcast(c, data.data(), data.size(), cachecomm::datatype::int32, 0,
                       cachecomm::broadcast_algorithm::single_copy);
  EXPECT_EQ(data.back(), 5);
}

TEST(cross_memory, the_old_channel_name_still_works_unless_the_new_one_is_set) {
  using cachecomm::detail::single_copy_mode;
  using cachecomm::detail::single_copy_mode_of;
  EXPECT_EQ(single_copy_mode_of(with("CACHECOMM_P2P_SINGLE_COPY", "off")), single_copy_mode::off);
  cachecomm::config both = with("CACHECOMM_P2P_SINGLE_COPY", "off");
  both.set("CACHECOMM_SINGLE_COPY", "auto");
  EXPECT_EQ(single_copy_mode_of(both), single_copy_mode::automatic);
  // The collectives' old spellings.
  EXPECT_EQ(single_copy_mode_of(with("CACHECOMM_SINGLE_COPY", "0")), single_copy_mode::off);
  EXPECT_EQ(single_copy_mode_of(with("CACHECOMM_SINGLE_COPY", "1")), single_copy_mode::automatic);
  EXPECT_EQ(single_copy_mode_of(with("CACHECOMM_SINGLE_COPY", "on")), single_copy_mode::on);
  try {
    (void)single_copy_mode_of(with("CACHECOMM_SINGLE_COPY", "sometimes"));
    FAIL() << "no error for a bad value";
  } catch (const cachecomm::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("CACHECOMM_SINGLE_COPY='sometimes'"),
              std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("auto, on, off"), std::string::npos) << error.what();
  }
}

}  // namespace
