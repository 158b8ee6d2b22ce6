// The region ring's copies in the store mode each rank measures to be faster (coll_engine.hpp).
#include <x86intrin.h>

#include "coll/coll_engine.hpp"
#include "coll/shared_copy.hpp"

namespace cachecomm::detail {

coll_engine::ring_stores::ring_stores(coll_engine& engine, std::size_t call_bytes)
    : m_streaming(engine.m_tuning.streaming_stores) {
  // Below streaming_copy_min_bytes every copy is ordinary whatever the mode: nothing to choose.
  if (!engine.m_tuning.adaptive_stores || call_bytes < streaming_copy_min_bytes) return;
  m_chooser = &engine.m_ring_store_modes.of(call_bytes);
  m_streaming = m_chooser->mode() == store_mode::streaming;
  m_bytes = call_bytes;
  m_start = __rdtsc();
}

void coll_engine::ring_stores::copy(void* area, const void* from, std::size_t bytes) {
  copy_to_shared(area, from, bytes, m_streaming);
}

void coll_engine::ring_stores::finish() {
  if (m_chooser == nullptr) return;
  m_chooser->record(static_cast<double>(__rdtsc() - m_start) * 1024.0 /
                    static_cast<double>(m_bytes));
}

}  // namespace cachecomm::detail
