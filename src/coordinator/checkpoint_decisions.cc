#include "coordinator/checkpoint_decisions.h"

#include <algorithm>

namespace sluice::coordinator {

TriggerDecision decide_trigger(TriggerRequestKind kind, const TriggerState& state, int64_t now_ms,
                               const CheckpointCoordinatorConfig& config) {
  if (state.shut_down) return {TriggerWaitReason::kShutDown, 0};
  if (kind == TriggerRequestKind::kPeriodic) {
    if (!state.periodic_scheduling) return {TriggerWaitReason::kPeriodicSchedulingStopped, 0};
    if (now_ms < state.next_periodic_due_ms) return {TriggerWaitReason::kNotDue, state.next_periodic_due_ms};
  }
  if (kind == TriggerRequestKind::kSavepoint) return {};
  if (state.num_pending >= config.effective_max_concurrent()) return {TriggerWaitReason::kTooManyConcurrent, 0};
  if (state.last_completion_ms) {
    const int64_t earliest = *state.last_completion_ms + config.min_pause.count();
    if (now_ms < earliest) return {TriggerWaitReason::kMinPause, earliest};
  }
  return {};
}

std::string describe_wait(const TriggerDecision& decision, const TriggerState& state, int64_t now_ms,
                          const CheckpointCoordinatorConfig& config) {
  switch (decision.reason) {
    case TriggerWaitReason::kNone:
      return "trigger";
    case TriggerWaitReason::kShutDown:
      return "the checkpoint coordinator is shut down";
    case TriggerWaitReason::kPeriodicSchedulingStopped:
      return "periodic checkpoint scheduling is stopped";
    case TriggerWaitReason::kNotDue:
      return "the next periodic checkpoint is due in " + std::to_string(state.next_periodic_due_ms - now_ms) + " ms";
    case TriggerWaitReason::kTooManyConcurrent:
      return std::to_string(state.num_pending) + " checkpoint(s) pending, execution.checkpointing." +
             "max-concurrent-checkpoints allows " + std::to_string(config.effective_max_concurrent()) +
             (config.min_pause.count() > 0 ? " (a min pause above 0 means one at a time)" : "");
    case TriggerWaitReason::kMinPause:
      return "execution.checkpointing.min-pause is " + std::to_string(config.min_pause.count()) +
             " ms and the last checkpoint completed " +
             std::to_string(now_ms - state.last_completion_ms.value_or(now_ms)) + " ms ago";
  }
  return "unknown";
}

bool is_expired(int64_t trigger_ms, int64_t now_ms, const CheckpointCoordinatorConfig& config) {
  return now_ms - trigger_ms >= config.timeout.count();
}

std::vector<CheckpointId> subsumed_by(CheckpointId completed, checkpoint::SnapshotType completed_type,
                                      const std::vector<PendingView>& pending) {
  std::vector<CheckpointId> out;
  if (completed_type != checkpoint::SnapshotType::kCheckpoint) return out;
  for (const PendingView& p : pending) {
    if (p.type == checkpoint::SnapshotType::kCheckpoint && p.id < completed) out.push_back(p.id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string_view wait_reason_name(TriggerWaitReason reason) {
  switch (reason) {
    case TriggerWaitReason::kNone: return "none";
    case TriggerWaitReason::kShutDown: return "shut down";
    case TriggerWaitReason::kPeriodicSchedulingStopped: return "periodic scheduling stopped";
    case TriggerWaitReason::kNotDue: return "not due";
    case TriggerWaitReason::kTooManyConcurrent: return "too many concurrent checkpoints";
    case TriggerWaitReason::kMinPause: return "min pause";
  }
  return "unknown";
}

}  // namespace sluice::coordinator
