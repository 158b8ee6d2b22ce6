// Run-time configuration: every setting is a CACHECOMM_* environment variable, declared once
// (name, default, description) next to the code that uses it and listed by `cachecomm-info`.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cachecomm {

/// One declared setting, as `cachecomm-info` prints it.
struct setting_info {
  std::string name;           ///< full variable name, e.g. "CACHECOMM_BARRIER"
  std::string default_value;  ///< used when neither the environment nor the program sets it
  std::string description;
};

/// Every setting declared by the library, sorted by name.
[[nodiscard]] std::vector<setting_info> declared_settings();

/// A snapshot of the settings: environment values, overridden by whatever the program sets.
class config {
 public:
  /// Reads every CACHECOMM_* variable. Unknown names are kept (and reported by `unknown_names`).
  [[nodiscard]] static config from_environment();

  /// Programmatic override; `name` must be a declared setting.
  config& set(std::string_view name, std::string value);

  /// Value of a declared setting (explicit value or its default). Throws for undeclared names.
  [[nodiscard]] std::string get(std::string_view name) const;
  /// Integer value; throws invalid_argument naming the variable when it is not an integer.
  [[nodiscard]] long long get_int(std::string_view name) const;
  [[nodiscard]] double get_double(std::string_view name) const;
  /// Accepts 1/0, true/false, yes/no, on/off.
  [[nodiscard]] bool get_bool(std::string_view name) const;
  /// True when the value came from the environment or `set`, not from the default.
  [[nodiscard]] bool is_explicit(std::string_view name) const;

  /// CACHECOMM_* variables in the environment that no code declares (likely typos).
  [[nodiscard]] std::vector<std::string> unknown_names() const;

 private:
  std::map<std::string, std::string, std::less<>> m_values;
};

namespace detail {
/// Declares a setting at namespace scope: `const detail::setting_declaration k{"CACHECOMM_X", "1",
/// "..."};`
struct setting_declaration {
  setting_declaration(const char* name, const char* default_value, std::string description);
};
}  // namespace detail

}  // namespace cachecomm
