
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "cachecomm/channel.hpp"
#include "cachecomm/comm.hpp"
#include "cachecomm/error.hpp"
#include "core/mpi_check.hpp"
#include "p2p/channel_impl.hpp"
#include "p2p/copy.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm {

namespace {
const detail::setting<long long> slots_setting{
    "CACHECOMM_P2P_SLOTS",
    32,
    "Slots in each per-pair ring of a channel (messages or chunks in flight; a power of two).",
    {.min = 2, .max = 65536, .power_of_two = true}};
const detail::setting<long long> chunk_setting{
    "CACHECOMM_P2P_CHUNK_BYTES",
    32768,
    "Bytes per ring slot: large messages are pipelined in chunks of this size.",
    {.min = 64, .max = 1LL << 30, .multiple_of = 64}};
const detail::setting<long long> single_copy_bytes_setting{
    "CACHECOMM_P2P_SINGLE_COPY_BYTES",
    16384,
    "Smallest message sent by single copy when it is enabled.",
    {.min = 0}};
const detail::setting<long long> shared_copy_bytes_setting{
    "CACHECOMM_P2P_SHARED_COPY_BYTES",
    2097152,
    "Smallest single-copy message that sender and receiver copy together, piece by piece, so both "
    "cores work on it (0: the receiver copies alone).",
    {.min = 0}};
const detail::setting<long long> nontemporal_bytes_setting{
    "CACHECOMM_P2P_NONTEMPORAL_BYTES",
    33554432,
    "Smallest pipelined message whose receive copy uses non-temporal stores (0: never). Measured "
    "here: "
    "they win only once source and target exceed the caches (64 MiB: 2.4x, 4 MiB: even).",
    {.min = 0}};

bool tag_matches(int wanted, int tag) {
  return wanted == any_tag || wanted == tag;
}
}  // namespace

