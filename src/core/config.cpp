#include "cachecomm/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <sstream>
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

setting_name::setting_name(const char* name, const std::string& default_text,
                           std::string description)
    : m_name(name) {
  std::lock_guard lock(registry_mutex());
  registry()[name] = setting_info{name, default_text, std::move(description)};
}

void setting_name::refuse(const std::string& text, const std::string& problem) const {
  throw invalid_argument("cachecomm: " + std::string(m_name) + "='" + text + "' " + problem);
}

namespace {
std::string real_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}
}  // namespace

std::string integer_limits::describe() const {
  constexpr auto lowest = std::numeric_limits<long long>::min();
  constexpr auto highest = std::numeric_limits<long long>::max();
  std::string text = zero_allowed ? "0 or " : "";
  if (power_of_two) {
    text += "a power of two";
  } else if (multiple_of > 1) {
    text += "a multiple of " + std::to_string(multiple_of);
  } else {
    text += "an integer";
  }
  if (min != lowest && max != highest) {
    text += " from " + std::to_string(min) + " to " + std::to_string(max);
  } else if (min != lowest) {
    text += " from " + std::to_string(min);
  } else if (max != highest) {
    text += " up to " + std::to_string(max);
  }
  return text;
}

namespace {
long long read_integer(const setting_name& declared, const std::string& text,
                       const integer_limits& limits) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 0);
  if (text.empty() || errno != 0 || end == nullptr || *end != '\0') {
    declared.refuse(text, "is not an integer (allowed: " + limits.describe() + ")");
  }
  if (value == 0 && limits.zero_allowed) return value;
  const bool in_range = value >= limits.min && value <= limits.max &&
                        (!limits.power_of_two || (value > 0 && (value & (value - 1)) == 0)) &&
                        (limits.multiple_of <= 1 || value % limits.multiple_of == 0);
  if (!in_range) declared.refuse(text, "is out of range (allowed: " + limits.describe() + ")");
  return value;
}
}  // namespace

setting<long long>::setting(const char* name, long long default_value, std::string description,
                            integer_limits limits)
    : setting_name(name, std::to_string(default_value), std::move(description)), m_limits(limits) {}

long long setting<long long>::read(const config& settings) const {
  return read_integer(*this, settings.get(name()), m_limits);
}

setting<std::optional<long long>>::setting(const char* name, std::string description,
                                           integer_limits limits)
    : setting_name(name, "auto", std::move(description)), m_limits(limits) {}

std::optional<long long> setting<std::optional<long long>>::read(const config& settings) const {
  const std::string text = settings.get(name());
  if (text == "auto") return std::nullopt;
  return read_integer(*this, text, m_limits);
}

setting<double>::setting(const char* name, const char* default_value, std::string description,
                         real_limits limits)
    : setting_name(name, default_value, std::move(description)), m_limits(limits) {}

double setting<double>::read(const config& settings) const {
  const std::string text = settings.get(name());
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  std::string range = (m_limits.min_exclusive ? "above " : "from ") + real_text(m_limits.min);
  if (m_limits.max != std::numeric_limits<double>::infinity())
    range += " up to " + real_text(m_limits.max);
  if (text.empty() || errno != 0 || end == nullptr || *end != '\0') {
    refuse(text, "is not a number (allowed: " + range + ")");
  }
  // Written so that NaN fails too (it compares false with every bound).
  const bool above_min = m_limits.min_exclusive ? value > m_limits.min : value >= m_limits.min;
  if (!(above_min && value <= m_limits.max))
    refuse(text, "is out of range (allowed: " + range + ")");
  return value;
}

setting<bool>::setting(const char* name, bool default_value, std::string description)
    : setting_name(name, default_value ? "1" : "0", std::move(description)) {}

bool setting<bool>::read(const config& settings) const {
  return settings.get_bool(name());
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
