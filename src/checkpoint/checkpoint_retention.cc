#include "checkpoint/checkpoint_retention.h"

#include <cctype>
#include <optional>
#include <string>

namespace sluice::checkpoint {
namespace {

bool discardable(const RetainedCheckpointInfo& c) { return c.owned && c.type == SnapshotType::kCheckpoint; }

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

}  // namespace

Result<RetentionDecision> decide_retention(const std::vector<RetainedCheckpointInfo>& retained,
                                           const RetainedCheckpointInfo& added, int32_t num_retained) {
  if (num_retained < 1) {
    return Status::invalid_argument("execution.checkpointing.num-retained: expected at least 1, got " +
                                    std::to_string(num_retained));
  }
  for (size_t i = 1; i < retained.size(); ++i) {
    if (retained[i].id <= retained[i - 1].id) {
      return Status::invalid_argument("retained checkpoints are not in increasing id order at checkpoint " +
                                      std::to_string(retained[i].id.value()));
    }
  }
  if (!retained.empty() && added.id <= retained.back().id) {
    return Status::failed_precondition("checkpoint " + std::to_string(added.id.value()) +
                                       " completed after checkpoint " + std::to_string(retained.back().id.value()) +
                                       "; checkpoint ids must strictly increase");
  }
  std::vector<RetainedCheckpointInfo> all = retained;
  all.push_back(added);

  // The newest entry and the newest non-savepoint are never subsumed.
  std::optional<CheckpointId> newest_checkpoint;
  for (const RetainedCheckpointInfo& c : all) {
    if (c.type == SnapshotType::kCheckpoint) newest_checkpoint = c.id;
  }
  size_t excess = all.size() > static_cast<size_t>(num_retained) ? all.size() - static_cast<size_t>(num_retained) : 0;
  RetentionDecision d;
  for (const RetainedCheckpointInfo& c : all) {
    bool protected_entry = c.id == added.id || (newest_checkpoint && c.id == *newest_checkpoint);
    if (excess > 0 && !protected_entry) {
      --excess;
      d.subsumed.push_back(c.id);
      if (discardable(c)) d.to_discard.push_back(c.id);
    } else {
      d.retained.push_back(c.id);
    }
  }
  return d;
}

Result<ExternalizedCheckpointRetention> parse_externalized_checkpoint_retention(std::string_view text) {
  for (auto mode : {ExternalizedCheckpointRetention::kNoExternalizedCheckpoints,
                    ExternalizedCheckpointRetention::kDeleteOnCancellation,
                    ExternalizedCheckpointRetention::kRetainOnCancellation}) {
    if (equals_ignore_case(text, to_string(mode))) return mode;
  }
  return Status::invalid_argument(
      "execution.checkpointing.externalized-checkpoint-retention: expected NO_EXTERNALIZED_CHECKPOINTS, "
      "DELETE_ON_CANCELLATION or RETAIN_ON_CANCELLATION, got '" +
      std::string(text) + "'");
}

std::string_view to_string(ExternalizedCheckpointRetention mode) {
  switch (mode) {
    case ExternalizedCheckpointRetention::kNoExternalizedCheckpoints: return "NO_EXTERNALIZED_CHECKPOINTS";
    case ExternalizedCheckpointRetention::kDeleteOnCancellation: return "DELETE_ON_CANCELLATION";
    case ExternalizedCheckpointRetention::kRetainOnCancellation: return "RETAIN_ON_CANCELLATION";
  }
  return "?";
}

std::string_view to_string(JobTerminalStatus status) {
  switch (status) {
    case JobTerminalStatus::kFinished: return "FINISHED";
    case JobTerminalStatus::kCanceled: return "CANCELED";
    case JobTerminalStatus::kFailed: return "FAILED";
    case JobTerminalStatus::kFailedUnusableRestorePoint: return "FAILED (restore point missing a file or damaged)";
  }
  return "?";
}

bool should_delete_on_job_end(ExternalizedCheckpointRetention mode, JobTerminalStatus status) {
  switch (status) {
    case JobTerminalStatus::kFinished: return true;
    case JobTerminalStatus::kCanceled: return mode != ExternalizedCheckpointRetention::kRetainOnCancellation;
    case JobTerminalStatus::kFailed: return mode == ExternalizedCheckpointRetention::kNoExternalizedCheckpoints;
    case JobTerminalStatus::kFailedUnusableRestorePoint: return false;
  }
  return false;
}

std::vector<CheckpointId> checkpoints_to_delete_on_job_end(const std::vector<RetainedCheckpointInfo>& retained,
                                                           ExternalizedCheckpointRetention mode,
                                                           JobTerminalStatus status) {
  std::vector<CheckpointId> out;
  if (!should_delete_on_job_end(mode, status)) return out;
  for (const RetainedCheckpointInfo& c : retained) {
    if (c.claimed && status == JobTerminalStatus::kFailed) continue;
    if (discardable(c)) out.push_back(c.id);
  }
  return out;
}

}  // namespace sluice::checkpoint