namespace detail {

channel_impl::channel_impl(comm_impl& owner) : m_owner(&owner) {
  MPI_Comm duplicate = MPI_COMM_NULL;
  CACHECOMM_MPI(MPI_Comm_dup(owner.world(), &duplicate));
  m_remote = mpi_comm_owner(duplicate);
  CACHECOMM_MPI(MPI_Comm_set_errhandler(duplicate, MPI_ERRORS_RETURN));
  m_rank = owner.rank();
  m_size = owner.size();
  const node_topology& topology = owner.topology();
  m_node_rank = topology.node_rank;
  const config& settings = owner.settings();
  m_slots = static_cast<std::uint32_t>(slots_setting.read(settings));
  m_publish_every = std::max<std::uint32_t>(1, m_slots / 4);
  m_chunk = static_cast<std::size_t>(chunk_setting.read(settings));
  // A zero-byte message has nothing to read from the sender.
  m_single_copy_threshold =
      static_cast<std::size_t>(std::max(1LL, single_copy_bytes_setting.read(settings)));
  const long long shared_copy = shared_copy_bytes_setting.read(settings);
  m_shared_copy_threshold = shared_copy == 0 ? SIZE_MAX : static_cast<std::size_t>(shared_copy);
  const long long nontemporal = nontemporal_bytes_setting.read(settings);
  m_nontemporal = nontemporal > 0;
  m_nontemporal_threshold = static_cast<std::size_t>(nontemporal);

  // One block per unordered pair of node ranks {low, high}, in the order (0,1), (0,2) .. (1,2) ..
  const int node_size = topology.node_size;
  const std::size_t pair_bytes = pair_layout::bytes_for(m_slots, m_chunk);
  const std::size_t pairs =
      static_cast<std::size_t>(node_size) * static_cast<std::size_t>(node_size - 1) / 2;
  m_segment = shm_segment(owner.node(), std::max(pairs * pair_bytes, cache_line_size));
  auto ring_at = [&](int from, int to) {
    const auto low = static_cast<std::size_t>(std::min(from, to));
    const auto high = static_cast<std::size_t>(std::max(from, to));
    const auto n = static_cast<std::size_t>(node_size);
    std::size_t index = low * (2 * n - low - 1) / 2 + (high - low - 1);
    return ring_view(m_segment.bytes_at(index * pair_bytes, pair_bytes), from < to ? 0 : 1, m_slots,
                     m_chunk);
  };
  m_links.resize(static_cast<std::size_t>(node_size));
  for (int peer = 0; peer < node_size; ++peer) {
    if (peer == m_node_rank) continue;
    peer_link& link = m_links[static_cast<std::size_t>(peer)];
    link.comm_rank = topology.node_ranks[static_cast<std::size_t>(peer)];
    link.node_rank = peer;
    link.out = ring_at(m_node_rank, peer);
    link.in = ring_at(peer, m_node_rank);
  }
  // Single copy is the comm's, probed once and shared with the collectives. Sender and receiver
  // copying together needs the sender to write into the receiver's buffer.
  m_cross = &owner.single_copy();
  m_single_copy = m_cross->can_read();
  if (!m_cross->can_write()) m_shared_copy_threshold = SIZE_MAX;
}

channel_impl::~channel_impl() {
  std::size_t in_flight = m_mpi_operations.size();
  for (const auto& link : m_links)
    in_flight +=
        link.pending_sends.size() + link.awaiting_copy.size() + link.posted_receives.size();
  if (in_flight != 0) {
    std::fprintf(stderr,
                 "cachecomm: rank %d destroyed a channel with %zu operations still in flight\n",
                 m_rank, in_flight);
  }
  for (auto& operation : m_mpi_operations) {
    if (operation->mpi != MPI_REQUEST_NULL && !operation->is_send) {
      MPI_Cancel(&operation->mpi);
      MPI_Wait(&operation->mpi, MPI_STATUS_IGNORE);
    }
  }
}

void channel_impl::check_peer(int peer, const char* what) const {
  if (peer < 0 || peer >= m_size) {
    throw invalid_argument(std::string("cachecomm: channel ") + what + " names rank " +
                           std::to_string(peer) + " outside the communicator of " +
                           std::to_string(m_size) + " ranks");
  }
}

bool channel_impl::ring_has_space(peer_link& link) {
  if (link.produced - link.consumed_seen < m_slots) return true;
  link.consumed_seen = link.out.consumed().load(std::memory_order_acquire);
  return link.produced - link.consumed_seen < m_slots;
}

void channel_impl::write_slot(peer_link& link, int tag, std::size_t message_bytes,
                              const std::byte* data, std::size_t chunk, std::uint32_t kind) {
  slot_header& header = link.out.header(link.produced);
  // Empty messages may come with a null buffer, which memcpy must never see, even for 0 bytes.
  if (chunk != 0) {
    copy_memory(kind == slot_single_copy || message_bytes <= ring_inline_bytes
                    ? header.inline_data
                    : link.out.data(link.produced),
                data, chunk);
  }
  header.tag = tag;
  header.size_and_kind = (static_cast<std::uint64_t>(message_bytes) << 8) | kind;
  ++link.produced;
  link.heard_since_send = false;
  m_owner->wait().publish_and_ring(header.sequence, link.produced,
                                   link.out.doorbell());  // slot n carries n + 1
}

// Only when the peer has taken the previous mailbox message and nothing is queued before this one.
void channel_impl::write_mail(peer_link& link, int tag, std::size_t bytes, const std::byte* data) {
  mailbox_half& mail = link.out.mail();
  if (bytes != 0) copy_memory(mail.inline_data, data, bytes);
  mail.tag = tag;
  mail.position_and_size = ((link.produced & 0xffffffU) << 8) | static_cast<std::uint32_t>(bytes);
  ++link.mail_sent;
  link.heard_since_send = false;
  m_owner->wait().publish_and_ring(mail.sequence, link.mail_sent, link.out.doorbell());
}

void channel_impl::take_mail(peer_link& link) {
  const mailbox_half& mail = link.in.mail();
  const std::size_t bytes = mail.message_bytes();
  begin_arrival(link, mail.tag, bytes, slot_first);
  std::byte* target = nullptr;
  std::size_t capacity = 0;
  arrival_target(link, target, capacity);
  std::size_t fits = std::min(bytes, capacity);
  if (fits != 0) copy_memory(target, mail.inline_data, fits);
  link.arriving_done = bytes;
  // A plain store (x86-TSO keeps it after the loads above): the sender only reads it, never waits.
  link.in.reverse_mail().taken.store(++link.mail_read, std::memory_order_release);
  finish_arrival(link);
}

void channel_impl::arrival_target(peer_link& link, std::byte*& target, std::size_t& capacity) {
  if (link.arriving_receive) {
    target = link.arriving_receive->recv_data;
    capacity = link.arriving_receive->bytes;
  } else {
    target = link.arriving_unexpected->data.data();
    capacity = link.arriving_unexpected->data.size();
  }
}

bool channel_impl::push_send(peer_link& link, p2p_operation& operation) {
  if (operation.bytes <= ring_inline_bytes && mail_free(link)) {
    write_mail(link, operation.tag, operation.bytes, operation.send_data);
    operation.started = true;
    operation.complete = true;
    return true;
  }
  if (m_single_copy && operation.bytes >= m_single_copy_threshold) {
    if (!ring_has_space(link)) return false;
    const std::uint64_t descriptor[2] = {reinterpret_cast<std::uintptr_t>(operation.send_data),
                                         operation.bytes >= m_shared_copy_threshold ? 1U : 0U};
    write_slot(link, operation.tag, operation.bytes, reinterpret_cast<const std::byte*>(descriptor),
               sizeof descriptor, slot_single_copy);
    operation.started = true;
    operation.single_copy_ticket = ++link.single_copy_sent;
    return true;  // completes when the receiver has copied it (awaiting_copy)
  }
  do {
    if (!ring_has_space(link)) return false;
    std::size_t chunk = std::min(m_chunk, operation.bytes - operation.done);
    write_slot(link, operation.tag, operation.bytes, operation.send_data + operation.done, chunk,
               operation.done == 0 ? slot_first : slot_continuation);
    operation.done += chunk;
    operation.started = true;
  } while (operation.done < operation.bytes);
  operation.complete = true;
  return true;
}

void channel_impl::progress_out(peer_link& link) {
  while (!link.pending_sends.empty()) {
    std::shared_ptr<p2p_operation>& front = link.pending_sends.front();
    if (!push_send(link, *front)) break;
    if (!front->complete) link.awaiting_copy.push_back(front);
    link.pending_sends.pop_front();
  }
  while (!link.awaiting_copy.empty()) {
    p2p_operation& front = *link.awaiting_copy.front();
    help_copy(link, front.single_copy_ticket, front.send_data, true);
    if (!sequence_reached(link.out.copied().load(std::memory_order_acquire),
                          front.single_copy_ticket))
      break;
    front.done = front.bytes;
    front.complete = true;
    link.awaiting_copy.pop_front();
  }
}

void channel_impl::consume_slot(peer_link& link) {
  ++link.next_in;
  // The sender only reads `consumed` when the ring looks full, so it is published a quarter ring
  // at a time: a small message then costs one sequentially consistent store, not two. While a
  // sender is blocked on a full ring every slot is ready here, so the next quarter always comes.
  if (link.next_in - link.consumed_published >= m_publish_every) {
    link.consumed_published = link.next_in;
    m_owner->wait().publish(link.in.consumed(), link.next_in);
  }
}

void channel_impl::begin_arrival(peer_link& link, int tag, std::size_t message_bytes,
                                 std::uint32_t kind) {
  if (kind == slot_continuation) {
    throw error("cachecomm: channel ring from rank " + std::to_string(link.comm_rank) +
                " is out of step (a message continues without a start)");
  }
  link.arriving = true;
  link.heard_since_send = true;
  link.arriving_bytes = message_bytes;
  link.arriving_done = 0;
  auto match =
      std::find_if(link.posted_receives.begin(), link.posted_receives.end(),
                   [&](const auto& operation) { return tag_matches(operation->tag, tag); });
  if (match != link.posted_receives.end()) {
    link.arriving_receive = *match;
    link.posted_receives.erase(match);
    p2p_operation& receive = *link.arriving_receive;
    receive.started = true;
    receive.message_bytes = message_bytes;
    if (message_bytes > receive.bytes) {
      receive.failure = "cachecomm: a message of " + std::to_string(message_bytes) +
                        " bytes from rank " + std::to_string(link.comm_rank) + " (tag " +
                        std::to_string(tag) + ") does not fit the receive buffer of " +
                        std::to_string(receive.bytes) + " bytes";
    }
    return;
  }
  unexpected_message& entry = link.unexpected.emplace_back();
  entry.tag = tag;
  entry.data.resize(message_bytes);
  link.arriving_unexpected = &entry;
}

namespace {
void deliver(unexpected_message& entry, p2p_operation& receive, int source) {
  receive.message_bytes = entry.data.size();
  std::size_t fits = std::min(entry.data.size(), receive.bytes);
  if (fits != 0) copy_memory(receive.recv_data, entry.data.data(), fits);
  receive.done = fits;
  if (entry.data.size() > receive.bytes) {
    receive.failure = "cachecomm: a message of " + std::to_string(entry.data.size()) +
                      " bytes from rank " + std::to_string(source) + " (tag " +
                      std::to_string(entry.tag) + ") does not fit the receive buffer of " +
                      std::to_string(receive.bytes) + " bytes";
  }
  receive.complete = true;
}
}  // namespace

void channel_impl::finish_arrival(peer_link& link) {
  if (link.arriving_receive) {
    link.arriving_receive->done = std::min(link.arriving_bytes, link.arriving_receive->bytes);
    link.arriving_receive->complete = true;
    link.arriving_receive.reset();
  } else {
    unexpected_message& entry = *link.arriving_unexpected;
    entry.complete = true;
    if (entry.claimed_by) {
      deliver(entry, *entry.claimed_by, link.comm_rank);
      auto position = std::find_if(link.unexpected.begin(), link.unexpected.end(),
                                   [&](const unexpected_message& item) { return &item == &entry; });
      link.unexpected.erase(position);
    }
    link.arriving_unexpected = nullptr;
  }
  link.arriving = false;
}

namespace {
constexpr std::size_t shared_copy_piece = std::size_t{256} * 1024;

void copy_across(const cross_memory& cross, int node_rank, bool to_peer, std::byte* local,
                 std::uint64_t remote, std::size_t bytes) {
  const int error = to_peer ? cross.copy_to(node_rank, local, remote, bytes)
                            : cross.copy_from(node_rank, local, remote, bytes);
  if (error != 0) throw cross_memory_failure("channel", to_peer, node_rank, error);
}
}  // namespace

// Claims pieces of message `ticket` until none is left. The sender writes into the receiver's
// buffer, the receiver reads from the sender's; the claim word carries the ticket, so a stale
// claim for an earlier message fails instead of copying into a later one.
void channel_impl::help_copy(peer_link& link, std::uint32_t ticket, const std::byte* source,
                             bool as_sender) {
  const ring_view& ring = as_sender ? link.out : link.in;
  shared_copy_line& line = ring.claim();
  for (;;) {
    std::uint64_t word = line.claim.load(std::memory_order_acquire);
    if (static_cast<std::uint32_t>(word >> 32) != ticket) return;
    const std::uint64_t bytes = line.bytes;
    const std::uint64_t target = line.target;
    const auto piece = static_cast<std::uint32_t>(word);
    const std::uint64_t pieces = (bytes + shared_copy_piece - 1) / shared_copy_piece;
    if (piece >= pieces) return;
    if (!line.claim.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel)) continue;
    const std::size_t offset = static_cast<std::size_t>(piece) * shared_copy_piece;
    const std::size_t length = std::min<std::size_t>(shared_copy_piece, bytes - offset);
    if (as_sender) {
      copy_across(*m_cross, link.node_rank, true, const_cast<std::byte*>(source) + offset,
                  target + offset, length);
    } else {
      copy_across(*m_cross, link.node_rank, false, reinterpret_cast<std::byte*>(target) + offset,
                  reinterpret_cast<std::uintptr_t>(source) + offset, length);
    }
    ring.pieces_done().fetch_add(1, std::memory_order_seq_cst);
    m_owner->wait().wake(reinterpret_cast<const std::uint32_t*>(&ring.pieces_done()));
  }
}

