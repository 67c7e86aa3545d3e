// CheckpointFailureReason and CheckpointFailureManager: which checkpoint failures count against
// execution.checkpointing.tolerable-failed-checkpoints, and when the job must fail (Flink's
// CheckpointFailureManager and CheckpointFailureReason).
//
// Rules (Flink's):
// - Counted reasons: timeout, declined, asynchronous-phase failure, storage failure. Not counted: subsumed,
//   task not ready, job failover, coordinator shutdown (they say nothing about the checkpoint's health).
// - Savepoints: a failure detected by the coordinator (timeout, storage) is not counted (a manual action;
//   failover would not help); a failure reported by a task (declined, asynchronous) is.
// - A failure counts only for a checkpoint newer than the last successful one, and once per checkpoint id.
// - A success (checkpoint or savepoint) newer than the last one resets the count.
// - When the count exceeds the tolerable number the job must fail; the count then restarts from zero.
// A small value class; thread-safety: none (the coordinator holds its mutex).
#pragma once

#include <cstdint>
#include <set>
#include <string_view>

#include "checkpoint/checkpoint_metadata.h"
#include "sluice/core/ids.h"

namespace sluice::coordinator {

enum class CheckpointFailureReason : uint8_t {
  // Counted.
  kTimeout,         // not every task acknowledged within execution.checkpointing.timeout (CHECKPOINT_EXPIRED)
  kDeclined,        // a task declined the checkpoint (CHECKPOINT_DECLINED)
  kAsyncFailure,    // a task's asynchronous snapshot part failed (CHECKPOINT_ASYNC_EXCEPTION)
  kStorageFailure,  // writing the checkpoint's _metadata failed (IO_EXCEPTION)
  // Not counted.
  kSubsumed,             // a newer checkpoint completed first (CHECKPOINT_SUBSUMED)
  kTaskNotReady,         // a task could not take part: not running yet, finishing, or ended input
                         // (CHECKPOINT_DECLINED_TASK_NOT_READY and its kin)
  kJobFailover,          // a task failed and the job fails over (TASK_FAILURE, JOB_FAILOVER_REGION)
  kCoordinatorShutdown,  // the coordinator was shut down (CHECKPOINT_COORDINATOR_SHUTDOWN)
};

std::string_view failure_reason_name(CheckpointFailureReason reason);  // "timeout", "declined", ...
// True for the four counted reasons.
bool counts_against_tolerable(CheckpointFailureReason reason);
// True when the reason is detected by a task (declined, asynchronous failure), false when by the coordinator.
bool is_task_failure(CheckpointFailureReason reason);

class CheckpointFailureManager {
 public:
  explicit CheckpointFailureManager(int32_t tolerable_failures) : tolerable_(tolerable_failures) {}

  // Records that checkpoint `id` ended in failure. Returns true when the job must fail now (the count then
  // starts again from zero).
  [[nodiscard]] bool on_failure(CheckpointId id, checkpoint::SnapshotType type, CheckpointFailureReason reason);
  // Records that checkpoint (or savepoint) `id` completed.
  void on_success(CheckpointId id);

  int32_t consecutive_failures() const { return count_; }
  int32_t tolerable_failures() const { return tolerable_; }

 private:
  int32_t tolerable_;
  int32_t count_ = 0;
  bool any_success_ = false;
  CheckpointId last_success_{0};
  std::set<CheckpointId> counted_;  // ids counted since the last reset
};

}  // namespace sluice::coordinator
