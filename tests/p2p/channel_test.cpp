// cachecomm::channel delivers every message intact and in order per pair and tag, whatever the
// size (around every protocol switch), the ring geometry, the posting order and the path.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cachecomm/cachecomm.hpp"

namespace {

// Ring geometries and protocols: default; a tiny ring (4 slots of 256 B) so that every message
// above a few hundred bytes wraps and stalls; single copy from 1 KiB, by the receiver alone or
// shared piece by piece with the sender (messages from 512 KiB); non-temporal receive copies.
struct variant {
  const char* name;
  std::vector<std::pair<const char*, const char*>> settings;
};
const std::vector<variant>& variants() {
  static const std::vector<variant> all{
      {"default", {{"CACHECOMM_SINGLE_COPY", "off"}}},
      {"tiny_ring",
       {{"CACHECOMM_P2P_SLOTS", "4"},
        {"CACHECOMM_P2P_CHUNK_BYTES", "256"},
        {"CACHECOMM_SINGLE_COPY", "off"}}},
      {"single_copy",
       {{"CACHECOMM_SINGLE_COPY", "auto"},
        {"CACHECOMM_P2P_SINGLE_COPY_BYTES", "1024"},
        {"CACHECOMM_P2P_SHARED_COPY_BYTES", "0"}}},
      {"shared_copy",
       {{"CACHECOMM_SINGLE_COPY", "auto"},
        {"CACHECOMM_P2P_SINGLE_COPY_BYTES", "1024"},
        {"CACHECOMM_P2P_SHARED_COPY_BYTES", "1"}}},
      {"nontemporal",
       {{"CACHECOMM_SINGLE_COPY", "off"}, {"CACHECOMM_P2P_NONTEMPORAL_BYTES", "4096"}}},
  };
  return all;
}

cachecomm::config settings_of(const variant& entry) {
  cachecomm::config settings = cachecomm::config::from_environment();
  for (const auto& [name, value] : entry.settings) settings.set(name, value);
  return settings;
}

std::uint8_t pattern(int source, int destination, std::size_t size, int message,
                     std::size_t index) {
  return static_cast<std::uint8_t>(source * 131 + destination * 31 + size * 7 + message * 13 +
                                   index * 5 + (index >> 8));
}

std::vector<std::uint8_t> filled(int source, int destination, std::size_t size, int message) {
  std::vector<std::uint8_t> data(size);
  for (std::size_t index = 0; index < size; ++index)
    data[index] = pattern(source, destination, size, message, index);
  return data;
}

// Index of the first wrong byte, or -1.
long first_mismatch(const std::vector<std::uint8_t>& data, int source, int destination,
                    std::size_t size, int message) {
  for (std::size_t index = 0; index < size; ++index) {
    if (data[index] != pattern(source, destination, size, message, index))
      return static_cast<long>(index);
  }
  return -1;
}

class channel_test : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    m_comm = std::make_unique<cachecomm::comm>(
        MPI_COMM_WORLD, settings_of(variants()[static_cast<std::size_t>(GetParam())]));
    m_channel = std::make_unique<cachecomm::channel>(*m_comm);
  }
  void TearDown() override {
    m_channel.reset();
    m_comm.reset();
  }
  // Sizes around every switch: 0, the inline limit, one chunk, a full ring, several rings.
  [[nodiscard]] std::vector<std::size_t> sizes() const {
    std::size_t inline_limit = m_channel->inline_limit();
    std::size_t chunk = m_channel->chunk_bytes();
    std::size_t ring = chunk * m_channel->ring_slots();
    std::vector<std::size_t> all{0,
                                 1,
                                 inline_limit - 1,
                                 inline_limit,
                                 inline_limit + 1,
                                 1000,
                                 1023,
                                 1024,
                                 1025,
                                 chunk - 1,
                                 chunk,
                                 chunk + 1,
                                 ring - 1,
                                 ring,
                                 ring + 1,
                                 2 * ring + 77};
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
  }
  std::unique_ptr<cachecomm::comm> m_comm;
  std::unique_ptr<cachecomm::channel> m_channel;
};

