#include <gtest/gtest.h>

#include "coordinator/checkpoint_stats.h"

namespace sluice::coordinator {
namespace {

using checkpoint::SnapshotType;

TEST(Summarize, NearestRank) {
  StatsSummary empty = summarize({});
  EXPECT_EQ(empty.count, 0);
  EXPECT_EQ(empty.p99, 0);
  StatsSummary one = summarize({7});
  EXPECT_EQ(one.min, 7);
  EXPECT_EQ(one.max, 7);
  EXPECT_EQ(one.p50, 7);
  EXPECT_EQ(one.p99, 7);
  EXPECT_DOUBLE_EQ(one.avg, 7.0);
  std::vector<int64_t> hundred;
  for (int64_t v = 100; v >= 1; --v) hundred.push_back(v);  // unsorted input
  StatsSummary s = summarize(hundred);
  EXPECT_EQ(s.count, 100);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 100);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p99, 99);
  EXPECT_DOUBLE_EQ(s.avg, 50.5);
  StatsSummary three = summarize({10, 30, 20});
  EXPECT_EQ(three.p50, 20);
  EXPECT_EQ(three.p99, 30);
}

TEST(CheckpointStatsTracker, LifecycleOfOneCompletedAndOneFailed) {
  CheckpointStatsTracker t;
  t.report_triggered(CheckpointId(1), SnapshotType::kCheckpoint, 5000, 100, 2);
  t.report_triggered(CheckpointId(2), SnapshotType::kSavepoint, 5010, 110, 2);
  t.report_acknowledged(CheckpointId(1), 0, 0, 130, {1, 2, 3, 40}, 44);
  t.report_acknowledged(CheckpointId(9), 0, 0, 130, {}, 1);  // unknown: ignored
  CheckpointStatsSnapshot mid = t.snapshot(150, 0);
  EXPECT_EQ(mid.num_triggered, 2);
  EXPECT_EQ(mid.num_in_progress, 2);
  ASSERT_EQ(mid.in_progress.size(), 2u);
  EXPECT_EQ(mid.in_progress[0].id, CheckpointId(1));
  EXPECT_EQ(mid.in_progress[0].status, CheckpointStatus::kInProgress);
  EXPECT_EQ(mid.in_progress[0].end_to_end_duration_ms, 50);
  EXPECT_EQ(mid.in_progress[0].num_acknowledged, 1);
  EXPECT_EQ(mid.in_progress[0].state_size_bytes, 44u);
  ASSERT_EQ(mid.in_progress[0].subtasks.size(), 1u);
  EXPECT_EQ(mid.in_progress[0].subtasks[0].ack_duration_ms, 30);
  EXPECT_EQ(mid.in_progress[0].subtasks[0].stats.alignment_duration_ms, 3);
  EXPECT_EQ(mid.in_progress[0].subtasks[0].stats.state_size_bytes, 40u);

  t.report_completed(CheckpointId(1), 160, "mem://1");
  t.report_failed(CheckpointId(2), 170, CheckpointFailureReason::kTimeout, "Timeout: too slow");
  CheckpointStatsSnapshot s = t.snapshot(200, 3);
  EXPECT_EQ(s.num_in_progress, 0);
  EXPECT_EQ(s.num_completed, 1);
  EXPECT_EQ(s.num_failed, 1);
  EXPECT_EQ(s.consecutive_failures, 3);
  ASSERT_TRUE(s.latest_completed);
  EXPECT_EQ(s.latest_completed->end_to_end_duration_ms, 60);
  EXPECT_EQ(s.latest_completed->location, "mem://1");
  EXPECT_EQ(s.latest_completed->trigger_timestamp_ms, 5000);
  ASSERT_TRUE(s.latest_failed);
  EXPECT_EQ(s.latest_failed->type, SnapshotType::kSavepoint);
  EXPECT_EQ(*s.latest_failed->failure_reason, CheckpointFailureReason::kTimeout);
  EXPECT_EQ(s.latest_failed->failure_message, "Timeout: too slow");
  EXPECT_EQ(s.latest_failed->end_to_end_duration_ms, 60);
  EXPECT_EQ(s.end_to_end_duration_ms.count, 1);
  EXPECT_EQ(s.end_to_end_duration_ms.p99, 60);
  EXPECT_EQ(s.state_size_bytes.max, 44);
  ASSERT_EQ(s.history.size(), 2u);
  EXPECT_EQ(s.history[0].id, CheckpointId(2));  // newest first
  EXPECT_EQ(s.history[1].id, CheckpointId(1));
}

