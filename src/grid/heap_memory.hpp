// Private, page-aligned field memory for transports that only pass messages.
#pragma once

#include <cstdlib>
#include <new>

#include "cachecomm/grid_transport.hpp"
#include "shm/cache_line.hpp"

namespace cachecomm::detail {

class heap_field_memory final : public field_memory {
 public:
  explicit heap_field_memory(std::size_t bytes)
      : m_base(static_cast<std::byte*>(
            std::aligned_alloc(4096, round_up(bytes == 0 ? 1 : bytes, 4096)))) {
    if (m_base == nullptr) throw std::bad_alloc();
  }
  ~heap_field_memory() override { std::free(m_base); }
  heap_field_memory(const heap_field_memory&) = delete;
  heap_field_memory& operator=(const heap_field_memory&) = delete;
  std::byte* local() override { return m_base; }

 private:
  std::byte* m_base;
};

}  // namespace cachecomm::detail