INSTANTIATE_TEST_SUITE_P(geometries, channel_test, ::testing::Range(0, 5), [](const auto& info) {
  return std::string(variants()[static_cast<std::size_t>(info.param)].name);
});

TEST_P(channel_test, every_pair_every_size_intact) {
  const int rank = m_channel->rank();
  const int size = m_channel->size();
  for (std::size_t bytes : sizes()) {
    std::vector<std::vector<std::uint8_t>> outgoing;
    std::vector<std::vector<std::uint8_t>> incoming(static_cast<std::size_t>(size));
    std::vector<cachecomm::request> requests;
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      incoming[static_cast<std::size_t>(peer)].assign(bytes + 8, 0xEE);
      requests.push_back(
          m_channel->irecv(incoming[static_cast<std::size_t>(peer)].data(), bytes + 8, peer, 7));
    }
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      outgoing.push_back(filled(rank, peer, bytes, 0));
      requests.push_back(m_channel->isend(outgoing.back().data(), bytes, peer, 7));
    }
    cachecomm::channel::wait_all(requests);
    std::size_t index = 0;
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      EXPECT_EQ(requests[index++].bytes(), bytes) << "message size from rank " << peer;
      auto& data = incoming[static_cast<std::size_t>(peer)];
      EXPECT_EQ(first_mismatch(data, peer, rank, bytes, 0), -1)
          << bytes << " bytes from rank " << peer;
      EXPECT_EQ(data[bytes], 0xEE) << "wrote past the message of " << bytes << " bytes";
    }
  }
}

TEST_P(channel_test, blocking_ring_exchange_by_size) {
  // Rank r sends to r+1 and receives from r-1 with blocking calls; even ranks send first.
  const int rank = m_channel->rank();
  const int size = m_channel->size();
  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  for (std::size_t bytes : sizes()) {
    auto outgoing = filled(rank, next, bytes, 1);
    std::vector<std::uint8_t> incoming(bytes, 0);
    if (rank % 2 == 0) {
      m_channel->send(outgoing.data(), bytes, next, 3);
      EXPECT_EQ(m_channel->recv(incoming.data(), bytes, previous, 3), bytes);
    } else {
      EXPECT_EQ(m_channel->recv(incoming.data(), bytes, previous, 3), bytes);
      m_channel->send(outgoing.data(), bytes, next, 3);
    }
    EXPECT_EQ(first_mismatch(incoming, previous, rank, bytes, 1), -1) << bytes << " bytes";
  }
}

TEST_P(channel_test, order_per_pair_and_tag) {
  // Every rank sends 60 messages to every peer, tags cycling 1,2,3; the receiver takes tag 3 first,
  // then tag 1, then tag 2, so earlier messages wait as unexpected. Each tag's stream stays in
  // order.
  const int rank = m_channel->rank();
  const int size = m_channel->size();
  constexpr int messages = 60;
  const std::size_t large = m_channel->chunk_bytes() + 100;
  std::vector<std::vector<std::uint8_t>> payloads;
  std::vector<cachecomm::request> sends;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    for (int message = 0; message < messages; ++message) {
      std::size_t bytes = message % 7 == 0 ? large : 8 + static_cast<std::size_t>(message);
      payloads.push_back(filled(rank, peer, bytes, message));
      sends.push_back(m_channel->isend(payloads.back().data(), bytes, peer, 1 + message % 3));
    }
  }
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    for (int tag : {3, 1, 2}) {
      for (int message = tag - 1; message < messages; message += 3) {
        std::size_t bytes = message % 7 == 0 ? large : 8 + static_cast<std::size_t>(message);
        std::vector<std::uint8_t> data(large);
        ASSERT_EQ(m_channel->recv(data.data(), large, peer, tag), bytes)
            << "message " << message << " tag " << tag;
        EXPECT_EQ(first_mismatch(data, peer, rank, bytes, message), -1)
            << "message " << message << " from " << peer;
      }
    }
  }
  cachecomm::channel::wait_all(sends);
}

