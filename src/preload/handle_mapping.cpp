#include "preload/handle_mapping.hpp"

#include <climits>
#include <utility>
#include <vector>

namespace cachecomm::detail::preload {

namespace {

bool is_predefined(MPI_Datatype type) {
  int integers = 0;
  int addresses = 0;
  int datatypes = 0;
  int combiner = 0;
  if (PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner) != MPI_SUCCESS)
    return false;
  return combiner == MPI_COMBINER_NAMED;
}

// Built at first use: Open MPI's handles are addresses, not constant expressions.
const std::vector<std::pair<MPI_Datatype, datatype>>& reducible_types() {
  static const std::vector<std::pair<MPI_Datatype, datatype>> table = [] {
    std::vector<std::pair<MPI_Datatype, datatype>> t = {
        {MPI_INT8_T, datatype::int8},
        {MPI_SIGNED_CHAR, datatype::int8},
        // MPI defines no arithmetic on MPI_CHAR, but Open MPI and MPICH both reduce it as the C
        // `char` it is (signed on x86-64), and OSU's reduction benchmarks use it with MPI_SUM.
        {MPI_CHAR, CHAR_MIN < 0 ? datatype::int8 : datatype::uint8},
        {MPI_UINT8_T, datatype::uint8},
        {MPI_UNSIGNED_CHAR, datatype::uint8},
        {MPI_INT16_T, datatype::int16},
        {MPI_SHORT, datatype::int16},
        {MPI_UINT16_T, datatype::uint16},
        {MPI_UNSIGNED_SHORT, datatype::uint16},
        {MPI_INT32_T, datatype::int32},
        {MPI_INT, datatype::int32},
        {MPI_UINT32_T, datatype::uint32},
        {MPI_UNSIGNED, datatype::uint32},
        {MPI_INT64_T, datatype::int64},
        {MPI_LONG_LONG, datatype::int64},
        {MPI_LONG_LONG_INT, datatype::int64},
        {MPI_UINT64_T, datatype::uint64},
        {MPI_UNSIGNED_LONG_LONG, datatype::uint64},
        {MPI_FLOAT, datatype::float32},
        {MPI_DOUBLE, datatype::float64},
        {MPI_C_FLOAT_COMPLEX, datatype::complex64},
        {MPI_C_COMPLEX, datatype::complex64},
        {MPI_C_DOUBLE_COMPLEX, datatype::complex128},
    };
    static_assert(sizeof(int) == 4 && sizeof(short) == 2 && sizeof(long long) == 8);
    if constexpr (sizeof(long) == 8) {
      t.emplace_back(MPI_LONG, datatype::int64);
      t.emplace_back(MPI_UNSIGNED_LONG, datatype::uint64);
    } else {
      t.emplace_back(MPI_LONG, datatype::int32);
      t.emplace_back(MPI_UNSIGNED_LONG, datatype::uint32);
    }
    return t;
  }();
  return table;
}

const std::vector<std::pair<MPI_Op, reduce_op>>& predefined_ops() {
  static const std::vector<std::pair<MPI_Op, reduce_op>> table = {
      {MPI_SUM, reduce_op::sum},          {MPI_PROD, reduce_op::product},
      {MPI_MIN, reduce_op::min},          {MPI_MAX, reduce_op::max},
      {MPI_LAND, reduce_op::logical_and}, {MPI_LOR, reduce_op::logical_or},
      {MPI_LXOR, reduce_op::logical_xor}, {MPI_BAND, reduce_op::bitwise_and},
      {MPI_BOR, reduce_op::bitwise_or},   {MPI_BXOR, reduce_op::bitwise_xor},
  };
  return table;
}

// Predefined operations cachecomm does not implement (they are not user-defined either).
bool is_other_predefined_op(MPI_Op op) {
  return op == MPI_MAXLOC || op == MPI_MINLOC || op == MPI_REPLACE || op == MPI_NO_OP;
}

// The last handle that mapped, and its mapping. Only successes are kept: they are predefined
// handles, which are never freed, so a handle cannot come back meaning something else.
// One per thread: threads may call collectives on different communicators at once.
template <typename Handle, typename Value>
struct last_mapping {
  Handle handle{};
  Value value{};
  bool valid = false;
  const Value* find(Handle h) const { return valid && h == handle ? &value : nullptr; }
  Value remember(Handle h, Value v) {
    handle = h;
    value = v;
    valid = true;
    return v;
  }
};

}  // namespace

std::optional<movable_type> as_movable(MPI_Datatype type, outcome& why_not) {
  thread_local last_mapping<MPI_Datatype, movable_type> last
      __attribute__((tls_model("initial-exec")));
  if (const movable_type* hit = last.find(type)) return *hit;
  if (type == MPI_DATATYPE_NULL) {
    why_not = outcome::invalid_argument;
    return std::nullopt;
  }
  if (!is_predefined(type)) {
    why_not = outcome::derived_datatype;
    return std::nullopt;
  }
  int size = 0;
  MPI_Aint lower = 0;
  MPI_Aint extent = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(type, &lower, &extent) != MPI_SUCCESS) {
    why_not = outcome::invalid_argument;
    return std::nullopt;
  }
  // Pair types such as MPI_DOUBLE_INT have padding: copying bytes would not be what MPI moves.
  if (lower != 0 || extent != size || size <= 0) {
    why_not = outcome::derived_datatype;
    return std::nullopt;
  }
  return last.remember(type, movable_type{static_cast<std::size_t>(size)});
}

std::optional<datatype> as_reducible(MPI_Datatype type, outcome& why_not) {
  thread_local last_mapping<MPI_Datatype, datatype> last __attribute__((tls_model("initial-exec")));
  if (const datatype* hit = last.find(type)) return *hit;
  if (type == MPI_DATATYPE_NULL) {
    why_not = outcome::invalid_argument;
    return std::nullopt;
  }
  for (const auto& [mpi_type, ours] : reducible_types()) {
    if (mpi_type == type) return last.remember(type, ours);
  }
  why_not = is_predefined(type) ? outcome::unmapped_datatype : outcome::derived_datatype;
  return std::nullopt;
}

std::optional<reduce_op> as_reduce_op(MPI_Op op, outcome& why_not) {
  thread_local last_mapping<MPI_Op, reduce_op> last __attribute__((tls_model("initial-exec")));
  if (const reduce_op* hit = last.find(op)) return *hit;
  if (op == MPI_OP_NULL) {
    why_not = outcome::invalid_argument;
    return std::nullopt;
  }
  for (const auto& [mpi_op, ours] : predefined_ops()) {
    if (mpi_op == op) return last.remember(op, ours);
  }
  why_not = is_other_predefined_op(op) ? outcome::unmapped_op : outcome::user_op;
  return std::nullopt;
}

}  // namespace cachecomm::detail::preload
