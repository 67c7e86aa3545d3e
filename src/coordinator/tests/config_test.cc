#include <gtest/gtest.h>

#include "coordinator/checkpoint_coordinator_config.h"

namespace sluice::coordinator {
namespace {

using std::chrono::milliseconds;

CheckpointCoordinatorConfig valid() {
  CheckpointCoordinatorConfig c;
  c.interval = milliseconds(1000);
  return c;
}

TEST(CheckpointCoordinatorConfig, DefaultsAreFlinks) {
  CheckpointCoordinatorConfig c;
  EXPECT_EQ(c.timeout, std::chrono::minutes(10));
  EXPECT_EQ(c.min_pause, milliseconds(0));
  EXPECT_EQ(c.max_concurrent, 1);
  EXPECT_EQ(c.tolerable_failures, 0);
  EXPECT_TRUE(valid().validate().is_ok());
}

TEST(CheckpointCoordinatorConfig, ValidationTable) {
  struct Case {
    const char* name;
    void (*mutate)(CheckpointCoordinatorConfig&);
    bool ok;
    const char* message_part;
  };
  const Case cases[] = {
      {"interval 9 ms", [](CheckpointCoordinatorConfig& c) { c.interval = milliseconds(9); }, false,
       "execution.checkpointing.interval: expected 0 (no periodic checkpoints) or at least 10 ms, got 9 ms"},
      {"interval 10 ms", [](CheckpointCoordinatorConfig& c) { c.interval = milliseconds(10); }, true, ""},
      // 0: a coordinator without periodic checkpoints (savepoints on request only).
      {"interval 0", [](CheckpointCoordinatorConfig& c) { c.interval = milliseconds(0); }, true, ""},
      {"timeout 9 ms", [](CheckpointCoordinatorConfig& c) { c.timeout = milliseconds(9); }, false,
       "execution.checkpointing.timeout: expected at least 10 ms, got 9 ms"},
      {"timeout 10 ms", [](CheckpointCoordinatorConfig& c) { c.timeout = milliseconds(10); }, true, ""},
      {"min pause -1", [](CheckpointCoordinatorConfig& c) { c.min_pause = milliseconds(-1); }, false,
       "execution.checkpointing.min-pause"},
      {"min pause 0", [](CheckpointCoordinatorConfig& c) { c.min_pause = milliseconds(0); }, true, ""},
      {"max concurrent 0", [](CheckpointCoordinatorConfig& c) { c.max_concurrent = 0; }, false,
       "execution.checkpointing.max-concurrent-checkpoints: expected at least 1, got 0"},
      {"max concurrent 5", [](CheckpointCoordinatorConfig& c) { c.max_concurrent = 5; }, true, ""},
      {"tolerable -1", [](CheckpointCoordinatorConfig& c) { c.tolerable_failures = -1; }, false,
       "execution.checkpointing.tolerable-failed-checkpoints"},
      {"tolerable 3", [](CheckpointCoordinatorConfig& c) { c.tolerable_failures = 3; }, true, ""},
      {"min pause with max concurrent 2", [](CheckpointCoordinatorConfig& c) {
         c.min_pause = milliseconds(5);
         c.max_concurrent = 2;
       }, true, ""},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    CheckpointCoordinatorConfig c = valid();
    tc.mutate(c);
    Status s = c.validate();
    EXPECT_EQ(s.is_ok(), tc.ok) << s.to_string();
    if (!tc.ok) {
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(s.message().find(tc.message_part), std::string::npos) << s.message();
    }
  }
}

TEST(CheckpointCoordinatorConfig, MinPauseMeansOneAtATime) {
  CheckpointCoordinatorConfig c = valid();
  c.max_concurrent = 3;
  EXPECT_EQ(c.effective_max_concurrent(), 3);
  c.min_pause = milliseconds(1);
  EXPECT_EQ(c.effective_max_concurrent(), 1);
}

}  // namespace
}  // namespace sluice::coordinator
