// Internals of cachecomm::channel: per-pair rings on the node, MPI beyond it, matching by tag.
#pragma once

#include <mpi.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "core/comm_impl.hpp"
#include "p2p/ring.hpp"
#include "shm/segment.hpp"

namespace cachecomm::detail {

/// One send or receive. Shared by the request and the channel's queues until it completes.
struct p2p_operation {
  bool is_send = false;
  int peer = 0;  ///< rank in the communicator
  int tag = 0;
  const std::byte* send_data = nullptr;
  std::byte* recv_data = nullptr;
  std::size_t bytes = 0;          ///< send: message size; receive: capacity
  std::size_t message_bytes = 0;  ///< receive: size of the matched message
  std::size_t done = 0;           ///< bytes written into the ring / copied out so far
  bool started = false;           ///< data has begun to move (can no longer be cancelled)
  bool complete = false;
  std::uint32_t single_copy_ticket =
      0;  ///< send by single copy: completes when `copied` reaches it
  MPI_Request mpi = MPI_REQUEST_NULL;
  std::string failure;  ///< set when the operation completed with an error
};

/// A message that arrived before its receive was posted, kept in private memory.
struct unexpected_message {
  int tag = 0;
  std::vector<std::byte> data;
  std::size_t received = 0;
  bool complete = false;
  std::shared_ptr<p2p_operation> claimed_by;  ///< a receive posted while the message was arriving
};

/// State of this rank toward one node peer.
struct peer_link {
  int comm_rank = -1;
  int node_rank = -1;
  ring_view out;                         ///< this rank → peer
  ring_view in;                          ///< peer → this rank
  std::uint32_t produced = 0;            ///< slots written into `out`
  std::uint32_t consumed_seen = 0;       ///< last value read from out.consumed()
  std::uint32_t single_copy_sent = 0;    ///< single-copy messages posted into `out`
  std::uint32_t next_in = 0;             ///< next slot to read from `in`
  std::uint32_t consumed_published = 0;  ///< last value stored into in.consumed()
  std::uint32_t single_copy_read = 0;    ///< single-copy messages read from the peer
  std::uint32_t mail_sent = 0;           ///< messages put into out.mail()
  std::uint32_t mail_read = 0;           ///< messages taken from in.mail()
  /// A message from the peer started arriving since this rank last sent it one: the exchange looks
  /// like request and reply, where the mailbox pays off. Streams keep to the ring, where the
  /// mailbox's taken/sent round trips would only bounce its line.
  bool heard_since_send = false;
  std::deque<std::shared_ptr<p2p_operation>> pending_sends;  ///< in order, front is being written
  std::deque<std::shared_ptr<p2p_operation>>
      awaiting_copy;  ///< single-copy sends the peer still reads
  std::deque<std::shared_ptr<p2p_operation>>
      posted_receives;                       ///< not yet matched, in posting order
  std::list<unexpected_message> unexpected;  ///< in arrival order
  // The message currently arriving: into a matched receive or into an unexpected buffer.
  bool arriving = false;
  std::shared_ptr<p2p_operation> arriving_receive;
  unexpected_message* arriving_unexpected = nullptr;
  std::size_t arriving_bytes = 0;
  std::size_t arriving_done = 0;
};

class channel_impl {
 public:
  explicit channel_impl(comm_impl& owner);
  ~channel_impl();
  channel_impl(const channel_impl&) = delete;
  channel_impl& operator=(const channel_impl&) = delete;

  void send(const void* data, std::size_t bytes, int destination, int tag);
  std::size_t recv(void* data, std::size_t capacity, int source, int tag);
  std::shared_ptr<p2p_operation> start_send(const void* data, std::size_t bytes, int destination,
                                            int tag);
  std::shared_ptr<p2p_operation> start_recv(void* data, std::size_t capacity, int source, int tag);
  /// Blocks until `operation` completes; throws its failure.
  void wait(p2p_operation& operation);
  bool test(p2p_operation& operation);
  /// A request was destroyed while `operation` was in flight: cancel or complete it, and report.
  void abandon(const std::shared_ptr<p2p_operation>& operation) noexcept;
  /// Moves every pending operation forward as far as it can go without waiting.
  void progress();

