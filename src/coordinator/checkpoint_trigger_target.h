// CheckpointTriggerTarget: how the coordinator reaches the running job. The runtime implements it (the
// MiniCluster puts mails into the tasks' mailboxes); tests implement it with a recorder.
//
// Calls come from the coordinator's action runner (see checkpoint_coordinator.h, "Threads"): never under the
// coordinator's mutex, one at a time, in the order the coordinator decided them. An implementation may call
// back into the coordinator (acknowledge, decline, trigger, ...) from inside these methods or from any other
// thread. It must not block waiting for a task thread (post work and return): the caller may be a task's own
// thread when the coordinator runs without its timer thread.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/checkpoint_metadata.h"
#include "sluice/core/ids.h"
#include "sluice/core/status.h"

namespace sluice::coordinator {

class CheckpointTriggerTarget {
 public:
  virtual ~CheckpointTriggerTarget() = default;
  // Start checkpoint (or savepoint, `type`) `id`: every source subtask snapshots its split offsets and emits
  // barrier `id` of that type (and, for a savepoint, `format`: what keyed operators write). `timestamp_ms`: the
  // trigger's wall-clock time (ms since epoch), recorded in the metadata. `savepoint_location`: a savepoint's
  // folder, already routed in the coordinator's own storage (CheckpointStorage::begin_savepoint); a process with
  // storage of its own (a TaskManager) routes it there too. Empty for checkpoints.
  virtual void trigger_checkpoint(CheckpointId id, int64_t timestamp_ms, checkpoint::SnapshotType type,
                                  checkpoint::SavepointFormatType format, const std::string& savepoint_location) = 0;
  // Checkpoint `id`'s _metadata is durable: tasks may commit side effects up to `id`. Sent for checkpoints,
  // in strictly increasing id order; not for savepoints (Flink 1.15+: savepoints commit no side effects).
  virtual void notify_checkpoint_complete(CheckpointId id) = 0;
  // Checkpoint (or savepoint) `id` was aborted; tasks drop what they hold for it. Best-effort.
  virtual void notify_checkpoint_aborted(CheckpointId id) = 0;
  // Consecutive checkpoint failures exceeded execution.checkpointing.tolerable-failed-checkpoints; the job
  // should fail over through its restart strategy. `cause` names the last failure (retriable).
  virtual void fail_job(const Status& cause) = 0;
};

}  // namespace sluice::coordinator
