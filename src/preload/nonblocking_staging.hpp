// The sides of a served nonblocking collective whose datatypes are not dense (a strided vector, a
// struct with gaps). MPI lets ranks describe the same data with different datatypes of one type
// signature, so the path a call takes must not depend on the layout: such a side goes through a
// buffer the request owns, and the channel only ever sees the signature's bytes. A send side is
// packed when the call starts; a result is unpacked into the program's buffer when it finishes.
// The calls with per-rank counts (MPI_Iallgatherv, MPI_Ireduce_scatter) use the same buffers to
// run on the channel's uniform blocks: padded blocks in, each block (or segment) copied out to its
// place. Dense calls carry none of this (a null staging, one empty check at the finish).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "coll/nonblocking_channel.hpp"
#include "preload/type_layout.hpp"

namespace cachecomm::detail::preload {

/// Program data described by a datatype that is not dense: `count` elements of `type` at `buffer`.
struct staged_data {
  const void* buffer = nullptr;
  std::size_t count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  type_layout layout;
  [[nodiscard]] std::size_t bytes() const { return count * layout.size; }
};

/// One block of a result: `count` elements of the result's datatype, read at byte `from` of the
/// request's result buffer and written at `to` in the program's.
struct result_block {
  std::size_t from = 0;
  void* to = nullptr;
  std::size_t count = 0;
};

/// What a call stages (built by the intercepts, only for sides that go through the request).
struct nonblocking_staging {
  /// Packed when the call starts; call.send becomes the packed copy (the program may free or reuse
  /// its datatype right after the start, and a contribution is copied in later when the ring is
  /// full). A dense one is copied.
  std::optional<staged_data> send;
  /// The send side is packed into the result buffer at byte `send_at` rather than a buffer of its
  /// own (in place: the rank's block is part of its result).
  bool send_into_result = false;
  std::size_t send_at = 0;
  /// Bytes of the send buffer when more than the packed data (a block padded to the largest).
  std::size_t send_bytes = 0;
  /// The result: call.recv becomes a buffer of the request, unpacked into `result->buffer` when the
  /// operation finishes, through a duplicate of the datatype held until then (not dense) or copied
  /// (dense).
  std::optional<staged_data> result;
  /// Bytes of the result buffer when more than the result's data.
  std::size_t result_bytes = 0;
  /// The result's blocks, when not the whole buffer into `result->buffer` (`blocks` of them).
  const result_block* blocks = nullptr;
  std::size_t block_count = 0;
};

/// The buffers and the held datatype of one request; kept with the request for reuse.
class staged_buffers {
 public:
  staged_buffers() = default;
  ~staged_buffers() { release(); }
  staged_buffers(const staged_buffers&) = delete;
  staged_buffers& operator=(const staged_buffers&) = delete;

  /// Packs the send side and points `call` at the request's buffers. Throws cachecomm::mpi_error
  /// when MPI refuses to pack or to duplicate the datatype (nothing is held then).
  void stage(const nonblocking_staging& staging, nonblocking_call& call);
  /// Whether a result waits to be unpacked: the one check a dense call pays at its finish.
  [[nodiscard]] bool holds_result() const { return m_unpack; }
  /// Unpacks the result into the program's buffer and releases the datatype. Returns MPI_SUCCESS
  /// or an error class with `problem` set.
  int unpack_result(std::string& problem);
  /// Releases the held datatype (if any) and large buffers: the request is done or reused.
  void release();

 private:
  std::vector<std::byte> m_send;
  std::vector<std::byte> m_result;
  staged_data m_unpack_into;  ///< its type is the request's duplicate while m_unpack, if not dense
  std::vector<result_block> m_blocks;
  bool m_unpack = false;
};

}  // namespace cachecomm::detail::preload
