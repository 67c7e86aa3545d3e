// Checkpoint statistics (Flink's CheckpointStatsTracker / CheckpointStatsSnapshot): per checkpoint its trigger
// time, end-to-end duration, per-subtask sync / async / alignment durations and state size, and its status;
// counts; summaries (min, avg, p50, p99, max) of duration and size over recent completed checkpoints; a
// bounded history.
//
// CheckpointStatsTracker is a value class without a lock: the coordinator calls it under its mutex and hands
// out CheckpointStatsSnapshot copies. Times: durations in ms from the monotonic clock; trigger_timestamp_ms is
// wall-clock ms since the epoch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "coordinator/checkpoint_failure_manager.h"
#include "sluice/core/ids.h"

namespace sluice::coordinator {

// What a subtask reports with its acknowledgement (Flink's SubtaskStateStats).
struct SubtaskCheckpointStats {
  int64_t sync_duration_ms = 0;       // synchronous part of the snapshot, on the task thread
  int64_t async_duration_ms = 0;      // asynchronous part (writing state)
  int64_t alignment_duration_ms = 0;  // first barrier to last barrier of the alignment (0 for sources)
  uint64_t state_size_bytes = 0;      // full size of the state the subtask's handles refer to
  uint64_t checkpointed_size_bytes = 0;  // bytes it added (uploaded) for this checkpoint; < state_size when incremental
  int64_t start_delay_ms = 0;         // trigger to the first barrier at the subtask (Flink's checkpointStartDelay)
  uint64_t persisted_data_bytes = 0;  // in-flight data persisted as channel state (unaligned checkpoints)
  bool unaligned = false;             // the subtask took this checkpoint unaligned
};

struct SubtaskStatsEntry {
  int32_t vertex = 0;
  int32_t subtask = 0;
  int64_t ack_duration_ms = 0;  // trigger to acknowledgement received
  SubtaskCheckpointStats stats;
};

// kAbandoned: still pending when the job finished normally; neither completed nor a failure of the job's
// checkpointing (Flink lists such checkpoints as failed with CHECKPOINT_COORDINATOR_SHUTDOWN; we keep them apart
// so the history agrees with num_failed).
enum class CheckpointStatus : uint8_t { kInProgress, kCompleted, kFailed, kAbandoned };

struct CheckpointStatsEntry {
  CheckpointId id{0};
  checkpoint::SnapshotType type = checkpoint::SnapshotType::kCheckpoint;
  CheckpointStatus status = CheckpointStatus::kInProgress;
  int64_t trigger_timestamp_ms = 0;
  // Trigger to completion (metadata durable) or failure; for one in progress, trigger to the snapshot.
  int64_t end_to_end_duration_ms = 0;
  // Sum of the sizes of the state handles acknowledged (for a completed checkpoint: the full size of the state
  // it refers to; Flink's "Full Checkpoint Data Size").
  uint64_t state_size_bytes = 0;
  // The part of it this checkpoint added: without the shared files of incremental handles that earlier
  // checkpoints uploaded (Flink's "Checkpointed Data Size"). Equal to state_size_bytes for full snapshots.
  uint64_t checkpointed_size_bytes = 0;
  // Sum over the acknowledged subtasks of the in-flight data persisted as channel state (Flink's "Persisted
  // Data"); 0 unless some subtask went unaligned.
  uint64_t persisted_data_bytes = 0;
  bool unaligned = false;  // some acknowledged subtask took this checkpoint unaligned
  // The largest value over the acknowledged subtasks (the slowest subtask decides the checkpoint's duration).
  int64_t sync_duration_ms = 0;
  int64_t async_duration_ms = 0;
  int64_t alignment_duration_ms = 0;
  int64_t start_delay_ms = 0;
  int32_t num_acknowledged = 0;
  int32_t num_tasks = 0;
  std::vector<SubtaskStatsEntry> subtasks;  // in acknowledgement order
  std::optional<CheckpointFailureReason> failure_reason;  // when kFailed
  std::string failure_message;                            // when kFailed: the cause
  std::string location;                                   // when kCompleted: where its _metadata is
};

struct StatsSummary {
  int64_t count = 0;  // all values below are 0 when count == 0
  int64_t min = 0;
  int64_t max = 0;
  double avg = 0.0;
  int64_t p50 = 0;  // nearest-rank quantiles over the window
  int64_t p99 = 0;
};

// Nearest-rank summary of `values` (any order).
StatsSummary summarize(std::vector<int64_t> values);

struct CheckpointStatsSnapshot {
  int64_t num_triggered = 0;
  int64_t num_in_progress = 0;
  int64_t num_completed = 0;
  int64_t num_failed = 0;  // every abort, subsumed ones included (as Flink counts them), except checkpoints
                           // still pending when the job finished normally
  int32_t consecutive_failures = 0;  // the failure manager's current count
  // Over the latest kSummaryWindow completed checkpoints and savepoints (per-checkpoint values as in
  // CheckpointStatsEntry: durations are the slowest subtask's, bytes the sum over subtasks).
  StatsSummary end_to_end_duration_ms;
  StatsSummary state_size_bytes;
  StatsSummary checkpointed_size_bytes;
  StatsSummary sync_duration_ms;
  StatsSummary async_duration_ms;
  StatsSummary alignment_duration_ms;
  StatsSummary start_delay_ms;
  StatsSummary persisted_data_bytes;
  std::optional<CheckpointStatsEntry> latest_completed;
  std::optional<CheckpointStatsEntry> latest_failed;
  std::vector<CheckpointStatsEntry> in_progress;  // ascending ids
  std::vector<CheckpointStatsEntry> history;      // the latest kHistorySize finished ones, newest first
};

class CheckpointStatsTracker {
 public:
  static constexpr size_t kHistorySize = 10;
  static constexpr size_t kSummaryWindow = 1000;

