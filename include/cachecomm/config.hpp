// Run-time configuration: every setting is a CACHECOMM_* environment variable, declared once
// (name, default, description) next to the code that uses it and listed by `cachecomm-info`.
#pragma once

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
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
/// "..."};`. Code reads a declared setting through its typed `setting<T>` (below); a bare
/// declaration is for a variable read outside `config` (before MPI, by a test).
struct setting_declaration {
  setting_declaration(const char* name, const char* default_value, std::string description);
};

/// What an integer setting accepts; a value outside it fails naming the variable, the value and
/// this range.
struct integer_limits {
  long long min = std::numeric_limits<long long>::min();
  long long max = std::numeric_limits<long long>::max();
  bool power_of_two = false;
  long long multiple_of = 1;
  bool zero_allowed = false;  ///< 0 is accepted besides the range (it means "automatic" or "never")
  /// "0 or a power of two from 2 to 1024": how errors (and documentation) say it.
  [[nodiscard]] std::string describe() const;
};

/// What a real-valued setting accepts. NaN is never accepted.
struct real_limits {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
};

/// A setting declared once with its type: `const setting<long long> k{"CACHECOMM_X", 8, "...",
/// {.min = 2, .max = 64}};` then `k.read(settings)` wherever the code needs its value. It is
/// listed by `cachecomm-info` like any declaration (its default as text).
template <typename T>
class setting;

/// The name of a declared setting, shared by the typed settings.
class setting_name {
 public:
  setting_name(const char* name, const std::string& default_text, std::string description);
  [[nodiscard]] const char* name() const { return m_name; }
  /// Throws invalid_argument "cachecomm: <name>='<text>' <problem>".
  [[noreturn]] void refuse(const std::string& text, const std::string& problem) const;

 private:
  const char* m_name;
};

template <>
class setting<long long> : public setting_name {
 public:
  setting(const char* name, long long default_value, std::string description,
          integer_limits limits = {});
  [[nodiscard]] long long read(const config& settings) const;

 private:
  integer_limits m_limits;
};

/// An integer or the word `auto` (read as no value).
template <>
class setting<std::optional<long long>> : public setting_name {
 public:
  setting(const char* name, std::string description, integer_limits limits = {});
  [[nodiscard]] std::optional<long long> read(const config& settings) const;

 private:
  integer_limits m_limits;
};

template <>
class setting<double> : public setting_name {
 public:
  setting(const char* name, const char* default_value, std::string description,
          real_limits limits = {});
  [[nodiscard]] double read(const config& settings) const;

 private:
  real_limits m_limits;
};

/// Accepts 1/0, true/false, yes/no, on/off.
template <>
class setting<bool> : public setting_name {
 public:
  setting(const char* name, bool default_value, std::string description);
  [[nodiscard]] bool read(const config& settings) const;
};

/// One of a list of words, each standing for a value of an enumeration.
template <typename E>
requires std::is_enum_v<E>
class setting<E> : public setting_name {
 public:
  struct choice {
    std::string_view word;
    E value;
  };
  setting(const char* name, const char* default_word, std::string description,
          std::vector<choice> choices)
      : setting_name(name, default_word, std::move(description)), m_choices(std::move(choices)) {}
  [[nodiscard]] E read(const config& settings) const {
    const std::string text = settings.get(name());
    for (const choice& option : m_choices) {
      if (option.word == text) return option.value;
    }
    std::string words;
    for (const choice& option : m_choices)
      words += (words.empty() ? "" : ", ") + std::string(option.word);
    refuse(text, "is not one of " + words);
  }

 private:
  std::vector<choice> m_choices;
};
}  // namespace detail

}  // namespace cachecomm
