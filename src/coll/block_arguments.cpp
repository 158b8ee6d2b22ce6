#include "coll/block_arguments.hpp"

#include <string>

#include "cachecomm/error.hpp"

namespace cachecomm::detail {

namespace {

// The checks run on every call and inline; what they throw is built out of line (cold), so that
// a call of 8 bytes does not pay for building messages it never needs.

[[noreturn, gnu::cold]] void throw_unknown_type(const char* what, datatype type) {
  throw invalid_argument(std::string("cachecomm: ") + what + ": unknown datatype value " +
                         std::to_string(static_cast<int>(type)));
}

[[noreturn, gnu::cold]] void throw_overflow(const char* what, std::size_t count) {
  throw invalid_argument(std::string("cachecomm: ") + what + ": count " + std::to_string(count) +
                         " overflows the byte size");
}

[[noreturn, gnu::cold]] void throw_bad_root(const char* what, const comm& c, int root) {
  throw invalid_argument(std::string("cachecomm: ") + what + ": root " + std::to_string(root) +
                         " is not a rank of the communicator (size " + std::to_string(c.size()) +
                         ")");
}

[[noreturn, gnu::cold]] void throw_bad_buffer(const char* what, const char* which,
                                              const void* buffer) {
  throw invalid_argument(std::string("cachecomm: ") + what + ": " + which + " buffer is " +
                         (buffer == nullptr ? "null" : "in_place") + " but the count is not 0");
}

/// The byte size of `count` elements of `type` on `ranks` ranks, or invalid_argument naming what is
/// wrong.
std::size_t checked_block(const char* what, std::size_t count, datatype type, std::size_t ranks) {
  const int type_value = static_cast<int>(type);
  if (type_value < 0 || type_value > static_cast<int>(datatype::byte)) [[unlikely]]
    throw_unknown_type(what, type);
  const std::size_t element = size_of(type);
  std::size_t total = 0;
  if (__builtin_mul_overflow(count, element * ranks, &total)) [[unlikely]]
    throw_overflow(what, count);
  return count * element;
}

void check_root(const char* what, const comm& c, int root) {
  if (root < 0 || root >= c.size()) [[unlikely]]
    throw_bad_root(what, c, root);
}

void check_buffer(const char* what, const char* which, const void* buffer) {
  if (buffer == nullptr || buffer == in_place) [[unlikely]]
    throw_bad_buffer(what, which, buffer);
}

[[noreturn, gnu::cold]] void throw_bad_reduction(const char* what, datatype type, reduce_op op) {
  if (op == reduce_op::replace) {
    throw unsupported_error(std::string("cachecomm: ") + what +
                            ": reduce_op::replace is not supported by collectives (it is an "
                            "accumulate operation)");
  }
  throw unsupported_error(std::string("cachecomm: ") + what + ": operation " +
                          std::string(to_string(op)) + " is not supported on " +
                          std::string(to_string(type)));
}

void check_reduction(const char* what, datatype type, reduce_op op) {
  if (op == reduce_op::replace || !supports(type, op)) [[unlikely]]
    throw_bad_reduction(what, type, op);
}

}  // namespace

namespace {

/// Gather's and scatter's checks: `rooted` names the buffer that matters only at the root (and may
/// be in_place there: the other one), `everywhere` the one every rank passes.
std::size_t check_rooted_block(const char* what, const comm& c, const char* rooted_name,
                               const void* rooted, const char* everywhere_name,
                               const void* everywhere, std::size_t count_per_rank, datatype type,
                               int root) {
  const std::size_t block =
      checked_block(what, count_per_rank, type, static_cast<std::size_t>(c.size()));
  check_root(what, c, root);
  if (block == 0) return 0;
  const bool is_root = c.rank() == root;
  if (everywhere == in_place && !is_root) {
    throw invalid_argument(std::string("cachecomm: ") + what + ": " + everywhere_name +
                           " is in_place on a rank that is not the root");
  }
  if (everywhere != in_place) check_buffer(what, everywhere_name, everywhere);
  if (is_root) check_buffer(what, rooted_name, rooted);
  return block;
}

}  // namespace

std::size_t check_gather_arguments(const char* what, const comm& c, const void* send,
                                   const void* receive, std::size_t count_per_rank, datatype type,
                                   int root) {
  return check_rooted_block(what, c, "receive", receive, "send", send, count_per_rank, type, root);
}

std::size_t check_scatter_arguments(const char* what, const comm& c, const void* send,
                                    const void* receive, std::size_t count_per_rank, datatype type,
                                    int root) {
  return check_rooted_block(what, c, "send", send, "receive", receive, count_per_rank, type, root);
}

std::size_t check_alltoall_arguments(const char* what, const comm& c, const void* send,
                                     const void* receive, std::size_t count_per_rank,
                                     datatype type) {
  const auto ranks = static_cast<std::size_t>(c.size());
  const std::size_t block = checked_block(what, count_per_rank, type, ranks);
  if (block == 0) return 0;
  if (send != in_place) check_buffer(what, "send", send);
  check_buffer(what, "receive", receive);
  if (send != in_place) {
    const auto* s = static_cast<const std::byte*>(send);
    const auto* r = static_cast<const std::byte*>(receive);
    if (s < r + block * ranks && r < s + block * ranks) {
      throw invalid_argument(std::string("cachecomm: ") + what +
                             ": the send and receive buffers overlap (use in_place)");
    }
  }
  return block;
}

std::size_t check_reduce_scatter_block_arguments(const char* what, const comm& c, const void* send,
                                                 const void* receive, std::size_t count_per_rank,
                                                 datatype type, reduce_op op) {
  const std::size_t block =
      checked_block(what, count_per_rank, type, static_cast<std::size_t>(c.size()));
  check_reduction(what, type, op);
  if (block == 0) return 0;
  check_buffer(what, "receive", receive);
  if (send != in_place) check_buffer(what, "send", send);
  return block;
}

std::size_t check_prefix_arguments(const char* what, const void* send, const void* receive,
                                   std::size_t count, datatype type, reduce_op op) {
  const std::size_t bytes = checked_block(what, count, type, 1);
  check_reduction(what, type, op);
  if (count == 0) return 0;
  check_buffer(what, "receive", receive);
  if (send != in_place) check_buffer(what, "send", send);
  return bytes;
}

}  // namespace cachecomm::detail
