// The collective operations of `cachecomm-bench coll` (each suites/coll_*.cpp registers its own);
// cachecomm-tune runs the same ones.
#include "suites/coll_ops.hpp"

namespace cachecomm::bench {

namespace {
std::vector<coll_op>& registered() {
  static std::vector<coll_op> all;
  return all;
}
}  // namespace

void register_coll_op(coll_op op) {
  registered().push_back(std::move(op));
}
const std::vector<coll_op>& coll_ops() {
  return registered();
}

}  // namespace cachecomm::bench
