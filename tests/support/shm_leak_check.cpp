#include "support/shm_leak_check.hpp"

#include <dirent.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace cachecomm::testing {

bool names_a_segment(const std::string& text) {
  return text.find("/dev/shm/cachecomm-") != std::string::npos ||
         text.find("/memfd:cachecomm-") != std::string::npos;
}

std::set<std::string> cachecomm_segments() {
  std::set<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("cachecomm-", 0) == 0) names.insert(name);
  }
  return names;
}

int open_segment_descriptors() {
  int count = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    std::error_code link_error;
    auto target = std::filesystem::read_symlink(entry.path(), link_error).string();
    if (!link_error && names_a_segment(target)) ++count;
  }
  return count;
}

int mapped_segment_regions() {
  int count = 0;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (names_a_segment(line)) ++count;
  }
  return count;
}

std::set<std::string> leaked_segments(const std::set<std::string>& before) {
  std::set<std::string> suspects;
  for (const auto& name : cachecomm_segments()) {
    if (before.count(name) == 0) suspects.insert(name);
  }
  // A segment of a job running beside this one exists until all of that job's ranks have mapped
  // it, which on a loaded, oversubscribed machine can take a while: only a name that outlives a
  // generous grace period counts as left behind.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!suspects.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto now = cachecomm_segments();
    for (auto name = suspects.begin(); name != suspects.end();) {
      name = now.count(*name) == 0 ? suspects.erase(name) : std::next(name);
    }
  }
  return suspects;
}

}  // namespace cachecomm::testing