  [[nodiscard]] int rank() const { return m_rank; }
  [[nodiscard]] int size() const { return m_size; }
  [[nodiscard]] bool is_local(int peer) const { return node_rank_of(peer) >= 0 && peer != m_rank; }
  [[nodiscard]] std::size_t abandoned() const { return m_abandoned; }
  [[nodiscard]] std::size_t chunk_bytes() const { return m_chunk; }
  [[nodiscard]] std::uint32_t slots() const { return m_slots; }
  [[nodiscard]] bool single_copy_enabled() const { return m_single_copy; }
  [[nodiscard]] std::size_t single_copy_threshold() const { return m_single_copy_threshold; }

 private:
  [[nodiscard]] int node_rank_of(int peer) const { return m_owner->topology().local_rank(peer); }
  void check_peer(int peer, const char* what) const;
  [[nodiscard]] bool ring_has_space(peer_link& link);
  void write_slot(peer_link& link, int tag, std::size_t message_bytes, const std::byte* data,
                  std::size_t chunk, std::uint32_t kind);
  /// Writes as much of `operation` into the ring as fits; true when all of it is written.
  bool push_send(peer_link& link, p2p_operation& operation);
  void progress_out(peer_link& link);
  void progress_in(peer_link& link);
  [[nodiscard]] static bool mail_free(const peer_link& link) {
    return link.heard_since_send &&
           link.out.reverse_mail().taken.load(std::memory_order_acquire) == link.mail_sent;
  }
  /// True when the peer's mailbox holds the next message (every ring slot written before it is
  /// read).
  [[nodiscard]] static bool mail_waiting(const peer_link& link) {
    const mailbox_half& mail = link.in.mail();
    return mail.sequence.load(std::memory_order_acquire) == link.mail_read + 1 &&
           mail.follows(link.next_in);
  }
  void write_mail(peer_link& link, int tag, std::size_t bytes, const std::byte* data);
  void take_mail(peer_link& link);
  void arrival_target(peer_link& link, std::byte*& target, std::size_t& capacity);
  void begin_arrival(peer_link& link, int tag, std::size_t message_bytes, std::uint32_t kind);
  void finish_arrival(peer_link& link);
  void read_single_copy(peer_link& link, const slot_header& header, std::byte* target,
                        std::size_t capacity);
  void consume_slot(peer_link& link);
  void help_copy(peer_link& link, std::uint32_t ticket, const std::byte* source, bool as_sender);
  void match_posted(peer_link& link, const std::shared_ptr<p2p_operation>& operation);
  [[nodiscard]] const std::uint32_t* wake_word(const p2p_operation& operation) const;

  comm_impl* m_owner = nullptr;
  mpi_comm_owner m_remote;  ///< private duplicate for traffic through MPI
  int m_rank = 0;
  int m_size = 1;
  int m_node_rank = 0;
  std::uint32_t m_slots = 0;
  std::uint32_t m_publish_every = 1;  ///< slots consumed between publications of `consumed`
  std::size_t m_chunk = 0;
  const cross_memory* m_cross = nullptr;  ///< the comm's single copy
  bool m_single_copy = false;
  std::size_t m_single_copy_threshold = 0;
  std::size_t m_shared_copy_threshold = 0;
  bool m_nontemporal = false;
  std::size_t m_nontemporal_threshold = 0;
  shm_segment m_segment;
  std::vector<peer_link> m_links;  ///< by node rank (own entry unused)
  std::vector<std::shared_ptr<p2p_operation>> m_mpi_operations;
  std::uint32_t m_idle_word = 0;  ///< futex word for waits only MPI can end (never changes)
  std::size_t m_abandoned = 0;
};

}  // namespace cachecomm::detail
