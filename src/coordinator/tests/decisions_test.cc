#include <gtest/gtest.h>

#include "coordinator/checkpoint_decisions.h"

namespace sluice::coordinator {
namespace {

using checkpoint::SnapshotType;
using std::chrono::milliseconds;

CheckpointCoordinatorConfig config(int32_t max_concurrent, int64_t min_pause_ms) {
  CheckpointCoordinatorConfig c;
  c.interval = milliseconds(100);
  c.timeout = milliseconds(500);
  c.max_concurrent = max_concurrent;
  c.min_pause = milliseconds(min_pause_ms);
  return c;
}

TriggerState running(int32_t pending, std::optional<int64_t> last_completion = std::nullopt, int64_t due = 0) {
  TriggerState s;
  s.periodic_scheduling = true;
  s.next_periodic_due_ms = due;
  s.num_pending = pending;
  s.last_completion_ms = last_completion;
  return s;
}

TEST(DecideTrigger, Table) {
  struct Case {
    const char* name;
    TriggerRequestKind kind;
    TriggerState state;
    int64_t now;
    CheckpointCoordinatorConfig config;
    TriggerWaitReason expected;
    int64_t retry_at;
  };
  TriggerState shut = running(0);
  shut.shut_down = true;
  TriggerState stopped = running(0);
  stopped.periodic_scheduling = false;
  const Case cases[] = {
      {"idle periodic, due", TriggerRequestKind::kPeriodic, running(0, {}, 100), 100, config(1, 0),
       TriggerWaitReason::kNone, 0},
      {"periodic not due", TriggerRequestKind::kPeriodic, running(0, {}, 100), 99, config(1, 0),
       TriggerWaitReason::kNotDue, 100},
      {"periodic, scheduler stopped", TriggerRequestKind::kPeriodic, stopped, 1000, config(1, 0),
       TriggerWaitReason::kPeriodicSchedulingStopped, 0},
      {"manual ignores the schedule", TriggerRequestKind::kManualCheckpoint, stopped, 0, config(1, 0),
       TriggerWaitReason::kNone, 0},
      {"one pending, max 1", TriggerRequestKind::kPeriodic, running(1), 100, config(1, 0),
       TriggerWaitReason::kTooManyConcurrent, 0},
      {"one pending, max 2", TriggerRequestKind::kPeriodic, running(1), 100, config(2, 0), TriggerWaitReason::kNone,
       0},
      {"two pending, max 2", TriggerRequestKind::kManualCheckpoint, running(2), 100, config(2, 0),
       TriggerWaitReason::kTooManyConcurrent, 0},
      {"min pause makes max 2 into 1", TriggerRequestKind::kManualCheckpoint, running(1), 100, config(2, 10),
       TriggerWaitReason::kTooManyConcurrent, 0},
      {"min pause not elapsed", TriggerRequestKind::kPeriodic, running(0, 95), 100, config(1, 10),
       TriggerWaitReason::kMinPause, 105},
      {"min pause just elapsed", TriggerRequestKind::kPeriodic, running(0, 90), 100, config(1, 10),
       TriggerWaitReason::kNone, 0},
      {"no completion yet: no pause", TriggerRequestKind::kPeriodic, running(0), 0, config(1, 1000),
       TriggerWaitReason::kNone, 0},
      {"savepoint is forced past max concurrent", TriggerRequestKind::kSavepoint, running(5), 0, config(1, 0),
       TriggerWaitReason::kNone, 0},
      {"savepoint is forced past min pause", TriggerRequestKind::kSavepoint, running(0, 99), 100, config(1, 50),
       TriggerWaitReason::kNone, 0},
      {"shut down refuses savepoints", TriggerRequestKind::kSavepoint, shut, 100, config(1, 0),
       TriggerWaitReason::kShutDown, 0},
      {"shut down refuses manual", TriggerRequestKind::kManualCheckpoint, shut, 100, config(1, 0),
       TriggerWaitReason::kShutDown, 0},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    TriggerDecision d = decide_trigger(tc.kind, tc.state, tc.now, tc.config);
    EXPECT_EQ(d.reason, tc.expected) << wait_reason_name(d.reason);
    EXPECT_EQ(d.trigger(), tc.expected == TriggerWaitReason::kNone);
    if (tc.retry_at != 0) {
      EXPECT_EQ(d.retry_at_ms, tc.retry_at);
    }
  }
}

// Every combination of a small grid, against the rule written as one boolean formula.
TEST(DecideTrigger, ExhaustiveGridMatchesTheRule) {
  const TriggerRequestKind kinds[] = {TriggerRequestKind::kPeriodic, TriggerRequestKind::kManualCheckpoint,
                                      TriggerRequestKind::kSavepoint};
  const std::optional<int64_t> completions[] = {std::nullopt, 0, 40, 50, 60};
  int checked = 0;
  for (TriggerRequestKind kind : kinds) {
    for (bool shut_down : {false, true}) {
      for (bool scheduling : {false, true}) {
        for (int64_t due : {0, 50, 51}) {
          for (int32_t pending = 0; pending <= 3; ++pending) {
            for (std::optional<int64_t> last : completions) {
              for (int32_t max_concurrent = 1; max_concurrent <= 3; ++max_concurrent) {
                for (int64_t min_pause : {0, 5, 10}) {
                  TriggerState s;
                  s.shut_down = shut_down;
                  s.periodic_scheduling = scheduling;
                  s.next_periodic_due_ms = due;
                  s.num_pending = pending;
                  s.last_completion_ms = last;
                  const CheckpointCoordinatorConfig c = config(max_concurrent, min_pause);
                  const int64_t now = 50;
                  const bool periodic = kind == TriggerRequestKind::kPeriodic;
                  const bool forced = kind == TriggerRequestKind::kSavepoint;
                  const int32_t max_eff = min_pause > 0 ? 1 : max_concurrent;
                  const bool expected = !shut_down && (!periodic || (scheduling && now >= due)) &&
                                        (forced || (pending < max_eff && (!last || now - *last >= min_pause)));
                  const TriggerDecision d = decide_trigger(kind, s, now, c);
                  ASSERT_EQ(d.trigger(), expected)
                      << "kind " << static_cast<int>(kind) << " shut " << shut_down << " sched " << scheduling
                      << " due " << due << " pending " << pending << " last " << last.value_or(-1) << " max "
                      << max_concurrent << " pause " << min_pause << " -> " << wait_reason_name(d.reason);
                  // retry_at is exact: one ms earlier the same reason holds, at retry_at it does not.
                  if (d.reason == TriggerWaitReason::kNotDue || d.reason == TriggerWaitReason::kMinPause) {
                    EXPECT_GT(d.retry_at_ms, now);
                    EXPECT_EQ(decide_trigger(kind, s, d.retry_at_ms - 1, c).reason, d.reason);
                    EXPECT_NE(decide_trigger(kind, s, d.retry_at_ms, c).reason, d.reason);
                  }
                  if (!d.trigger()) {
                    EXPECT_FALSE(describe_wait(d, s, now, c).empty());
                  }
                  ++checked;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 3 * 2 * 2 * 3 * 4 * 5 * 3 * 3);
}

TEST(DecideTrigger, DescribeNamesTheNumbers) {
  CheckpointCoordinatorConfig c = config(2, 0);
  TriggerState s = running(2);
  TriggerDecision d = decide_trigger(TriggerRequestKind::kManualCheckpoint, s, 0, c);
  EXPECT_EQ(describe_wait(d, s, 0, c), "2 checkpoint(s) pending, execution.checkpointing.max-concurrent-checkpoints allows 2");
  c = config(1, 30);
  s = running(0, 100);
  d = decide_trigger(TriggerRequestKind::kManualCheckpoint, s, 110, c);
  EXPECT_EQ(describe_wait(d, s, 110, c),
            "execution.checkpointing.min-pause is 30 ms and the last checkpoint completed 10 ms ago");
}

TEST(IsExpired, Boundary) {
  const CheckpointCoordinatorConfig c = config(1, 0);  // timeout 500 ms
  EXPECT_FALSE(is_expired(1000, 1000, c));
  EXPECT_FALSE(is_expired(1000, 1499, c));
  EXPECT_TRUE(is_expired(1000, 1500, c));
  EXPECT_TRUE(is_expired(1000, 9999, c));
}

TEST(SubsumedBy, OnlyOlderCheckpointsOfACompletedCheckpoint) {
  const std::vector<PendingView> pending = {{CheckpointId(7), SnapshotType::kCheckpoint},
                                            {CheckpointId(3), SnapshotType::kCheckpoint},
                                            {CheckpointId(4), SnapshotType::kSavepoint},
                                            {CheckpointId(9), SnapshotType::kCheckpoint}};
  EXPECT_EQ(subsumed_by(CheckpointId(8), SnapshotType::kCheckpoint, pending),
            (std::vector<CheckpointId>{CheckpointId(3), CheckpointId(7)}));
  EXPECT_TRUE(subsumed_by(CheckpointId(8), SnapshotType::kSavepoint, pending).empty());
  EXPECT_TRUE(subsumed_by(CheckpointId(3), SnapshotType::kCheckpoint, pending).empty());
  EXPECT_TRUE(subsumed_by(CheckpointId(100), SnapshotType::kCheckpoint, {}).empty());
}

}  // namespace
}  // namespace sluice::coordinator
