#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

#include "cachecomm/config.hpp"
#include "cachecomm/error.hpp"

namespace {

const cachecomm::detail::setting_declaration test_number{"CACHECOMM_TEST_NUMBER", "7", "test"};
const cachecomm::detail::setting_declaration test_flag{"CACHECOMM_TEST_FLAG", "off", "test"};

using cachecomm::detail::setting;
const setting<long long> test_ring{
    "CACHECOMM_TEST_RING",
    0,
    "test ring",
    {.min = 2, .max = 64, .power_of_two = true, .zero_allowed = true}};
const setting<long long> test_chunk{
    "CACHECOMM_TEST_CHUNK", 256, "test chunk", {.min = 64, .max = 4096, .multiple_of = 64}};
const setting<std::optional<long long>> test_count{
    "CACHECOMM_TEST_COUNT", "test count", {.min = 0}};
const setting<double> test_interval{
    "CACHECOMM_TEST_INTERVAL", "0.05", "test interval", {.min = 0, .min_exclusive = true}};
enum class test_colour { red = 1, green };
const setting<test_colour> test_colour_setting{
    "CACHECOMM_TEST_COLOUR",
    "red",
    "test colour",
    {{"red", test_colour::red}, {"green", test_colour::green}}};

// The message of the invalid_argument that reading `value` into `declared` throws.
template <typename T>
std::string refusal(const setting<T>& declared, const char* value) {
  auto settings = cachecomm::config::from_environment();
  settings.set(declared.name(), value);
  try {
    (void)declared.read(settings);
  } catch (const cachecomm::invalid_argument& error) {
    return error.what();
  }
  return "(accepted)";
}

TEST(config, defaults_apply_until_set) {
  ::unsetenv("CACHECOMM_TEST_NUMBER");
  auto settings = cachecomm::config::from_environment();
  EXPECT_EQ(settings.get_int("CACHECOMM_TEST_NUMBER"), 7);
  EXPECT_FALSE(settings.is_explicit("CACHECOMM_TEST_NUMBER"));
  settings.set("CACHECOMM_TEST_NUMBER", "12");
  EXPECT_EQ(settings.get_int("CACHECOMM_TEST_NUMBER"), 12);
  EXPECT_TRUE(settings.is_explicit("CACHECOMM_TEST_NUMBER"));
}

TEST(config, environment_is_read) {
  ::setenv("CACHECOMM_TEST_NUMBER", "0x10", 1);
  ::setenv("CACHECOMM_TEST_FLAG", "Yes", 1);
  auto settings = cachecomm::config::from_environment();
  EXPECT_EQ(settings.get_int("CACHECOMM_TEST_NUMBER"), 16);
  EXPECT_TRUE(settings.get_bool("CACHECOMM_TEST_FLAG"));
  ::unsetenv("CACHECOMM_TEST_NUMBER");
  ::unsetenv("CACHECOMM_TEST_FLAG");
}

TEST(config, bad_values_name_the_variable) {
  auto settings = cachecomm::config::from_environment();
  settings.set("CACHECOMM_TEST_NUMBER", "twelve");
  try {
    (void)settings.get_int("CACHECOMM_TEST_NUMBER");
    FAIL() << "no error for a non-integer";
  } catch (const cachecomm::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("CACHECOMM_TEST_NUMBER"), std::string::npos);
  }
  settings.set("CACHECOMM_TEST_FLAG", "maybe");
  EXPECT_THROW((void)settings.get_bool("CACHECOMM_TEST_FLAG"), cachecomm::invalid_argument);
}

