// copy_memory is memcpy wherever the destination lies 1-63 bytes past the source modulo a page
// (where it copies by vectors, avoiding glibc's slow `rep movsb`) and everywhere else: every byte
// copied, none outside the destination touched, at every distance and around the sizes that
// switch paths.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shm/memory_copy.hpp"

namespace cachecomm::detail {
namespace {

constexpr std::size_t page = 4096;
constexpr unsigned char guard = 0xA5;

/// Copies `bytes` from a page-aligned source to a destination `distance` bytes into its page and
/// checks the copy and the guard bytes around it.
void check_copy(std::size_t bytes, std::size_t distance, std::size_t source_offset = 0) {
  std::vector<unsigned char> source_storage(bytes + 2 * page);
  std::vector<unsigned char> target_storage(bytes + 3 * page, guard);
  const auto align = [](unsigned char* p) {
    return p + (page - reinterpret_cast<std::uintptr_t>(p) % page) % page;
  };
  unsigned char* source = align(source_storage.data()) + source_offset;
  unsigned char* target = align(target_storage.data()) + (source_offset + distance) % page + page;
  for (std::size_t i = 0; i < bytes; ++i) source[i] = static_cast<unsigned char>(i * 131 + 7);
  copy_memory(target, source, bytes);
  for (std::size_t i = 0; i < bytes; ++i)
    ASSERT_EQ(target[i], source[i])
        << "byte " << i << " of " << bytes << " at distance " << distance;
  for (const unsigned char* p = target_storage.data(); p < target; ++p)
    ASSERT_EQ(*p, guard) << "written before the destination, distance " << distance;
  for (const unsigned char* p = target + bytes; p < target_storage.data() + target_storage.size();
       ++p)
    ASSERT_EQ(*p, guard) << "written past the destination, distance " << distance;
}

TEST(MemoryCopy, CopiesEveryByteAndNothingElseAtEveryShortDistance) {
  for (std::size_t distance = 0; distance <= 80; ++distance) {
    for (const std::size_t bytes :
         {std::size_t{0}, std::size_t{1}, std::size_t{127}, rep_movsb_min_bytes - 1,
          rep_movsb_min_bytes, rep_movsb_min_bytes + 1, rep_movsb_min_bytes + 127,
          std::size_t{65536} + 13}) {
      ASSERT_NO_FATAL_FAILURE(check_copy(bytes, distance));
    }
  }
}

TEST(MemoryCopy, UnalignedSourcesAndLargeCopies) {
  for (const std::size_t offset : {std::size_t{1}, std::size_t{16}, std::size_t{4000}}) {
    ASSERT_NO_FATAL_FAILURE(check_copy(std::size_t{300000} + 5, 16, offset));
    ASSERT_NO_FATAL_FAILURE(check_copy(std::size_t{300000} + 5, 2048, offset));
  }
  ASSERT_NO_FATAL_FAILURE(check_copy(std::size_t{3} << 20, 16));
}

TEST(MemoryCopy, ByVectorsCopiesAnySize) {
  for (std::size_t bytes = 0; bytes <= 600; ++bytes) {
    std::vector<unsigned char> source(bytes + 1);
    std::vector<unsigned char> target(bytes + 1, guard);
    for (std::size_t i = 0; i < bytes; ++i) source[i] = static_cast<unsigned char>(i + 1);
    copy_by_vectors(target.data(), source.data(), bytes);
    for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(target[i], source[i]) << bytes;
    ASSERT_EQ(target[bytes], guard) << bytes;
  }
}

}  // namespace
}  // namespace cachecomm::detail