TEST_P(channel_test, any_tag_takes_the_next_message) {
  const int rank = m_channel->rank();
  const int size = m_channel->size();
  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  std::vector<int> values{10, 20, 30};
  std::vector<cachecomm::request> sends;
  for (int index = 0; index < 3; ++index)
    sends.push_back(
        m_channel->isend(&values[static_cast<std::size_t>(index)], sizeof(int), next, 5 + index));
  for (int index = 0; index < 3; ++index) {
    int value = 0;
    m_channel->recv(&value, sizeof value, previous, cachecomm::any_tag);
    EXPECT_EQ(value, values[static_cast<std::size_t>(index)]);
  }
  cachecomm::channel::wait_all(sends);
}

TEST_P(channel_test, many_outstanding_requests_waited_in_reverse) {
  const int rank = m_channel->rank();
  const int size = m_channel->size();
  constexpr int messages = 150;
  std::vector<std::vector<std::uint8_t>> outgoing;
  std::vector<std::vector<std::uint8_t>> incoming;
  std::vector<std::pair<int, int>> incoming_origin;
  std::vector<cachecomm::request> requests;
  auto size_of = [](int message) { return static_cast<std::size_t>((message * 977) % 5000); };
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    for (int message = 0; message < messages; ++message) {
      incoming.emplace_back(size_of(message));
      incoming_origin.emplace_back(peer, message);
      requests.push_back(m_channel->irecv(incoming.back().data(), size_of(message), peer, 11));
      outgoing.push_back(filled(rank, peer, size_of(message), message));
      requests.push_back(m_channel->isend(outgoing.back().data(), size_of(message), peer, 11));
    }
  }
  for (auto entry = requests.rbegin(); entry != requests.rend(); ++entry) entry->wait();
  for (std::size_t index = 0; index < incoming.size(); ++index) {
    auto [peer, message] = incoming_origin[index];
    EXPECT_EQ(first_mismatch(incoming[index], peer, rank, size_of(message), message), -1)
        << "message " << message << " from rank " << peer;
  }
}

TEST_P(channel_test, sender_first_and_receiver_first) {
  const int rank = m_channel->rank();
  const int size = m_channel->size();
  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  for (bool sender_first : {true, false}) {
    for (std::size_t bytes : {std::size_t{8}, m_channel->chunk_bytes() * 3 + 5}) {
      auto outgoing = filled(rank, next, bytes, 2);
      std::vector<std::uint8_t> incoming(bytes);
      cachecomm::request send;
      cachecomm::request receive;
      if (sender_first) {
        send = m_channel->isend(outgoing.data(), bytes, next, 9);
        MPI_Barrier(MPI_COMM_WORLD);
        receive = m_channel->irecv(incoming.data(), bytes, previous, 9);
      } else {
        receive = m_channel->irecv(incoming.data(), bytes, previous, 9);
        MPI_Barrier(MPI_COMM_WORLD);
        send = m_channel->isend(outgoing.data(), bytes, next, 9);
      }
      while (!receive.test()) {
        (void)send.test();
      }
      send.wait();
      EXPECT_FALSE(receive.active());
      EXPECT_EQ(first_mismatch(incoming, previous, rank, bytes, 2), -1)
          << bytes << (sender_first ? " sender first" : " receiver first");
    }
  }
}

