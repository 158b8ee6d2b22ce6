#include "coalesce/mpi_line_sink.hpp"

#include <sched.h>

#include <cstring>
#include <string>

#include "cachecomm/error.hpp"
#include "core/mpi_check.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail {

namespace {
constexpr int line_message_tag = 0x6c1;
// Polls without progress before a poll loop gives the core away: the peer that must answer
// (a rendezvous handshake, an epoch count) may be waiting for this core on a crowded machine.
constexpr unsigned polls_before_yield = 4096;

class idle_backoff {
 public:
  void reset() { m_idle = 0; }
  void idle() {
    if (++m_idle >= polls_before_yield) sched_yield();
  }

 private:
  unsigned m_idle = 0;
};

MPI_Comm duplicate(MPI_Comm parent) {
  MPI_Comm copy = MPI_COMM_NULL;
  CACHECOMM_MPI(MPI_Comm_dup(parent, &copy));
  return copy;
}
}  // namespace

mpi_line_sink::mpi_line_sink(MPI_Comm parent, std::span<std::byte> local_window,
                             std::size_t sends_in_flight)
    : m_comm(duplicate(parent)),
      m_window(local_window),
      m_sends(sends_in_flight == 0 ? 1 : sends_in_flight) {
  int size = 0;
  CACHECOMM_MPI(MPI_Comm_size(m_comm.get(), &size));
  m_sent_in_epoch.assign(static_cast<std::size_t>(size), 0);
  m_flushes_from.assign(static_cast<std::size_t>(size), 0);
}

mpi_line_sink::~mpi_line_sink() {
  if (mpi_finalized()) return;
  for (pending_send& slot : m_sends) {
    if (slot.request != MPI_REQUEST_NULL) MPI_Wait(&slot.request, MPI_STATUS_IGNORE);
  }
}

mpi_line_sink::pending_send& mpi_line_sink::free_send_slot() {
  // Waiting for a slot keeps applying arrivals: the peer we wait on may be waiting on us.
  idle_backoff backoff;
  for (;;) {
    for (pending_send& slot : m_sends) {
      if (slot.request == MPI_REQUEST_NULL) return slot;
      int done = 0;
      CACHECOMM_MPI(MPI_Test(&slot.request, &done, MPI_STATUS_IGNORE));
      if (done) return slot;
    }
    if (apply_arrivals() == 0) backoff.idle();
  }
}

void mpi_line_sink::send(int target, line_message& message) {
  const std::size_t total = message.bytes().size();
  if (total > static_cast<std::size_t>(INT32_MAX)) {
    throw unsupported_error("cachecomm::comm_cache: message of " + std::to_string(total) +
                            " bytes exceeds the 2 GiB an MPI count can describe");
  }
  pending_send& slot = free_send_slot();
  // The slot keeps the bytes until MPI is done with them; the message gets the slot's old buffer.
  message.swap_buffer(slot.bytes);
  CACHECOMM_MPI(MPI_Isend(slot.bytes.data(), static_cast<int>(total), MPI_BYTE, target,
                          line_message_tag, m_comm.get(), &slot.request));
  ++m_sent_in_epoch[static_cast<std::size_t>(target)];
}

void mpi_line_sink::send_flush_marker(int target) {
  pending_send& slot = free_send_slot();
  CACHECOMM_MPI(MPI_Isend(slot.bytes.data(), 0, MPI_BYTE, target, line_message_tag, m_comm.get(),
                          &slot.request));
  ++m_sent_in_epoch[static_cast<std::size_t>(target)];
}

bool mpi_line_sink::test_sent() {
  for (pending_send& slot : m_sends) {
    if (slot.request == MPI_REQUEST_NULL) continue;
    int done = 0;
    CACHECOMM_MPI(MPI_Test(&slot.request, &done, MPI_STATUS_IGNORE));
    if (!done) return false;
  }
  return true;
}

void mpi_line_sink::progress() {
  (void)apply_arrivals();
}

std::size_t mpi_line_sink::apply_arrivals() {
  std::size_t applied = 0;
  for (;;) {
    int arrived = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    CACHECOMM_MPI(
        MPI_Improbe(MPI_ANY_SOURCE, line_message_tag, m_comm.get(), &arrived, &message, &status));
    if (!arrived) return applied;
    int bytes = 0;
    CACHECOMM_MPI(MPI_Get_count(&status, MPI_BYTE, &bytes));
    // Grow only: shrinking and growing again would zero-fill the buffer for every message.
    if (static_cast<std::size_t>(bytes) > m_receive_buffer.size())
      m_receive_buffer.resize(static_cast<std::size_t>(bytes));
    CACHECOMM_MPI(MPI_Mrecv(m_receive_buffer.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE));
    if (bytes == 0) {
      ++m_flushes_from[static_cast<std::size_t>(status.MPI_SOURCE)];
    } else {
      apply({m_receive_buffer.data(), static_cast<std::size_t>(bytes)}, status.MPI_SOURCE);
    }
    ++m_received_in_epoch;
    ++applied;
  }
}

void mpi_line_sink::apply(std::span<const std::byte> message, int source) const {
  std::byte* window = m_window.data();
  line_message::for_each_record(
      message, m_window.size(), source,
      [window](std::uint64_t offset, const std::byte* data, std::size_t length) {
        copy_memory(window + offset, data, length);
      });
}

void mpi_line_sink::complete_epoch() {
  // Each rank learns how many messages were sent to it, then applies until it has them all; sends
  // and arrivals progress together so a rank blocked on a full peer cannot deadlock the epoch.
  std::uint64_t expected = 0;
  MPI_Request count_request = MPI_REQUEST_NULL;
  CACHECOMM_MPI(MPI_Ireduce_scatter_block(m_sent_in_epoch.data(), &expected, 1, MPI_UINT64_T,
                                          MPI_SUM, m_comm.get(), &count_request));
  bool counted = false;
  bool sent = false;
  idle_backoff backoff;
  while (!counted || !sent || m_received_in_epoch < expected) {
    if (apply_arrivals() == 0) {
      backoff.idle();
    } else {
      backoff.reset();
    }
    if (!sent) sent = test_sent();
    if (!counted) {
      int done = 0;
      CACHECOMM_MPI(MPI_Test(&count_request, &done, MPI_STATUS_IGNORE));
      counted = done != 0;
    }
  }
  m_received_in_epoch -= expected;
  std::fill(m_sent_in_epoch.begin(), m_sent_in_epoch.end(), 0);
}

}  // namespace cachecomm::detail
