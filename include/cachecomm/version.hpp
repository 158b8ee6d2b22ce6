#pragma once

namespace cachecomm {
inline constexpr const char* version = "0.1.0";
}  // namespace cachecomm