  void report_triggered(CheckpointId id, checkpoint::SnapshotType type, int64_t trigger_timestamp_ms,
                        int64_t trigger_monotonic_ms, int32_t num_tasks);
  // `handle_bytes`: full size of the state handles in this acknowledgement; `checkpointed_bytes`: what of it
  // this checkpoint added (defaults to handle_bytes). Ignored for unknown ids.
  void report_acknowledged(CheckpointId id, int32_t vertex, int32_t subtask, int64_t now_monotonic_ms,
                           const SubtaskCheckpointStats& stats, uint64_t handle_bytes,
                           std::optional<uint64_t> checkpointed_bytes = std::nullopt);
  void report_completed(CheckpointId id, int64_t now_monotonic_ms, std::string location);
  void report_failed(CheckpointId id, int64_t now_monotonic_ms, CheckpointFailureReason reason, std::string message);
  // A checkpoint still pending when the job finished normally (the coordinator shut down with the job): it
  // goes into the history as abandoned (reason kCoordinatorShutdown) and does not count in num_failed nor become
  // latest_failed (it says nothing about the job's checkpoints), so num_triggered may exceed num_completed +
  // num_failed by these.
  void report_abandoned(CheckpointId id, int64_t now_monotonic_ms, std::string message);

  CheckpointStatsSnapshot snapshot(int64_t now_monotonic_ms, int32_t consecutive_failures) const;

  // Cheap reads for gauges.
  int64_t num_triggered() const { return num_triggered_; }
  int64_t num_in_progress() const { return static_cast<int64_t>(in_progress_.size()); }
  int64_t num_completed() const { return num_completed_; }
  int64_t num_failed() const { return num_failed_; }
  const std::optional<CheckpointStatsEntry>& latest_completed() const { return latest_completed_; }

 private:
  struct InProgress {
    CheckpointStatsEntry entry;
    int64_t trigger_monotonic_ms = 0;
  };
  void finish(InProgress&& p);

  std::map<CheckpointId, InProgress> in_progress_;
  std::deque<CheckpointStatsEntry> history_;  // newest first
  // The summary window, one deque per figure, newest last.
  enum Figure { kDuration, kSize, kCheckpointed, kSync, kAsync, kAlignment, kStartDelay, kPersisted, kNumFigures };
  std::deque<int64_t> window_[kNumFigures];
  std::optional<CheckpointStatsEntry> latest_completed_;
  std::optional<CheckpointStatsEntry> latest_failed_;
  int64_t num_triggered_ = 0;
  int64_t num_completed_ = 0;
  int64_t num_failed_ = 0;
};

}  // namespace sluice::coordinator
