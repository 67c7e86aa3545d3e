#include "rest/checkpoint_stats_rest.h"

#include <gtest/gtest.h>

namespace sluice::rest {
namespace {

using checkpoint::SnapshotType;
using coordinator::CheckpointFailureReason;
using coordinator::CheckpointStatsTracker;

// Checkpoint 1 completed (two subtasks of vertex 0 and one of vertex 1), 2 failed, 3 in progress.
CheckpointView three_checkpoints() {
  CheckpointStatsTracker t;
  t.report_triggered(CheckpointId(1), SnapshotType::kCheckpoint, 5000, 100, 3);
  t.report_acknowledged(CheckpointId(1), 0, 0, 110, {1, 2, 0, 10, 10}, 10);
  t.report_acknowledged(CheckpointId(1), 0, 1, 120, {1, 2, 0, 20, 20}, 20);
  coordinator::SubtaskCheckpointStats unaligned{1, 2, 0, 30, 30};
  unaligned.unaligned = true;
  unaligned.persisted_data_bytes = 7;
  t.report_acknowledged(CheckpointId(1), 1, 0, 125, unaligned, 30);
  t.report_completed(CheckpointId(1), 130, "/ck/job/chk-1");
  t.report_triggered(CheckpointId(2), SnapshotType::kCheckpoint, 6000, 200, 3);
  t.report_failed(CheckpointId(2), 260, CheckpointFailureReason::kTimeout, "too slow");
  t.report_triggered(CheckpointId(3), SnapshotType::kCheckpoint, 7000, 300, 3);
  CheckpointView view;
  view.stats = t.snapshot(310, 1);
  view.num_restored = 1;
  view.latest_restored = RestoredCheckpoint{4, "/old/chk-4", false};
  return view;
}

TEST(FlinkCheckpointStatistics, CountsLatestAndHistoryInFlinksShape) {
  nlohmann::json j = flink_checkpoint_statistics(three_checkpoints());
  EXPECT_EQ(j["counts"]["total"], 3);
  EXPECT_EQ(j["counts"]["completed"], 1);
  EXPECT_EQ(j["counts"]["failed"], 1);
  EXPECT_EQ(j["counts"]["in_progress"], 1);
  EXPECT_EQ(j["counts"]["restored"], 1);

  const nlohmann::json& done = j["latest"]["completed"];
  EXPECT_EQ(done["id"], 1);
  EXPECT_EQ(done["status"], "COMPLETED");
  EXPECT_EQ(done["is_savepoint"], false);
  EXPECT_EQ(done["checkpoint_type"], "UNALIGNED_CHECKPOINT");
  EXPECT_EQ(done["trigger_timestamp"], 5000);
  EXPECT_EQ(done["latest_ack_timestamp"], 5025);
  EXPECT_EQ(done["end_to_end_duration"], 30);
  EXPECT_EQ(done["state_size"], 60);
  EXPECT_EQ(done["persisted_data"], 7);
  EXPECT_EQ(done["num_subtasks"], 3);
  EXPECT_EQ(done["num_acknowledged_subtasks"], 3);
  EXPECT_EQ(done["external_path"], "/ck/job/chk-1");
  EXPECT_EQ(done["tasks"]["0"]["num_acknowledged_subtasks"], 2);
  EXPECT_EQ(done["tasks"]["0"]["state_size"], 30);
  EXPECT_EQ(done["tasks"]["1"]["persisted_data"], 7);

  const nlohmann::json& failed = j["latest"]["failed"];
  EXPECT_EQ(failed["id"], 2);
  EXPECT_EQ(failed["status"], "FAILED");
  EXPECT_EQ(failed["failure_timestamp"], 6060);
  EXPECT_NE(failed["failure_message"].get<std::string>().find("too slow"), std::string::npos);
  EXPECT_TRUE(j["latest"]["savepoint"].is_null());
  EXPECT_EQ(j["latest"]["restored"]["id"], 4);
  EXPECT_EQ(j["latest"]["restored"]["external_path"], "/old/chk-4");

  // Newest first, the one in progress included.
  ASSERT_EQ(j["history"].size(), 3u);
  EXPECT_EQ(j["history"][0]["id"], 3);
  EXPECT_EQ(j["history"][0]["status"], "IN_PROGRESS");
  EXPECT_EQ(j["history"][1]["id"], 2);
  EXPECT_EQ(j["history"][2]["id"], 1);

  EXPECT_EQ(j["summary"]["state_size"]["max"], 60);
  EXPECT_EQ(j["summary"]["end_to_end_duration"]["p50"], 30);
  EXPECT_EQ(j["summary"]["processed_data"]["max"], 0);
}

TEST(FlinkCheckpointStatistics, NothingYet) {
  nlohmann::json j = flink_checkpoint_statistics(CheckpointView{});
  EXPECT_EQ(j["counts"]["total"], 0);
  EXPECT_TRUE(j["latest"]["completed"].is_null());
  EXPECT_TRUE(j["latest"]["restored"].is_null());
  EXPECT_TRUE(j["history"].is_array());
  EXPECT_TRUE(j["history"].empty());
}

}  // namespace
}  // namespace sluice::rest