void channel_impl::read_single_copy(peer_link& link, const slot_header& header, std::byte* target,
                                    std::size_t capacity) {
  std::uint64_t descriptor[2] = {};
  copy_memory(descriptor, header.inline_data, sizeof descriptor);
  const std::size_t wanted = std::min<std::size_t>(header.message_bytes(), capacity);
  const std::uint32_t ticket = link.single_copy_read + 1;
  if (descriptor[1] == 0 || wanted < 2 * shared_copy_piece) {
    copy_across(*m_cross, link.node_rank, false, target, descriptor[0], wanted);
  } else {
    // Post the target, then copy pieces alongside the sender; wait only for pieces it claimed.
    shared_copy_line& line = link.in.claim();
    line.target = reinterpret_cast<std::uintptr_t>(target);
    line.bytes = wanted;
    link.in.pieces_done().store(0, std::memory_order_relaxed);
    line.claim.store(static_cast<std::uint64_t>(ticket) << 32, std::memory_order_seq_cst);
    help_copy(link, ticket, reinterpret_cast<const std::byte*>(descriptor[0]), false);
    const auto pieces =
        static_cast<std::uint32_t>((wanted + shared_copy_piece - 1) / shared_copy_piece);
    m_owner->wait().wait(
        reinterpret_cast<const std::uint32_t*>(&link.in.pieces_done()),
        [&] { return link.in.pieces_done().load(std::memory_order_acquire) == pieces; },
        node_rank_of(link.comm_rank), "a shared copy the sender is finishing");
  }
  link.single_copy_read = ticket;
  m_owner->wait().publish(link.in.copied(), link.single_copy_read);
}

