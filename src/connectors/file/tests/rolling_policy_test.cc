// The rolling policies' decisions (rolling_policy.h), exhaustively over the boundaries: time is a parameter,
// nothing sleeps.
#include <gtest/gtest.h>

#include "sluice/connectors/file/rolling_policy.h"

namespace sluice::file {
namespace {

RollingPolicy small_default() {
  RollingPolicy p = RollingPolicy::defaults();
  p.part_size_bytes = 100;
  p.rollover_interval_ms = 1'000;
  p.inactivity_interval_ms = 300;
  return p;
}

TEST(RollingPolicyTest, DefaultsAreFlinksDefaultRollingPolicy) {
  const RollingPolicy p = RollingPolicy::defaults();
  EXPECT_EQ(p.kind, RollingPolicy::Kind::kDefault);
  EXPECT_EQ(p.part_size_bytes, 128ll * 1024 * 1024);
  EXPECT_EQ(p.rollover_interval_ms, 60'000);
  EXPECT_EQ(p.inactivity_interval_ms, 60'000);
  EXPECT_TRUE(p.validate().is_ok());
}

TEST(RollingPolicyTest, SizeRollsAtThePartSizeOnEventAndAtCheckpoints) {
  const RollingPolicy p = small_default();
  for (int64_t size : {0, 1, 99}) {
    EXPECT_FALSE(p.should_roll_on_event({0, 0, size})) << size;
    EXPECT_FALSE(p.should_roll_on_checkpoint({0, 0, size})) << size;
  }
  for (int64_t size : {100, 101, 1 << 20}) {
    EXPECT_TRUE(p.should_roll_on_event({0, 0, size})) << size;
    EXPECT_TRUE(p.should_roll_on_checkpoint({0, 0, size})) << size;
  }
}

TEST(RollingPolicyTest, RolloverIntervalCountsFromCreationWhateverTheWrites) {
  const RollingPolicy p = small_default();
  // Created at 5000, written just now: only the open time counts.
  EXPECT_FALSE(p.should_roll_on_processing_time({5'000, 5'999, 10}, 5'999));
  EXPECT_TRUE(p.should_roll_on_processing_time({5'000, 6'000, 10}, 6'000));
  EXPECT_TRUE(p.should_roll_on_processing_time({5'000, 7'000, 10}, 7'000));
}

TEST(RollingPolicyTest, InactivityIntervalCountsFromTheLastWrite) {
  const RollingPolicy p = small_default();
  EXPECT_FALSE(p.should_roll_on_processing_time({5'000, 5'400, 10}, 5'699));
  EXPECT_TRUE(p.should_roll_on_processing_time({5'000, 5'400, 10}, 5'700));
  // A clock that went back (another host after a restore) rolls nothing early.
  EXPECT_FALSE(p.should_roll_on_processing_time({5'000, 5'400, 10}, 4'000));
}

TEST(RollingPolicyTest, TheDefaultPolicyKeepsASmallRecentFileOpenAtACheckpoint) {
  EXPECT_FALSE(small_default().should_roll_on_checkpoint({0, 0, 99}));
}

TEST(RollingPolicyTest, OnCheckpointRollsEveryCheckpointAndBySizeButNeverByTime) {
  const RollingPolicy p = RollingPolicy::on_checkpoint(100);
  EXPECT_EQ(p.kind, RollingPolicy::Kind::kOnCheckpoint);
  EXPECT_TRUE(p.should_roll_on_checkpoint({0, 0, 0}));
  EXPECT_FALSE(p.should_roll_on_event({0, 0, 99}));
  EXPECT_TRUE(p.should_roll_on_event({0, 0, 100}));
  EXPECT_FALSE(p.should_roll_on_processing_time({0, 0, 10}, 1'000'000'000));
  EXPECT_EQ(RollingPolicy::on_checkpoint().part_size_bytes, RollingPolicy::kDefaultPartSizeBytes);
}

TEST(RollingPolicyTest, ValidateNamesTheFieldThatIsNotPositive) {
  RollingPolicy p = small_default();
  p.part_size_bytes = 0;
  EXPECT_NE(p.validate().message().find("part_size_bytes"), std::string::npos);
  p = small_default();
  p.rollover_interval_ms = -1;
  EXPECT_NE(p.validate().message().find("rollover_interval_ms"), std::string::npos);
  p = small_default();
  p.inactivity_interval_ms = 0;
  EXPECT_NE(p.validate().message().find("inactivity_interval_ms"), std::string::npos);
  p = RollingPolicy::on_checkpoint(10);
  p.inactivity_interval_ms = 0;  // ignored by on-checkpoint rolling
  EXPECT_TRUE(p.validate().is_ok());
}

}  // namespace
}  // namespace sluice::file