TEST(typed_setting, reads_the_default_and_lists_it_as_text) {
  auto settings = cachecomm::config::from_environment();
  EXPECT_EQ(test_ring.read(settings), 0);
  EXPECT_EQ(test_chunk.read(settings), 256);
  EXPECT_EQ(test_count.read(settings), std::nullopt);
  EXPECT_DOUBLE_EQ(test_interval.read(settings), 0.05);
  EXPECT_EQ(test_colour_setting.read(settings), test_colour::red);
  auto all = cachecomm::declared_settings();
  auto listed = [&](const char* name) {
    return std::find_if(all.begin(), all.end(), [&](const auto& info) { return info.name == name; })
        ->default_value;
  };
  EXPECT_EQ(listed("CACHECOMM_TEST_CHUNK"), "256");
  EXPECT_EQ(listed("CACHECOMM_TEST_COUNT"), "auto");
  EXPECT_EQ(listed("CACHECOMM_TEST_INTERVAL"), "0.05");
  EXPECT_EQ(listed("CACHECOMM_TEST_COLOUR"), "red");
  settings.set("CACHECOMM_TEST_RING", "32");
  settings.set("CACHECOMM_TEST_COUNT", "0x10");
  settings.set("CACHECOMM_TEST_COLOUR", "green");
  EXPECT_EQ(test_ring.read(settings), 32);
  EXPECT_EQ(test_count.read(settings), 16);
  EXPECT_EQ(test_colour_setting.read(settings), test_colour::green);
}

TEST(typed_setting, a_bad_value_names_the_variable_the_value_and_the_range) {
  EXPECT_EQ(refusal(test_ring, "48"),
            "cachecomm: CACHECOMM_TEST_RING='48' is out of range (allowed: 0 or a power of two "
            "from 2 to 64)");
  EXPECT_EQ(refusal(test_ring, "128"),
            "cachecomm: CACHECOMM_TEST_RING='128' is out of range (allowed: 0 or a power of two "
            "from 2 to 64)");
  EXPECT_EQ(refusal(test_ring, "1"),
            "cachecomm: CACHECOMM_TEST_RING='1' is out of range (allowed: 0 or a power of two "
            "from 2 to 64)");
  EXPECT_EQ(refusal(test_chunk, "100"),
            "cachecomm: CACHECOMM_TEST_CHUNK='100' is out of range (allowed: a multiple of 64 "
            "from 64 to 4096)");
  EXPECT_EQ(refusal(test_chunk, "0"),
            "cachecomm: CACHECOMM_TEST_CHUNK='0' is out of range (allowed: a multiple of 64 from "
            "64 to 4096)");
  EXPECT_EQ(refusal(test_chunk, "4k"),
            "cachecomm: CACHECOMM_TEST_CHUNK='4k' is not an integer (allowed: a multiple of 64 "
            "from 64 to 4096)");
  EXPECT_EQ(refusal(test_count, "-1"),
            "cachecomm: CACHECOMM_TEST_COUNT='-1' is out of range (allowed: an integer from 0)");
  EXPECT_EQ(refusal(test_interval, "0"),
            "cachecomm: CACHECOMM_TEST_INTERVAL='0' is out of range (allowed: above 0)");
  EXPECT_EQ(refusal(test_interval, "nan"),
            "cachecomm: CACHECOMM_TEST_INTERVAL='nan' is out of range (allowed: above 0)");
  EXPECT_EQ(refusal(test_colour_setting, "blue"),
            "cachecomm: CACHECOMM_TEST_COLOUR='blue' is not one of red, green");
}

TEST(config, undeclared_names_are_refused_and_reported) {
  auto settings = cachecomm::config::from_environment();
  EXPECT_THROW(settings.set("CACHECOMM_NO_SUCH_THING", "1"), cachecomm::invalid_argument);
  ::setenv("CACHECOMM_BARIER", "tree", 1);  // a typo a user might make
  auto unknown = cachecomm::config::from_environment().unknown_names();
  ::unsetenv("CACHECOMM_BARIER");
  EXPECT_NE(std::find(unknown.begin(), unknown.end(), "CACHECOMM_BARIER"), unknown.end());
}

TEST(config, library_settings_are_declared) {
  auto all = cachecomm::declared_settings();
  auto has = [&](const char* name) {
    return std::any_of(all.begin(), all.end(), [&](const auto& info) { return info.name == name; });
  };
  EXPECT_TRUE(has("CACHECOMM_BARRIER"));
  EXPECT_TRUE(has("CACHECOMM_WAIT"));
  EXPECT_TRUE(has("CACHECOMM_RANKS_PER_NODE"));
  EXPECT_TRUE(has("CACHECOMM_TIMEOUT"));
}

}  // namespace