void channel_impl::progress_in(peer_link& link) {
  for (;;) {
    const slot_header& header = link.in.header(link.next_in);
    const bool slot_ready = header.sequence.load(std::memory_order_acquire) == link.next_in + 1;
    // Read after the slot: a mailbox message the sender wrote before it is visible by now
    // (x86-TSO), and then it comes first.
    if (!link.arriving && mail_waiting(link)) {
      take_mail(link);
      continue;
    }
    if (!slot_ready) return;
    if (!link.arriving) begin_arrival(link, header.tag, header.message_bytes(), header.kind());
    std::byte* target = nullptr;
    std::size_t capacity = 0;
    arrival_target(link, target, capacity);
    if (header.kind() == slot_single_copy) {
      read_single_copy(link, header, target, capacity);
      link.arriving_done = link.arriving_bytes;
    } else {
      // Every slot but a message's last carries a full chunk.
      std::size_t chunk = std::min(m_chunk, link.arriving_bytes - link.arriving_done);
      std::size_t offset = link.arriving_done;
      std::size_t fits = offset < capacity ? std::min(chunk, capacity - offset) : 0;
      if (fits != 0) {
        if (link.arriving_bytes <= ring_inline_bytes) {
          if (fits != 0) copy_memory(target + offset, header.inline_data, fits);
        } else {
          copy_bytes(target + offset, link.in.data(link.next_in), fits,
                     m_nontemporal && link.arriving_bytes >= m_nontemporal_threshold);
        }
      }
      link.arriving_done += chunk;
    }
    consume_slot(link);
    if (link.arriving_done >= link.arriving_bytes) finish_arrival(link);
  }
}

