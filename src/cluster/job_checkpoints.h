// JobCheckpoints: a job's checkpoint bookkeeping on the coordinator side, as one object - the completed
// checkpoints it retains (CompletedCheckpointStore), the reference counts of their shared files
// (SharedStateRegistry), which checkpoint the next attempt restores, the cleanup at job end, and the responder that
// hands tasks' acknowledgements and declines to the CheckpointCoordinator. Flink spreads the same duties over
// CompletedCheckpointStore, SharedStateRegistry, CheckpointsCleaner and the JobMaster's RPC endpoint for
// acknowledgements (docs/checkpoints.md "Retention", "Incremental checkpoints").
//
// Ownership rules (docs/checkpoints.md "Claim modes"): checkpoints this run completed are owned and deleted once
// subsumed (beyond execution.checkpointing.num-retained); a checkpoint restored in CLAIM mode is owned too and
// deleted by its location once subsumed; one restored in NO_CLAIM mode, and every savepoint, is never deleted.
//
// Thread-safety: every member may be called from any thread (the coordinator's completion callback, the job's
// control thread, task and async-snapshot threads through the responder); bind_coordinator must happen before the
// first task is deployed.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "checkpoint/checkpoint_retention.h"
#include "checkpoint/checkpoint_storage.h"
#include "checkpoint/completed_checkpoint_store.h"
#include "coordinator/checkpoint_coordinator.h"
#include "coordinator/shared_state_registry.h"
#include "runtime/checkpointing/subtask_checkpoint_coordinator.h"

namespace sluice::cluster {

// The checkpoint an attempt restores.
struct RestorePoint {
  checkpoint::CheckpointMetadata metadata;
  std::string location;  // its chk-<n> (or savepoint) folder
  bool owned = true;     // this run may refer to its shared files (its own, or claimed)
};

class JobCheckpoints final : public runtime::CheckpointResponder {
 public:
  // `storage`: the job's checkpoint storage, initialized for the job (required). `num_retained`:
  // execution.checkpointing.num-retained (>= 1). `retention`: what happens to retained checkpoints at job end.
  // `job_name`: for log lines.
  JobCheckpoints(std::string job_name, std::shared_ptr<checkpoint::CheckpointStorage> storage, int32_t num_retained,
                 checkpoint::ExternalizedCheckpointRetention retention);

  // Registers the checkpoint or savepoint the job starts from (execution.state-recovery.path): it joins the store
  // (so it is subsumed like any other), owned when `claim` (CLAIM mode; a savepoint is never claimed), and its
  // shared files are registered with that ownership. Returns the restore point of the first attempt. Call once,
  // before the first checkpoint completes. Errors: from the store (an id not above what it holds).
  Result<RestorePoint> add_restored(const checkpoint::CheckpointMetadata& metadata, const std::string& location,
                                    bool claim);

  // The coordinator's completion of a checkpoint (not a savepoint: those are never retained by the job): adds it,
  // deletes the checkpoints it subsumes that this run owns, and deletes shared files nothing refers to any more.
  // Failures to delete are logged, never returned: the new checkpoint is complete either way.
  void on_checkpoint_completed(const checkpoint::CheckpointMetadata& metadata, const std::string& location);

  // The latest retained checkpoint (the restored one until a newer completes); nullopt when there is none.
  std::optional<RestorePoint> latest() const;
  // Its id, -1 when there is none.
  int64_t latest_checkpoint_id() const;

  // Whether the checkpoint the next attempt would restore (latest(), else `fallback`) still has its files: sizes
  // (a stat per file) after any failure; checksums too (every byte read) when `cause` may come from damaged
  // checkpoint bytes (kCorruption, kNotFound, kIOError). kCorruption / kNotFound naming the checkpoint when a
  // file is damaged or missing: a restart would fail the same way (restart/restart_strategy.h); Ok otherwise,
  // also when a file is merely unreadable (that may pass).
  Status check_restore_point(const std::optional<RestorePoint>& fallback, const Status& cause) const;

  // At job end: deletes what execution.checkpointing.externalized-checkpoint-retention says for `status`
  // (nothing when the job failed because its restore point is unusable: the evidence stays), with their
  // unreferenced shared files, and the job's folder once empty (in every mode: an empty job folder keeps nothing).
  // Failures are logged. Call once.
  void cleanup_on_job_end(checkpoint::JobTerminalStatus status);
  // The job FINISHED after restoring `restored_location`: CheckpointStorage::record_finished_restore, now. Failures
  // are logged (the output is committed; only `--restore latest` loses the record).
  void record_finished_restore(const std::string& restored_location);
  // Removes the job's folder in the checkpoint storage if it holds nothing (no checkpoint, empty shared and
  // task-owned folders): for a job refused after its storage was initialized. Failures are logged.
  void remove_job_folder_if_empty();

  // For the coordinator's setup (CheckpointCoordinatorSetup::shared_state_registry).
  std::shared_ptr<coordinator::SharedStateRegistry> shared_state_registry() const { return shared_registry_; }
  // The coordinator the responder forwards to; it must outlive every deployed task.
  void bind_coordinator(coordinator::CheckpointCoordinator* coordinator) { coordinator_ = coordinator; }

  // ---- runtime::CheckpointResponder (task and async-snapshot threads) ----
  void acknowledge(CheckpointId id, JobVertexId vertex, SubtaskIndex subtask,
                   std::map<std::string, checkpoint::OperatorSubtaskState> state,
                   runtime::SubtaskSnapshotStats stats) override;
  void decline(CheckpointId id, JobVertexId vertex, SubtaskIndex subtask, const Status& reason) override;

 private:
  void release_shared_files(const std::vector<CheckpointId>& ids);  // store_mu_ held or not: registry has its own

  const std::string job_name_;
  const std::shared_ptr<checkpoint::CheckpointStorage> storage_;
  const checkpoint::ExternalizedCheckpointRetention retention_;
  const std::shared_ptr<coordinator::SharedStateRegistry> shared_registry_;
  coordinator::CheckpointCoordinator* coordinator_ = nullptr;

  mutable std::mutex store_mu_;
  checkpoint::CompletedCheckpointStore store_;
  // A checkpoint restored in CLAIM mode: deleted by its location (it lives in another run's folder).
  CheckpointId claimed_id_{0};
  std::string claimed_location_;
};

}  // namespace sluice::cluster
