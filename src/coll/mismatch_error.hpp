// The error a collective throws when its ranks disagree on one call, found without CACHECOMM_CHECK.
#pragma once

#include <string>

#include "cachecomm/error.hpp"

namespace cachecomm::detail {

/// The ranks of one collective call passed different sizes, operations, element types or roots (an
/// erroneous program), found by comparing the call's description that travels with its data. A
/// usage_error to callers of the C++ API; the preload library maps `differs` to MPI's class.
class mismatch_error : public usage_error {
 public:
  enum class field { size, operation, datatype, collective, root };
  mismatch_error(const std::string& message, field differs)
      : usage_error(message), m_field(differs) {}
  [[nodiscard]] field differs() const noexcept { return m_field; }

 private:
  field m_field;
};

}  // namespace cachecomm::detail
