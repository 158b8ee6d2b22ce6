// Line sink between nodes: one MPI message per send carries the records' offsets and bytes; the
// target applies it to its window when it progresses (in write, flush, fence or progress()).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "coalesce/line_sink.hpp"
#include "core/comm_impl.hpp"

namespace cachecomm::detail {

class mpi_line_sink final : public line_sink {
 public:
  /// Collective over `parent` (duplicated). `local_window` receives the messages sent to this rank.
  mpi_line_sink(MPI_Comm parent, std::span<std::byte> local_window,
                std::size_t sends_in_flight = 4);
  /// Completes the sends still in flight (the owner fences before destroying, so they can finish).
  ~mpi_line_sink() override;
  mpi_line_sink(const mpi_line_sink&) = delete;
  mpi_line_sink& operator=(const mpi_line_sink&) = delete;

  void send(int target, line_message& message) override;
  [[nodiscard]] bool test_sent() override;
  /// Sends an empty message that marks the end of a flush: when `target` has applied it, it has
  /// applied everything this rank sent it before.
  void send_flush_marker(int target);
  /// Flush markers applied from `source` so far.
  [[nodiscard]] std::uint32_t flushes_from(int source) const {
    return m_flushes_from[static_cast<std::size_t>(source)];
  }
  void progress() override;
  /// Collective: completes this rank's sends and returns once every message sent to this rank
  /// since the last call has been applied.
  void complete_epoch();

 private:
  struct pending_send {
    std::vector<std::byte> bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  pending_send& free_send_slot();
  void apply(std::span<const std::byte> message, int source) const;
  /// Applies every message that has arrived; returns how many.
  std::size_t apply_arrivals();

  mpi_comm_owner m_comm;
  std::span<std::byte> m_window;
  std::vector<pending_send> m_sends;
  std::vector<std::uint64_t> m_sent_in_epoch;  ///< messages to each rank since the last epoch
  std::uint64_t m_received_in_epoch = 0;
  std::vector<std::uint32_t> m_flushes_from;
  std::vector<std::byte> m_receive_buffer;
};

}  // namespace cachecomm::detail
