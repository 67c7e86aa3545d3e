// CompletedCheckpointStore: the completed checkpoints a job keeps (Flink's CompletedCheckpointStore /
// StandaloneCompletedCheckpointStore). It applies the pure decisions of checkpoint_retention.h; the file I/O
// (discarding subsumed checkpoints, cleanup at job end) is in the free functions below, at the edge.
//
// Lifecycle: created by the coordinator with num_retained; on a restore the restored checkpoint may be added
// first with owned = false (NO_CLAIM: it is never deleted by this run); then every completed checkpoint is added
// in id order; at job end cleanup_on_job_end runs once.
//
// Thread-safety: none; owned by the coordinator (one thread at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "checkpoint/checkpoint_retention.h"
#include "checkpoint/checkpoint_storage.h"
#include "sluice/core/status.h"

namespace sluice::checkpoint {

struct CompletedCheckpoint {
  CheckpointMetadata metadata;
  std::string location;  // what write_metadata returned, or the restored path
  bool owned = true;     // false: restored in NO_CLAIM mode
  // Restored in CLAIM mode: owned, but its folder is `location` (possibly in another job's folder), deleted with
  // CheckpointStorage::discard_location rather than discard(id).
  bool claimed = false;
  RetainedCheckpointInfo info() const { return {metadata.checkpoint_id, metadata.type, owned, claimed}; }
};

class CompletedCheckpointStore {
 public:
  // num_retained: execution.checkpointing.num-retained (default 1); add() fails with kInvalidArgument if < 1.
  explicit CompletedCheckpointStore(int32_t num_retained = kDefaultNumRetainedCheckpoints);

  // Adds a completed checkpoint; subsumed ones leave the store at once. The caller discards
  // `decision.to_discard` through the storage (discard_checkpoints). On error the store is unchanged.
  Result<RetentionDecision> add(CompletedCheckpoint checkpoint);

  // The newest entry that is a checkpoint (not a savepoint): what a failover restores. nullptr if none.
  const CompletedCheckpoint* latest_checkpoint() const;
  // Oldest first.
  const std::vector<CompletedCheckpoint>& checkpoints() const { return checkpoints_; }
  std::vector<RetainedCheckpointInfo> infos() const;
  int32_t num_retained() const { return num_retained_; }
  // Forgets every entry (after job-end cleanup).
  void clear() { checkpoints_.clear(); }

 private:
  int32_t num_retained_;
  std::vector<CompletedCheckpoint> checkpoints_;
};

// Discards each checkpoint through `storage`; goes on after a failure and returns the first error, naming the
// checkpoint. `claimed_location`: the folder of a checkpoint restored in CLAIM mode with id `claimed_id` (0:
// none), discarded by location.
Status discard_checkpoints(CheckpointStorage& storage, const std::vector<CheckpointId>& ids,
                           CheckpointId claimed_id = CheckpointId(0), const std::string& claimed_location = "");

struct JobEndCleanup {
  std::vector<CheckpointId> deleted;
  std::vector<CheckpointId> kept;  // retained on purpose (mode), or not ours (savepoints, NO_CLAIM restores)
  bool job_dir_removed = false;
};

// At job end: deletes what checkpoints_to_delete_on_job_end says, calls `after_discard` with them (the owner
// releases their shared files there: SharedStateRegistry), then, if deleting applied, removes the job's folder
// when nothing else is left in it (storage.remove_job_dir_if_empty()). Empties the store. Errors: the first
// failed deletion (the others are still attempted).
Result<JobEndCleanup> cleanup_on_job_end(
    CompletedCheckpointStore& store, CheckpointStorage& storage, ExternalizedCheckpointRetention mode,
    JobTerminalStatus status, const std::function<void(const std::vector<CheckpointId>&)>& after_discard = {});

}  // namespace sluice::checkpoint