void channel_impl::progress() {
  for (auto& link : m_links) {
    if (link.comm_rank < 0) continue;
    if (!link.pending_sends.empty() || !link.awaiting_copy.empty()) progress_out(link);
    progress_in(link);
  }
  for (std::size_t index = 0; index < m_mpi_operations.size();) {
    p2p_operation& operation = *m_mpi_operations[index];
    int finished = 0;
    MPI_Status status{};
    int code = MPI_Test(&operation.mpi, &finished, &status);
    if (code != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      int length = 0;
      MPI_Error_string(code, text, &length);
      operation.failure = "cachecomm: channel " +
                          std::string(operation.is_send ? "send to" : "receive from") + " rank " +
                          std::to_string(operation.peer) +
                          " through MPI failed: " + std::string(text, length);
      finished = 1;
      // Open MPI keeps a request that completed in error; it is ours to free.
      if (operation.mpi != MPI_REQUEST_NULL) MPI_Request_free(&operation.mpi);
    }
    if (finished == 0) {
      ++index;
      continue;
    }
    if (!operation.is_send && code == MPI_SUCCESS) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      operation.message_bytes = static_cast<std::size_t>(count);
    }
    operation.complete = true;
    m_mpi_operations.erase(m_mpi_operations.begin() + static_cast<std::ptrdiff_t>(index));
  }
}

