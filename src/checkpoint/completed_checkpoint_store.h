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
  RetainedCheckpointInfo info() const { return {metadata.checkpoint_id, metadata.type, owned}; }
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
// checkpoint.
Status discard_checkpoints(CheckpointStorage& storage, const std::vector<CheckpointId>& ids);

struct JobEndCleanup {
  std::vector<CheckpointId> deleted;
  std::vector<CheckpointId> kept;  // retained on purpose (mode), or not ours (savepoints, NO_CLAIM restores)
  bool job_dir_removed = false;
};

// At job end: deletes what checkpoints_to_delete_on_job_end says, then, if deleting applied, removes the job's
// folder when nothing else is left in it (storage.remove_job_dir_if_empty()). Empties the store. Errors: the
// first failed deletion (the others are still attempted).
Result<JobEndCleanup> cleanup_on_job_end(CompletedCheckpointStore& store, CheckpointStorage& storage,
                                         ExternalizedCheckpointRetention mode, JobTerminalStatus status);

}  // namespace sluice::checkpoint
