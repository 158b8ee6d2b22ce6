// The one place the version is written: CMake reads it for the package version and the soname
// (libcachecomm.so.<major>.<minor> while the major version is 0).
#pragma once

namespace cachecomm {
inline constexpr int version_major = 0;
inline constexpr int version_minor = 2;
inline constexpr int version_patch = 0;
inline constexpr const char* version = "0.2.0";
}  // namespace cachecomm