std::shared_ptr<p2p_operation> channel_impl::start_send(const void* data, std::size_t bytes,
                                                        int destination, int tag) {
  check_peer(destination, "send");
  if (tag < 0)
    throw invalid_argument("cachecomm: channel send needs a tag >= 0, got " + std::to_string(tag));
  if (data == nullptr && bytes != 0)
    throw invalid_argument("cachecomm: channel send of " + std::to_string(bytes) +
                           " bytes from a null buffer");
  auto operation = std::make_shared<p2p_operation>();
  operation->is_send = true;
  operation->peer = destination;
  operation->tag = tag;
  operation->send_data = static_cast<const std::byte*>(data);
  operation->bytes = bytes;
  if (!is_local(destination)) {
    const int count = mpi_int_count<invalid_argument>(
        bytes, [] { return "cachecomm: channel send through MPI is limited to 2 GiB"; });
    CACHECOMM_MPI(
        MPI_Isend(data, count, MPI_BYTE, destination, tag, m_remote.get(), &operation->mpi));
    m_mpi_operations.push_back(operation);
    return operation;
  }
  peer_link& link = m_links[static_cast<std::size_t>(node_rank_of(destination))];
  if (link.pending_sends.empty() && push_send(link, *operation)) {
    if (!operation->complete) link.awaiting_copy.push_back(operation);
    return operation;
  }
  link.pending_sends.push_back(operation);
  return operation;
}

void channel_impl::match_posted(peer_link& link, const std::shared_ptr<p2p_operation>& operation) {
  for (auto entry = link.unexpected.begin(); entry != link.unexpected.end(); ++entry) {
    if (entry->claimed_by || !tag_matches(operation->tag, entry->tag)) continue;
    if (entry->complete) {
      deliver(*entry, *operation, link.comm_rank);
      link.unexpected.erase(entry);
    } else {
      entry->claimed_by = operation;
      operation->started = true;
    }
    return;
  }
  link.posted_receives.push_back(operation);
}

std::shared_ptr<p2p_operation> channel_impl::start_recv(void* data, std::size_t capacity,
                                                        int source, int tag) {
  check_peer(source, "receive");
  if (tag < 0 && tag != any_tag)
    throw invalid_argument("cachecomm: channel receive needs a tag >= 0 or any_tag, got " +
                           std::to_string(tag));
  if (data == nullptr && capacity != 0)
    throw invalid_argument("cachecomm: channel receive into a null buffer of " +
                           std::to_string(capacity) + " bytes");
  auto operation = std::make_shared<p2p_operation>();
  operation->peer = source;
  operation->tag = tag;
  operation->recv_data = static_cast<std::byte*>(data);
  operation->bytes = capacity;
  if (!is_local(source)) {
    const int count = mpi_int_count<invalid_argument>(
        capacity, [] { return "cachecomm: channel receive through MPI is limited to 2 GiB"; });
    CACHECOMM_MPI(MPI_Irecv(data, count, MPI_BYTE, source, tag == any_tag ? MPI_ANY_TAG : tag,
                            m_remote.get(), &operation->mpi));
    m_mpi_operations.push_back(operation);
    return operation;
  }
  match_posted(m_links[static_cast<std::size_t>(node_rank_of(source))], operation);
  return operation;
}

void channel_impl::send(const void* data, std::size_t bytes, int destination, int tag) {
  // Fast path: a small message with nothing queued before it goes straight into the flag's line.
  if (bytes <= ring_inline_bytes && tag >= 0 && destination >= 0 && destination < m_size &&
      is_local(destination)) {
    peer_link& link = m_links[static_cast<std::size_t>(node_rank_of(destination))];
    if (link.pending_sends.empty() && (data != nullptr || bytes == 0)) {
      if (mail_free(link)) {
        write_mail(link, tag, bytes, static_cast<const std::byte*>(data));
        return;
      }
      if (ring_has_space(link)) {
        write_slot(link, tag, bytes, static_cast<const std::byte*>(data), bytes, slot_first);
        return;
      }
    }
  }
  auto operation = start_send(data, bytes, destination, tag);
  wait(*operation);
}

