// Retention and cleanup decisions: pure functions over what the store knows about each completed checkpoint
// (STYLE.md habit 5; DESIGN.md section 3). The I/O that carries them out is in completed_checkpoint_store.h.
//
// Retention (execution.checkpointing.num-retained, default 1, as Flink): after a checkpoint completes, keep the
// newest num_retained; older ones are subsumed. Two are never subsumed: the newest entry, and the newest
// checkpoint that is not a savepoint (what a failover restores). Subsumed entries are discarded (files deleted)
// only if this run owns them and they are checkpoints: savepoints belong to the user, and a checkpoint restored
// in NO_CLAIM mode belongs to the run that took it.
//
// Job end (docs/checkpoints.md; Flink's ExternalizedCheckpointRetention,
// execution.checkpointing.externalized-checkpoint-retention):
//
//   mode \ job ends as            FINISHED   CANCELED   FAILED   FAILED, restore point unusable
//   NO_EXTERNALIZED_CHECKPOINTS   delete     delete     delete   keep     (the default)
//   DELETE_ON_CANCELLATION        delete     delete     keep     keep
//   RETAIN_ON_CANCELLATION        delete     keep       keep     keep
//
// "Restore point unusable": the job failed because the checkpoint it restores (restored at submission, or the
// latest for a failover) is missing a file or damaged. Nothing is deleted then, whatever the mode: that checkpoint
// is the evidence of what went wrong, and the older ones are the way back.
//
// A checkpoint restored in CLAIM mode (execution.state-recovery.claim-mode) is owned by the run and deleted once a
// checkpoint of the run subsumes it, or at FINISHED / CANCELED as the table says. When the run FAILED while it was
// still retained it is kept, whatever the mode: the run produced nothing to replace it, so deleting it would turn a
// failed attempt (a wrong output folder, a sink that cannot commit) into lost state.
//
// A process that dies reaches no terminal status and deletes nothing: its checkpoints stay for `--restore`.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "sluice/core/ids.h"
#include "sluice/core/status.h"

namespace sluice::checkpoint {

inline constexpr int32_t kDefaultNumRetainedCheckpoints = 1;

// What retention needs to know about one completed checkpoint.
struct RetainedCheckpointInfo {
  CheckpointId id{0};
  SnapshotType type = SnapshotType::kCheckpoint;
  bool owned = true;     // false: restored in NO_CLAIM mode; this run never deletes it
  bool claimed = false;  // restored in CLAIM mode: kept when the job FAILED (see above)
  bool operator==(const RetainedCheckpointInfo&) const = default;
};

struct RetentionDecision {
  std::vector<CheckpointId> retained;    // the store after the add, oldest first
  std::vector<CheckpointId> subsumed;    // left the store, oldest first
  std::vector<CheckpointId> to_discard;  // the subsumed ones whose files must be deleted (owned checkpoints)
  bool operator==(const RetentionDecision&) const = default;
};

// `retained`: the store's entries, oldest first (ids strictly increasing). Errors: kInvalidArgument if
// num_retained < 1 or `retained` is not strictly increasing; kFailedPrecondition if `added` is not newer than
// every retained entry (checkpoint ids strictly increase).
Result<RetentionDecision> decide_retention(const std::vector<RetainedCheckpointInfo>& retained,
                                           const RetainedCheckpointInfo& added, int32_t num_retained);

enum class JobTerminalStatus : uint8_t {
  kFinished,
  kCanceled,
  kFailed,
  kFailedUnusableRestorePoint,  // FAILED because its restore point is missing a file or damaged
};

enum class ExternalizedCheckpointRetention : uint8_t {
  kNoExternalizedCheckpoints,  // NO_EXTERNALIZED_CHECKPOINTS (default)
  kDeleteOnCancellation,       // DELETE_ON_CANCELLATION
  kRetainOnCancellation,       // RETAIN_ON_CANCELLATION
};

// Flink's names, case-insensitive; kInvalidArgument naming the option and the accepted values otherwise.
Result<ExternalizedCheckpointRetention> parse_externalized_checkpoint_retention(std::string_view text);
std::string_view to_string(ExternalizedCheckpointRetention mode);  // Flink's name
// "FINISHED", "CANCELED", "FAILED", "FAILED (restore point missing a file or damaged)"
std::string_view to_string(JobTerminalStatus status);

// The table above.
bool should_delete_on_job_end(ExternalizedCheckpointRetention mode, JobTerminalStatus status);

// The retained entries to delete when the job ends: none if should_delete_on_job_end is false, else every owned
// checkpoint (never savepoints, never checkpoints restored in NO_CLAIM mode, and not a claimed restore point when
// the job FAILED). Oldest first.
std::vector<CheckpointId> checkpoints_to_delete_on_job_end(const std::vector<RetainedCheckpointInfo>& retained,
                                                           ExternalizedCheckpointRetention mode,
                                                           JobTerminalStatus status);

}  // namespace sluice::checkpoint
