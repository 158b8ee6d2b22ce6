// The stage-or-pull allgather's per-rank choice: stays staged while staged copies run within the
// ratio of a local copy, pulls after a slow one and tries staging again after a growing wait.
#include <gtest/gtest.h>

#include "coll/staging_choice.hpp"

namespace cachecomm::detail {
namespace {

TEST(StagingChoice, StagesWhileStagedCopiesRunNearLocalSpeed) {
  staging_choice choice;
  for (int call = 0; call < 100; ++call) {
    ASSERT_TRUE(choice.stage_next());
    choice.record_staged(0.05 * staging_choice::ratio, 0.05);
  }
  EXPECT_TRUE(choice.staging());
}

/// Calls until the next staged try.
int pulls_before_next_try(staging_choice& choice) {
  int pulls = 0;
  while (!choice.stage_next()) ++pulls;
  return pulls;
}

TEST(StagingChoice, PullsAfterASlowStagedCopyAndTriesAgainLaterAndLater) {
  staging_choice choice;
  ASSERT_TRUE(choice.stage_next());
  choice.record_staged(1.0, 0.05);  // 20x the local copy: the readers held the lines
  EXPECT_FALSE(choice.staging());
  EXPECT_EQ(pulls_before_next_try(choice), static_cast<int>(staging_choice::first_interval));
  choice.record_staged(1.0, 0.05);
  EXPECT_EQ(pulls_before_next_try(choice), static_cast<int>(2 * staging_choice::first_interval));
  for (int tries = 0; tries < 20; ++tries) {
    choice.record_staged(1.0, 0.05);
    EXPECT_LE(pulls_before_next_try(choice), static_cast<int>(staging_choice::max_interval));
  }
  EXPECT_EQ(pulls_before_next_try(choice), 0);  // the try is this call
  // A fast try: staging again, and the wait starts over after the next slow one.
  choice.record_staged(0.05, 0.05);
  EXPECT_TRUE(choice.staging());
  EXPECT_TRUE(choice.stage_next());
  choice.record_staged(1.0, 0.05);
  EXPECT_EQ(pulls_before_next_try(choice), static_cast<int>(staging_choice::first_interval));
}

}  // namespace
}  // namespace cachecomm::detail