std::size_t channel_impl::recv(void* data, std::size_t capacity, int source, int tag) {
  // Fast path: nothing else is pending anywhere, so waiting on this one ring alone cannot hold up
  // another operation; a small message matching the tag is copied straight out of the flag's line.
  if (source >= 0 && source < m_size && is_local(source) && m_mpi_operations.empty() &&
      (data != nullptr || capacity == 0)) {
    peer_link& link = m_links[static_cast<std::size_t>(node_rank_of(source))];
    bool idle = !link.arriving && link.unexpected.empty() && link.posted_receives.empty();
    for (const auto& other : m_links)
      idle = idle && other.pending_sends.empty() && other.awaiting_copy.empty();
    if (idle) {
      const slot_header& header = link.in.header(link.next_in);
      const std::uint32_t expected = link.next_in + 1;
      m_owner->wait().wait(
          reinterpret_cast<const std::uint32_t*>(&link.in.doorbell()),
          [&] {
            return mail_waiting(link) ||
                   header.sequence.load(std::memory_order_acquire) == expected;
          },
          node_rank_of(source), "a channel receive");
      // Checked again after the slot was seen: a mailbox message written before the slot comes
      // first.
      if (mail_waiting(link)) {
        const mailbox_half& mail = link.in.mail();
        const std::size_t bytes = mail.message_bytes();
        if (bytes <= capacity && tag_matches(tag, mail.tag)) {
          if (bytes != 0) copy_memory(data, mail.inline_data, bytes);
          link.in.reverse_mail().taken.store(++link.mail_read, std::memory_order_release);
          link.heard_since_send = true;
          return bytes;
        }
        auto operation = start_recv(data, capacity, source, tag);
        wait(*operation);
        return operation->message_bytes;
      }
      const std::size_t bytes = header.message_bytes();
      if (header.kind() == slot_first && bytes <= ring_inline_bytes && bytes <= capacity &&
          tag_matches(tag, header.tag)) {
        if (bytes != 0) copy_memory(data, header.inline_data, bytes);
        consume_slot(link);
        link.heard_since_send = true;
        return bytes;
      }
    }
  }
  auto operation = start_recv(data, capacity, source, tag);
  wait(*operation);
  return operation->message_bytes;
}

const std::uint32_t* channel_impl::wake_word(const p2p_operation& operation) const {
  if (!is_local(operation.peer)) return &m_idle_word;
  const peer_link& link = m_links[static_cast<std::size_t>(node_rank_of(operation.peer))];
  const std::atomic<std::uint32_t>* word = nullptr;
  if (!operation.is_send) {
    word = &link.in.doorbell();  // rung by mailbox and ring publications alike
  } else if (operation.single_copy_ticket != 0) {
    word = &link.out.copied();
  } else {
    word = &link.out.consumed();
  }
  return reinterpret_cast<const std::uint32_t*>(word);
}

void channel_impl::wait(p2p_operation& operation) {
  const int waited = is_local(operation.peer) ? node_rank_of(operation.peer) : -1;
  const char* what = operation.is_send ? "a channel send" : "a channel receive";
  while (!operation.complete) {
    // The word to sleep on moves as slots are consumed; re-arm when it does.
    const std::uint32_t* word = wake_word(operation);
    m_owner->wait().wait(
        word,
        [&] {
          progress();
          return operation.complete || wake_word(operation) != word;
        },
        waited, what);
  }
  if (!operation.failure.empty()) throw invalid_argument(operation.failure);
}

bool channel_impl::test(p2p_operation& operation) {
  if (!operation.complete) progress();
  return operation.complete;
}

