#include <gtest/gtest.h>
#include <stdlib.h>

#include "cachecomm/config.hpp"
#include "cachecomm/error.hpp"

namespace {

const cachecomm::detail::setting_declaration test_number{"CACHECOMM_TEST_NUMBER", "7", "test"};
const cachecomm::detail::setting_declaration test_flag{"CACHECOMM_TEST_FLAG", "off", "test"};

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
