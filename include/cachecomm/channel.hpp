// cachecomm::channel: point-to-point messages between the ranks of a communicator. Ranks on the
// same node talk through one shared-memory ring per ordered pair; ranks on other nodes through MPI.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace cachecomm {

class comm;

namespace detail {
class channel_impl;
struct p2p_operation;
}  // namespace detail

/// Matches a message of any tag (receives only).
inline constexpr int any_tag = -1;

/// A send or receive in flight. Move-only. Destroying a request that has not completed is an error
/// the channel reports on stderr and counts (channel::abandoned_requests): an operation that has
/// not started moving data is cancelled, one that has is completed first, so no buffer is touched
/// later.
class request {
 public:
  request() = default;
  ~request();
  request(const request&) = delete;
  request& operator=(const request&) = delete;
  request(request&& other) noexcept;
  request& operator=(request&& other) noexcept;

  /// Blocks until the operation completes. Throws invalid_argument when a received message was
  /// larger than the buffer (the message is consumed), peer_failure when the peer died.
  void wait();
  /// Makes progress; true once the operation has completed (then wait() returns at once).
  [[nodiscard]] bool test();
  /// True while the request holds an operation that has not been waited for.
  [[nodiscard]] bool active() const { return m_operation != nullptr; }
  /// Bytes of the message (receives: as sent; known once complete).
  [[nodiscard]] std::size_t bytes() const { return m_bytes; }

 private:
  friend class channel;
  request(detail::channel_impl* owner, std::shared_ptr<detail::p2p_operation> operation);
  void finish();

  detail::channel_impl* m_channel = nullptr;
  std::shared_ptr<detail::p2p_operation> m_operation;
  std::size_t m_bytes = 0;
};

/// Point-to-point channel over a communicator. Messages between a pair of ranks with the same tag
/// arrive in the order they were sent. Built collectively; must outlive its requests.
class channel {
 public:
  /// Collective over `communicator`.
  explicit channel(comm& communicator);
  ~channel();
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;
  channel(channel&&) noexcept;
  channel& operator=(channel&&) noexcept;

  /// Returns once `data` may be reused (small messages: once copied into the peer's ring).
  void send(const void* data, std::size_t bytes, int destination, int tag);
  /// Returns the size of the message received (at most `capacity`; larger ones throw).
  std::size_t recv(void* data, std::size_t capacity, int source, int tag);
  [[nodiscard]] request isend(const void* data, std::size_t bytes, int destination, int tag);
  [[nodiscard]] request irecv(void* data, std::size_t capacity, int source, int tag);
  /// Waits for every active request of `requests`.
  static void wait_all(std::span<request> requests);

  [[nodiscard]] int rank() const;
  [[nodiscard]] int size() const;
  /// How messages to `peer` travel: "shared-memory ring" or "mpi".
  [[nodiscard]] std::string path_to(int peer) const;
  /// Requests destroyed before completion so far (each was also reported on stderr).
  [[nodiscard]] std::size_t abandoned_requests() const;
  /// Largest message carried inline in the flag's cache line, and the ring's chunk size.
  [[nodiscard]] std::size_t inline_limit() const;
  [[nodiscard]] std::size_t chunk_bytes() const;
  [[nodiscard]] std::size_t ring_slots() const;

  [[nodiscard]] detail::channel_impl& impl() const { return *m_impl; }

 private:
  std::unique_ptr<detail::channel_impl> m_impl;
};

}  // namespace cachecomm
