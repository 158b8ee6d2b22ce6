#include "cachecomm/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "cachecomm/error.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX global

namespace cachecomm {

namespace {

// Function-local statics make registration safe from other translation units' static initializers.
std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<std::string, setting_info, std::less<>>& registry() {
  static std::map<std::string, setting_info, std::less<>> settings;
  return settings;
}

const setting_info& declared(std::string_view name) {
  std::lock_guard lock(registry_mutex());
  auto found = registry().find(name);
  if (found == registry().end()) {
    throw invalid_argument("cachecomm: no setting named " + std::string(name) + " is declared");
  }
  return found->second;
}

constexpr std::string_view prefix = "CACHECOMM_";

}  // namespace

namespace detail {
setting_declaration::setting_declaration(const char* name, const char* default_value,
                                         std::string description) {
  std::lock_guard lock(registry_mutex());
  registry()[name] = setting_info{name, default_value, std::move(description)};
}
}  // namespace detail

std::vector<setting_info> declared_settings() {
  std::lock_guard lock(registry_mutex());
  std::vector<setting_info> all;
  all.reserve(registry().size());
  for (const auto& [name, info] : registry()) all.push_back(info);
  return all;
}

config config::from_environment() {
  config result;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    if (!text.starts_with(prefix)) continue;
    auto equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    result.m_values.emplace(std::string(text.substr(0, equals)),
                            std::string(text.substr(equals + 1)));
  }
  return result;
}

config& config::set(std::string_view name, std::string value) {
  (void)declared(name);
  m_values.insert_or_assign(std::string(name), std::move(value));
  return *this;
}

std::string config::get(std::string_view name) const {
  const auto& info = declared(name);
  auto found = m_values.find(name);
  return found != m_values.end() ? found->second : info.default_value;
}

bool config::is_explicit(std::string_view name) const {
  (void)declared(name);
  return m_values.find(name) != m_values.end();
}

long long config::get_int(std::string_view name) const {
  std::string text = get(name);
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 0);
  if (text.empty() || errno != 0 || end == nullptr || *end != '\0') {
    throw invalid_argument("cachecomm: " + std::string(name) + "='" + text + "' is not an integer");
  }
  return value;
}

double config::get_double(std::string_view name) const {
  std::string text = get(name);
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || end == nullptr || *end != '\0') {
    throw invalid_argument("cachecomm: " + std::string(name) + "='" + text + "' is not a number");
  }
  return value;
}

bool config::get_bool(std::string_view name) const {
  std::string text = get(name);
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (text == "1" || text == "true" || text == "yes" || text == "on") return true;
  if (text == "0" || text == "false" || text == "no" || text == "off" || text.empty()) return false;
  throw invalid_argument("cachecomm: " + std::string(name) + "='" + text +
                         "' is not a boolean (use 1/0, true/false, yes/no, on/off)");
}

std::vector<std::string> config::unknown_names() const {
  std::vector<std::string> unknown;
  std::lock_guard lock(registry_mutex());
  for (const auto& [name, value] : m_values) {
    if (registry().find(name) == registry().end()) unknown.push_back(name);
  }
  return unknown;
}

}  // namespace cachecomm
