// How the data a (count, datatype) pair describes lies in memory, so that every rank of a
// collective takes the same path whatever datatype it used: MPI lets one rank send `4 x MPI_INT`
// while another receives `1 x contiguous(4, MPI_INT)`. Every call that cachecomm serves moves the
// bytes of the type signature; a datatype whose bytes are not laid out densely in signature order
// is packed into (and unpacked from) a scratch buffer.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <optional>
#include <vector>

#include "preload/call_stats.hpp"

namespace cachecomm::detail::preload {

/// One datatype's layout. Depends only on the datatype, not on the buffer.
struct type_layout {
  std::size_t size = 0;  ///< bytes of the type signature per element (MPI_Type_size)
  MPI_Aint extent = 0;   ///< distance between consecutive elements
  /// count elements lie at buffer[0, count * size) in signature order: move them as they are.
  bool dense = false;
  bool predefined = false;  ///< MPI_COMBINER_NAMED
};

/// The last predefined type of this thread and its layout (predefined handles are never freed);
/// `known` false until one was looked at.
struct last_predefined {
  bool known = false;
  MPI_Datatype type{};
  type_layout layout;
};
extern constinit thread_local last_predefined g_last_predefined
    __attribute__((tls_model("initial-exec")));

/// layout_of's look-up (the call's type is not the last predefined one).
[[nodiscard]] std::optional<type_layout> look_up_layout(MPI_Datatype type, outcome& why_not);

/// The layout of `type`, or nothing (MPI_DATATYPE_NULL, an uncommitted or invalid handle) with the
/// reason in `why_not`. Predefined types are remembered per thread; derived ones (their handles are
/// reused once freed) are looked at on every call. Inline: loops repeat one type, and the look-up's
/// frame cost a call of 8 bytes 35 instructions per datatype.
[[nodiscard]] inline std::optional<type_layout> layout_of(MPI_Datatype type, outcome& why_not) {
  const last_predefined& last = g_last_predefined;
  if (last.known && type == last.type) return last.layout;
  return look_up_layout(type, why_not);
}

/// Scratch buffer of one thread for packed data (grows, never shrinks).
std::vector<std::byte>& scratch(int which);

/// Packs `count` elements of `type` from `buffer` into `packed` (count * layout.size bytes).
/// Throws cachecomm::mpi_error when MPI refuses.
void pack(const void* buffer, std::size_t count, MPI_Datatype type, const type_layout& layout,
          std::byte* packed, MPI_Comm comm);
/// A send block as `block` dense bytes: `buffer` itself when its layout is dense and it holds
/// `block` bytes, otherwise its `count` elements packed into scratch(0), zero-padded to `block`
/// (a rank may send fewer bytes than the block every rank agreed on).
[[nodiscard]] const void* dense_send_block(const void* buffer, std::size_t count, MPI_Datatype type,
                                           const type_layout& layout, std::size_t block,
                                           MPI_Comm comm);
/// A rank's signature that differs from the block every rank agreed on: the rank took part as the
/// block (zero-padded or cut, so the others were not left waiting) and now fails with
/// MPI_ERR_TRUNCATE, naming `call`, what this rank passed (`what`: "this rank sends") and both
/// sizes.
[[noreturn]] void throw_truncate(const char* call, const char* what, std::size_t got,
                                 std::size_t block);
/// The reverse of pack.
void unpack(const std::byte* packed, std::size_t count, MPI_Datatype type,
            const type_layout& layout, void* buffer, MPI_Comm comm);

}  // namespace cachecomm::detail::preload
