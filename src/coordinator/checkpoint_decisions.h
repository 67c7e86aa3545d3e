// The coordinator's decisions as pure functions of its state and the time (Flink's CheckpointRequestDecider,
// the checkpoint canceller and dropSubsumedCheckpoints), so they can be tested exhaustively.
//
// Times are monotonic milliseconds (Clock::monotonic_ns() / 1e6). Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "coordinator/checkpoint_coordinator_config.h"
#include "sluice/core/ids.h"

namespace sluice::coordinator {

enum class TriggerRequestKind : uint8_t {
  kPeriodic,          // the periodic scheduler's request (from tick())
  kManualCheckpoint,  // trigger_checkpoint(kCheckpoint)
  kSavepoint,         // trigger_checkpoint(kSavepoint): forced, as Flink's savepoints (no concurrency or pause check)
};

struct TriggerState {
  bool shut_down = false;
  bool periodic_scheduling = false;   // periodic requests pass only while the scheduler runs
  int64_t next_periodic_due_ms = 0;   // when the next periodic checkpoint is due (if periodic_scheduling)
  int32_t num_pending = 0;            // pending checkpoints and savepoints, finalizing ones included
  // When the latest checkpoint or savepoint completed (Flink measures the pause from completions only);
  // empty before the first.
  std::optional<int64_t> last_completion_ms;
};

enum class TriggerWaitReason : uint8_t {
  kNone,                       // trigger
  kShutDown,                   // the coordinator was shut down
  kPeriodicSchedulingStopped,  // periodic request while the scheduler is stopped
  kNotDue,                     // periodic request before next_periodic_due_ms
  kTooManyConcurrent,          // num_pending >= effective max concurrent
  kMinPause,                   // less than min pause since the last completion
};

struct TriggerDecision {
  TriggerWaitReason reason = TriggerWaitReason::kNone;
  // For kNotDue and kMinPause: the earliest time the same request can pass (other conditions unchanged).
  int64_t retry_at_ms = 0;
  bool trigger() const { return reason == TriggerWaitReason::kNone; }
};

// Checks in this order: shut down; for periodic requests, scheduler running and due; savepoints pass from
// here; pending < config.effective_max_concurrent(); now >= last completion + min pause.
TriggerDecision decide_trigger(TriggerRequestKind kind, const TriggerState& state, int64_t now_ms,
                               const CheckpointCoordinatorConfig& config);

// "2 checkpoints pending, max concurrent is 2" - names the condition with the numbers behind it.
std::string describe_wait(const TriggerDecision& decision, const TriggerState& state, int64_t now_ms,
                          const CheckpointCoordinatorConfig& config);

// A pending (not finalizing) checkpoint expires once timeout has passed since its trigger.
bool is_expired(int64_t trigger_ms, int64_t now_ms, const CheckpointCoordinatorConfig& config);

struct PendingView {
  CheckpointId id;
  checkpoint::SnapshotType type = checkpoint::SnapshotType::kCheckpoint;
};

// The pending checkpoints a completed snapshot subsumes: none for a savepoint; for a checkpoint, every pending
// checkpoint (not savepoint) with a lower id. Ascending ids.
std::vector<CheckpointId> subsumed_by(CheckpointId completed, checkpoint::SnapshotType completed_type,
                                      const std::vector<PendingView>& pending);

std::string_view wait_reason_name(TriggerWaitReason reason);

}  // namespace sluice::coordinator