TEST(CheckpointStatsTracker, IncrementalCheckpointsReportFullAndCheckpointedSizes) {
  CheckpointStatsTracker t;
  t.report_triggered(CheckpointId(3), SnapshotType::kCheckpoint, 0, 0, 2);
  t.report_acknowledged(CheckpointId(3), 0, 0, 5, {}, 1000, 100);  // refers to 1000 bytes, added 100
  t.report_acknowledged(CheckpointId(3), 0, 1, 6, {}, 40);          // a full handle: added what it refers to
  t.report_completed(CheckpointId(3), 10, "/ck/chk-3");
  auto s = t.snapshot(10, 0);
  ASSERT_TRUE(s.latest_completed);
  EXPECT_EQ(s.latest_completed->state_size_bytes, 1040u);
  EXPECT_EQ(s.latest_completed->checkpointed_size_bytes, 140u);
  EXPECT_EQ(s.state_size_bytes.max, 1040);
  EXPECT_EQ(s.checkpointed_size_bytes.max, 140);
}

TEST(CheckpointStatsTracker, HistoryKeepsTheLatestTenNewestFirst) {
  CheckpointStatsTracker t;
  for (int64_t i = 1; i <= 25; ++i) {
    t.report_triggered(CheckpointId(i), SnapshotType::kCheckpoint, 0, i * 10, 1);
    t.report_acknowledged(CheckpointId(i), 0, 0, i * 10, {}, static_cast<uint64_t>(i));
    if (i % 5 == 0) {
      t.report_failed(CheckpointId(i), i * 10 + 1, CheckpointFailureReason::kDeclined, "no");
    } else {
      t.report_completed(CheckpointId(i), i * 10 + i, "loc");
    }
  }
  CheckpointStatsSnapshot s = t.snapshot(1000, 0);
  EXPECT_EQ(s.num_completed, 20);
  EXPECT_EQ(s.num_failed, 5);
  ASSERT_EQ(s.history.size(), CheckpointStatsTracker::kHistorySize);
  for (size_t k = 0; k < s.history.size(); ++k) EXPECT_EQ(s.history[k].id, CheckpointId(25 - static_cast<int64_t>(k)));
  // Summaries over completed ones only: durations i for i not divisible by 5.
  EXPECT_EQ(s.end_to_end_duration_ms.count, 20);
  EXPECT_EQ(s.end_to_end_duration_ms.min, 1);
  EXPECT_EQ(s.end_to_end_duration_ms.max, 24);
  EXPECT_EQ(s.state_size_bytes.max, 24);
}

TEST(CheckpointStatsTracker, LateFinisherIsPlacedByIdAndWindowIsBounded) {
  CheckpointStatsTracker t;
  t.report_triggered(CheckpointId(1), SnapshotType::kCheckpoint, 0, 0, 1);
  t.report_triggered(CheckpointId(2), SnapshotType::kCheckpoint, 0, 0, 1);
  t.report_completed(CheckpointId(2), 5, "");
  t.report_failed(CheckpointId(1), 6, CheckpointFailureReason::kSubsumed, "subsumed");
  CheckpointStatsSnapshot s = t.snapshot(10, 0);
  ASSERT_EQ(s.history.size(), 2u);
  EXPECT_EQ(s.history[0].id, CheckpointId(2));
  EXPECT_EQ(s.history[1].id, CheckpointId(1));

  CheckpointStatsTracker w;
  const int64_t n = static_cast<int64_t>(CheckpointStatsTracker::kSummaryWindow) + 5;
  for (int64_t i = 1; i <= n; ++i) {
    w.report_triggered(CheckpointId(i), SnapshotType::kCheckpoint, 0, 0, 1);
    w.report_completed(CheckpointId(i), i, "");
  }
  CheckpointStatsSnapshot ws = w.snapshot(0, 0);
  EXPECT_EQ(ws.num_completed, n);
  EXPECT_EQ(ws.end_to_end_duration_ms.count, static_cast<int64_t>(CheckpointStatsTracker::kSummaryWindow));
  EXPECT_EQ(ws.end_to_end_duration_ms.min, 6);  // the first five fell out of the window
  EXPECT_EQ(ws.end_to_end_duration_ms.max, n);
}