void channel_impl::abandon(const std::shared_ptr<p2p_operation>& operation) noexcept {
  try {
    if (!operation->complete) progress();
    if (operation->complete) return;
    ++m_abandoned;
    const char* kind = operation->is_send ? "send to" : "receive from";
    if (!operation->started) {
      bool removed = false;
      if (is_local(operation->peer)) {
        peer_link& link = m_links[static_cast<std::size_t>(node_rank_of(operation->peer))];
        auto& queue = operation->is_send ? link.pending_sends : link.posted_receives;
        auto position = std::find(queue.begin(), queue.end(), operation);
        if (position != queue.end()) {
          queue.erase(position);
          removed = true;
        }
      } else if (!operation->is_send) {
        MPI_Cancel(&operation->mpi);
        MPI_Wait(&operation->mpi, MPI_STATUS_IGNORE);
        std::erase(m_mpi_operations, operation);
        removed = true;
      }
      if (removed) {
        std::fprintf(stderr,
                     "cachecomm: rank %d destroyed a request (%s rank %d, tag %d, %zu bytes) "
                     "before it completed; "
                     "it was cancelled\n",
                     m_rank, kind, operation->peer, operation->tag, operation->bytes);
        return;
      }
    }
    std::fprintf(stderr,
                 "cachecomm: rank %d destroyed a request (%s rank %d, tag %d, %zu bytes) before it "
                 "completed; "
                 "waiting for it because its data is already moving\n",
                 m_rank, kind, operation->peer, operation->tag, operation->bytes);
    wait(*operation);
  } catch (const std::exception& failure) {
    std::fprintf(stderr, "cachecomm: rank %d could not complete an abandoned request: %s\n", m_rank,
                 failure.what());
  }
}

}  // namespace detail

// ---- public API ----

request::request(detail::channel_impl* owner, std::shared_ptr<detail::p2p_operation> operation)
    : m_channel(owner), m_operation(std::move(operation)) {}

request::~request() {
  if (m_operation) m_channel->abandon(m_operation);
}

request::request(request&& other) noexcept
    : m_channel(other.m_channel),
      m_operation(std::move(other.m_operation)),
      m_bytes(other.m_bytes) {}

request& request::operator=(request&& other) noexcept {
  if (this != &other) {
    if (m_operation) m_channel->abandon(m_operation);
    m_channel = other.m_channel;
    m_operation = std::move(other.m_operation);
    m_bytes = other.m_bytes;
  }
  return *this;
}

void request::finish() {
  m_bytes = m_operation->is_send ? m_operation->bytes : m_operation->message_bytes;
  m_operation.reset();
}

void request::wait() {
  if (!m_operation) return;
  try {
    m_channel->wait(*m_operation);
  } catch (...) {
    if (m_operation->complete) finish();  // e.g. truncated: done, but reported
    throw;
  }
  finish();
}

bool request::test() {
  if (!m_operation) return true;
  if (!m_channel->test(*m_operation)) return false;
  std::string failure = m_operation->failure;
  finish();
  if (!failure.empty()) throw invalid_argument(failure);
  return true;
}

channel::channel(comm& communicator)
    : m_impl(std::make_unique<detail::channel_impl>(communicator.impl())) {}
channel::~channel() = default;
channel::channel(channel&&) noexcept = default;
channel& channel::operator=(channel&&) noexcept = default;

void channel::send(const void* data, std::size_t bytes, int destination, int tag) {
  m_impl->send(data, bytes, destination, tag);
}
std::size_t channel::recv(void* data, std::size_t capacity, int source, int tag) {
  return m_impl->recv(data, capacity, source, tag);
}
request channel::isend(const void* data, std::size_t bytes, int destination, int tag) {
  return request(m_impl.get(), m_impl->start_send(data, bytes, destination, tag));
}
request channel::irecv(void* data, std::size_t capacity, int source, int tag) {
  return request(m_impl.get(), m_impl->start_recv(data, capacity, source, tag));
}
void channel::wait_all(std::span<request> requests) {
  for (request& entry : requests) entry.wait();
}
int channel::rank() const {
  return m_impl->rank();
}
int channel::size() const {
  return m_impl->size();
}
std::string channel::path_to(int peer) const {
  return m_impl->is_local(peer)
             ? (m_impl->single_copy_enabled() ? "shared-memory ring + single copy"
                                              : "shared-memory ring")
             : "mpi";
}
std::size_t channel::abandoned_requests() const {
  return m_impl->abandoned();
}
std::size_t channel::inline_limit() const {
  return detail::ring_inline_bytes;
}
std::size_t channel::chunk_bytes() const {
  return m_impl->chunk_bytes();
}
std::size_t channel::ring_slots() const {
  return m_impl->slots();
}

}  // namespace cachecomm
