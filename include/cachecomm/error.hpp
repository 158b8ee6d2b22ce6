// Typed errors thrown by the C++ API. Checks stay on in release builds.
#pragma once

#include <stdexcept>
#include <string>

namespace cachecomm {

/// Root of every error cachecomm throws.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A caller passed something cachecomm cannot accept (bad count, null buffer, bad root...).
class invalid_argument : public error {
 public:
  using error::error;
};

/// The ranks of a collective disagree (counts, types, roots) or an epoch is misused.
class usage_error : public error {
 public:
  using error::error;
};

/// The operation, type or combination is not supported.
class unsupported_error : public error {
 public:
  using error::error;
};

/// An operating-system call failed; the message carries strerror(errno).
class system_error : public error {
 public:
  system_error(const std::string& what_failed, int errno_value);
  [[nodiscard]] int errno_value() const noexcept { return m_errno; }

 private:
  int m_errno;
};

/// An MPI call failed; the message carries MPI's own error string.
class mpi_error : public error {
 public:
  mpi_error(const std::string& call, int mpi_code);
  [[nodiscard]] int mpi_code() const noexcept { return m_code; }

 private:
  int m_code;
};

/// A peer process died or stopped answering while this rank waited for it.
class peer_failure : public error {
 public:
  peer_failure(const std::string& message, int peer_rank) : error(message), m_peer(peer_rank) {}
  /// Rank (in the communicator the user built) that died or timed out; -1 if unknown.
  [[nodiscard]] int peer_rank() const noexcept { return m_peer; }

 private:
  int m_peer;
};

}  // namespace cachecomm