TEST(CheckpointStatsTracker, PersistedInFlightDataAndUnalignedAggregateOverSubtasks) {
  CheckpointStatsTracker t;
  t.report_triggered(CheckpointId(1), SnapshotType::kCheckpoint, 5000, 100, 3);
  SubtaskCheckpointStats aligned;
  SubtaskCheckpointStats unaligned;
  unaligned.unaligned = true;
  unaligned.persisted_data_bytes = 700;
  t.report_acknowledged(CheckpointId(1), 0, 0, 110, aligned, 10);
  t.report_acknowledged(CheckpointId(1), 1, 0, 120, unaligned, 10);
  unaligned.persisted_data_bytes = 300;
  t.report_acknowledged(CheckpointId(1), 1, 1, 130, unaligned, 10);
  t.report_completed(CheckpointId(1), 140, "mem://1");
  CheckpointStatsSnapshot s = t.snapshot(150, 0);
  ASSERT_TRUE(s.latest_completed.has_value());
  EXPECT_EQ(s.latest_completed->persisted_data_bytes, 1000u);
  EXPECT_TRUE(s.latest_completed->unaligned);
  EXPECT_FALSE(s.latest_completed->subtasks[0].stats.unaligned);
  EXPECT_EQ(s.latest_completed->subtasks[2].stats.persisted_data_bytes, 300u);
}

TEST(CheckpointStatsTracker, PerCheckpointDurationsAreTheSlowestSubtasksAndAreSummarized) {
  CheckpointStatsTracker t;
  for (int64_t id = 1; id <= 4; ++id) {
    t.report_triggered(CheckpointId(id), SnapshotType::kCheckpoint, 5000, 100 * id, 2);
    SubtaskCheckpointStats a;
    a.sync_duration_ms = 2 * id;
    a.async_duration_ms = 30;
    a.alignment_duration_ms = 10 * id;
    a.start_delay_ms = 1;
    SubtaskCheckpointStats b;
    b.sync_duration_ms = 1;
    b.async_duration_ms = 40 + id;
    b.alignment_duration_ms = 0;
    b.start_delay_ms = 7;
    b.persisted_data_bytes = static_cast<uint64_t>(100 * id);
    t.report_acknowledged(CheckpointId(id), 0, 0, 100 * id + 5, a, 10);
    t.report_acknowledged(CheckpointId(id), 1, 0, 100 * id + 9, b, 10);
    t.report_completed(CheckpointId(id), 100 * id + 20, "mem://" + std::to_string(id));
  }
  CheckpointStatsSnapshot s = t.snapshot(1000, 0);
  ASSERT_TRUE(s.latest_completed.has_value());
  EXPECT_EQ(s.latest_completed->sync_duration_ms, 8);
  EXPECT_EQ(s.latest_completed->async_duration_ms, 44);
  EXPECT_EQ(s.latest_completed->alignment_duration_ms, 40);
  EXPECT_EQ(s.latest_completed->start_delay_ms, 7);
  EXPECT_EQ(s.alignment_duration_ms.count, 4);
  EXPECT_EQ(s.alignment_duration_ms.min, 10);
  EXPECT_EQ(s.alignment_duration_ms.max, 40);
  EXPECT_DOUBLE_EQ(s.alignment_duration_ms.avg, 25.0);
  EXPECT_EQ(s.alignment_duration_ms.p50, 20);
  EXPECT_EQ(s.alignment_duration_ms.p99, 40);
  EXPECT_EQ(s.sync_duration_ms.max, 8);
  EXPECT_EQ(s.async_duration_ms.min, 41);
  EXPECT_EQ(s.start_delay_ms.p50, 7);
  EXPECT_EQ(s.persisted_data_bytes.max, 400);
  EXPECT_EQ(s.persisted_data_bytes.min, 100);
}

}  // namespace
}  // namespace sluice::coordinator
