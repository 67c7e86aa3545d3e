#include "coordinator/checkpoint_failure_manager.h"

namespace sluice::coordinator {

std::string_view failure_reason_name(CheckpointFailureReason reason) {
  switch (reason) {
    case CheckpointFailureReason::kTimeout: return "timeout";
    case CheckpointFailureReason::kDeclined: return "declined";
    case CheckpointFailureReason::kAsyncFailure: return "asynchronous phase failed";
    case CheckpointFailureReason::kStorageFailure: return "storage failure";
    case CheckpointFailureReason::kSubsumed: return "subsumed";
    case CheckpointFailureReason::kTaskNotReady: return "task not ready";
    case CheckpointFailureReason::kJobFailover: return "job failover";
    case CheckpointFailureReason::kCoordinatorShutdown: return "coordinator shutdown";
  }
  return "unknown";
}

bool counts_against_tolerable(CheckpointFailureReason reason) {
  switch (reason) {
    case CheckpointFailureReason::kTimeout:
    case CheckpointFailureReason::kDeclined:
    case CheckpointFailureReason::kAsyncFailure:
    case CheckpointFailureReason::kStorageFailure:
      return true;
    case CheckpointFailureReason::kSubsumed:
    case CheckpointFailureReason::kTaskNotReady:
    case CheckpointFailureReason::kJobFailover:
    case CheckpointFailureReason::kCoordinatorShutdown:
      return false;
  }
  return false;
}

bool is_task_failure(CheckpointFailureReason reason) {
  return reason == CheckpointFailureReason::kDeclined || reason == CheckpointFailureReason::kAsyncFailure ||
         reason == CheckpointFailureReason::kTaskNotReady;
}

bool CheckpointFailureManager::on_failure(CheckpointId id, checkpoint::SnapshotType type,
                                          CheckpointFailureReason reason) {
  if (!counts_against_tolerable(reason)) return false;
  if (type == checkpoint::SnapshotType::kSavepoint && !is_task_failure(reason)) return false;
  if (any_success_ && id <= last_success_) return false;  // older than a success: says nothing new
  if (!counted_.insert(id).second) return false;           // each checkpoint counts once
  ++count_;
  if (count_ <= tolerable_) return false;
  count_ = 0;
  counted_.clear();
  return true;
}

void CheckpointFailureManager::on_success(CheckpointId id) {
  if (any_success_ && id <= last_success_) return;
  any_success_ = true;
  last_success_ = id;
  count_ = 0;
  counted_.clear();
}

}  // namespace sluice::coordinator