TEST_P(channel_test, small_messages_through_mailbox_and_ring_stay_in_order) {
  // Small messages take the pair's mailbox line when the peer has sent something since and took the
  // previous one, the ring otherwise; sizes around the inline limit and a receiver lagging by a
  // varying number of messages make the two places interleave (at 2 ranks, where next = previous).
  // The receiver must still see every message once, in order.
  const int rank = m_channel->rank();
  const int size = m_channel->size();
  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  constexpr int messages = 3000;
  const std::size_t limit = m_channel->inline_limit();
  auto bytes_of = [&](int message) {
    return static_cast<std::size_t>(message % static_cast<int>(limit + 4));
  };
  std::vector<std::uint8_t> incoming(limit + 4);
  int received = 0;
  auto receive_one = [&] {
    const int message = received++;
    ASSERT_EQ(m_channel->recv(incoming.data(), incoming.size(), previous, 1 + message % 2),
              bytes_of(message))
        << "message " << message;
    incoming.resize(bytes_of(message));
    EXPECT_EQ(first_mismatch(incoming, previous, rank, bytes_of(message), message), -1)
        << "message " << message;
    incoming.resize(limit + 4);
  };
  for (int message = 0; message < messages; ++message) {
    auto outgoing = filled(rank, next, bytes_of(message), message);
    m_channel->send(outgoing.data(), outgoing.size(), next, 1 + message % 2);
    const int lag = (message / 100) % 5;
    while (received < message - lag) receive_one();
  }
  while (received < messages) receive_one();
}

TEST_P(channel_test, truncation_is_an_error_and_the_stream_goes_on) {
  const int rank = m_channel->rank();
  const int size = m_channel->size();
  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  // 3000 B stays below Open MPI's eager limit: a truncated rendezvous receive in Open MPI 4.1
  // (vader, 5000 B) corrupted the heap, so the MPI path is only checked where MPI handles it.
  auto large = filled(rank, next, 3000, 3);
  int after = 42;
  auto first = m_channel->isend(large.data(), large.size(), next, 4);
  auto second = m_channel->isend(&after, sizeof after, next, 4);
  std::vector<std::uint8_t> small(100);
  EXPECT_THROW(m_channel->recv(small.data(), small.size(), previous, 4),
               cachecomm::invalid_argument);
  int value = 0;
  EXPECT_EQ(m_channel->recv(&value, sizeof value, previous, 4), sizeof value);
  EXPECT_EQ(value, 42);
  first.wait();
  second.wait();
}

TEST_P(channel_test, abandoned_request_is_reported_and_cancelled) {
  const int rank = m_channel->rank();
  const int size = m_channel->size();
  const int previous = (rank + size - 1) % size;
  const int next = (rank + 1) % size;
  int never = 0;
  ::testing::internal::CaptureStderr();
  { cachecomm::request forgotten = m_channel->irecv(&never, sizeof never, previous, 77); }
  std::string reported = ::testing::internal::GetCapturedStderr();
  MPI_Barrier(MPI_COMM_WORLD);  // no rank sends tag 77 before every rank has dropped its receive
  EXPECT_EQ(m_channel->abandoned_requests(), 1U);
  EXPECT_NE(reported.find("destroyed a request"), std::string::npos) << reported;
  // The channel still works, and the cancelled receive did not take the next message.
  int value = rank;
  m_channel->send(&value, sizeof value, next, 77);
  int received = -1;
  m_channel->recv(&received, sizeof received, previous, 77);
  EXPECT_EQ(received, previous);
  EXPECT_EQ(never, 0);
}

TEST(channel_arguments, bad_ranks_and_tags_are_rejected) {
  cachecomm::comm comm(MPI_COMM_WORLD);
  cachecomm::channel channel(comm);
  int value = 0;
  EXPECT_THROW(channel.send(&value, sizeof value, channel.size(), 0), cachecomm::invalid_argument);
  EXPECT_THROW((void)channel.irecv(&value, sizeof value, -1, 0), cachecomm::invalid_argument);
  EXPECT_THROW(channel.send(&value, sizeof value, 0, -5), cachecomm::invalid_argument);
}

}  // namespace
