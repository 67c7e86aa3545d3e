// MiniCluster: runs a JobGraph in this process - one thread per subtask, in-process channels between them,
// the source coordinators, the buffer-timeout flusher, and (when enabled) the CheckpointCoordinator with its
// storage, failover through the restart strategy, and restore (Flink's MiniCluster): the job's JobMaster
// (job_master.h) with the in-process deployer (in_process_deployer.h).
//
// Job lifecycle, an explicit state machine (coordinator/job_lifecycle.h) moved by one control thread: CREATED ->
// RUNNING -> FINISHED. The job is RUNNING from its submission while the control thread deploys the first attempt
// (in cluster mode: waits for slots); a first deployment that fails is a task failure. A task failure: RUNNING -> RESTARTING (all tasks cancelled; wait the restart strategy's
// backoff; redeploy from the latest completed checkpoint, or from the start if there is none) -> RUNNING, or ->
// FAILING -> FAILED when the strategy gives up (and at once for a non-restartable cause); cancel(): ->
// CANCELLING -> CANCELED. Checkpoint bookkeeping: cluster/job_checkpoints.h. With
// checkpointing on, a bounded job finishes only after a final checkpoint that every task took after its input
// ended, so two-phase-commit sinks commit everything. With checkpointing off the job may still have its
// coordinator, for savepoints only (MiniClusterConfig::savepoints_without_checkpointing). Thread-safety: submit_job
// from any thread; the JobClient is thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "checkpoint/checkpoint_metadata.h"
#include "checkpoint/checkpoint_retention.h"
#include "checkpoint/checkpoint_storage.h"
#include "cluster/exception_history.h"
#include "cluster/savepoint_requests.h"
#include "cluster/state_assignment.h"
#include "coordinator/checkpoint_coordinator_config.h"
#include "coordinator/checkpoint_stats.h"
#include "graph/job_graph.h"
#include "restart/restart_strategy_factory.h"
#include "runtime/checkpointing/unaligned_checkpoint_config.h"
#include "runtime/fault_injection.h"
#include "runtime/network/network_config.h"
#include "runtime/stream_task.h"
#include "sluice/api/job_client.h"
#include "sluice/api/stream_graph.h"
#include "sluice/config/options.h"
#include "sluice/core/clock.h"
#include "sluice/core/exclusive_claim.h"
#include "sluice/core/name_source.h"
#include "sluice/state/state_backend.h"

namespace sluice::cluster {

struct RestoreFrom {
  checkpoint::CheckpointMetadata metadata;
  std::string location;
  // execution.state-recovery.claim-mode CLAIM: the job owns the checkpoint (refers to its shared files, deletes
  // it once subsumed). false: NO_CLAIM (never deleted; the first checkpoint re-uploads everything). A savepoint is
  // never claimed (it belongs to the user).
  bool claim = false;
  // execution.state-recovery.ignore-unclaimed-state (--allow-non-restored-state): state of operators (by uid) the
  // job does not have is dropped, and reported, instead of failing the submission.
  bool allow_non_restored_state = false;
  // execution.state-recovery.rehash-key-groups (--rehash-key-groups): keyed state recorded with another max
  // parallelism than the job's is re-hashed into the job's key groups (cluster/key_group_rehash.h) instead of
  // failing the submission. The job's max parallelism is decided before (max_parallelism_for_restore).
  KeyGroupRehash rehash_key_groups = KeyGroupRehash::kRefuse;
  // execution.state-recovery.ignore-generated-id-changes: state is handed to operators without a uid by their
  // generated id even when the graph around them changed since the snapshot (cluster/generated_id_check.h).
  bool ignore_generated_id_changes = false;
};

struct MiniClusterConfig {
  runtime::NetworkConfig network;
  // execution.buffer-timeout.interval: partial buffers are flushed at least this often.
  std::chrono::milliseconds buffer_timeout{100};
  bool buffer_timeout_enabled = true;
  int64_t auto_watermark_interval_ms = 200;  // pipeline.auto-watermark-interval
  std::string state_backend_type = "HASHMAP";  // state.backend.type, as parse_state_backend_type reads it
  RocksDBStateBackendOptions rocksdb;          // state.backend.rocksdb.*
  // execution.checkpointing.incremental (RocksDB keyed state; needs storage->supports_incremental(), else off).
  bool incremental_checkpoints = false;
  std::shared_ptr<Clock> clock;  // null: the system clock
  // The job's filesystems by URI scheme, handed to every operator (OperatorSetup::file_systems); null: the local
  // disk only.
  std::shared_ptr<const fs::FileSystemRegistry> file_systems;
  // Where the run's random names come from (sluice/core/name_source.h): the job id (unless `job_id` is set),
  // savepoint folders, savepoint trigger ids and, through `rocksdb.names` (set from this one when unset), the
  // RocksDB working folders and backend ids. The checkpoint storage and the filesystems take theirs from their
  // own options (the environment passes this one to both). Null: a random source.
  std::shared_ptr<NameSource> names;
  // The run's job id ($internal.pipeline.job-id, as Flink's PipelineOptionsInternal); nullopt: names->job_id().
  // A restored run with a fixed id writes into the same job folder as the run it restores (checkpoint ids go on).
  std::optional<JobId> job_id;

  // Periodic checkpointing (execution.checkpointing.interval > 0): the coordinator triggers checkpoints every
  // interval, a failure restarts from the latest one (restart strategy), sinks commit when a checkpoint completes,
  // and a bounded job ends with a final checkpoint. Off: no checkpoint is ever taken, a failure fails the job, tasks
  // finish as their input ends and sinks commit then (OperatorSetup::checkpointing false).
  bool checkpointing = false;
  // Savepoints while `checkpointing` is off (Flink creates its coordinator without a periodic trigger): the job
  // still gets its CheckpointCoordinator (checkpoint_config.interval 0), `storage` (a filesystem storage,
  // initialized for savepoints only: it creates no checkpoint folder) and checkpoint responders in its tasks, so
  // savepoints, stop-with-savepoint and `restore` work; everything `checkpointing` decides stays as without it.
  // Ignored while `checkpointing` is on (it implies all of this).
  bool savepoints_without_checkpointing = false;
  // The job has a checkpoint coordinator, storage and responders: periodic checkpoints or savepoints only.
  bool has_coordinator() const { return checkpointing || savepoints_without_checkpointing; }
  coordinator::CheckpointCoordinatorConfig checkpoint_config;
  // execution.checkpointing.unaligned.enabled and .aligned-checkpoint-timeout (validated by the caller:
  // sluice::validate_unaligned_checkpoints).
  runtime::UnalignedCheckpointConfig unaligned;
  std::shared_ptr<checkpoint::CheckpointStorage> storage;  // required when has_coordinator()
  int32_t num_retained = 1;
  checkpoint::ExternalizedCheckpointRetention retention = checkpoint::ExternalizedCheckpointRetention::kNoExternalizedCheckpoints;
  RestartStrategyConfig restart;  // used when `checkpointing`; without it a failure fails the job
  // jobmanager.execution.failover-strategy (Flink's default: region): a task's failure restarts its pipelined
  // region (graph/pipelined_regions.h) or, with kFull, every task. Failures that are no task's restart every task.
  FailoverStrategy failover_strategy = FailoverStrategy::kRegion;
  std::optional<RestoreFrom> restore;  // needs has_coordinator()
  // execution.checkpointing.savepoint-dir (deprecated key state.savepoints.dir): where a savepoint request that
  // names no folder goes; empty: such a request is refused, naming the key.
  std::string savepoint_dir;
  std::map<std::string, std::string> properties;  // recorded in every checkpoint's metadata
  uint64_t jitter_seed = 1;
  // execution.checkpointing.mode AT_LEAST_ONCE: tasks track barriers without aligning (CheckpointBarrierTracker).
  bool at_least_once = false;
  // execution.checkpointing.checkpoints-after-tasks-finish. true: a task whose input ended stays deployed,
  // takes part in every checkpoint (its snapshot is quick: nothing changes any more) and ends only after the
  // final checkpoint, triggered once every task's input ended, completed - so two-phase-commit sinks commit
  // their last data. false (Flink's behaviour without FLIP-147): a task whose input ended finishes at once; from
  // then on every checkpoint is refused (failed as kTaskNotReady, which does not count against
  // tolerable-failed-checkpoints) and there is no final checkpoint: what a two-phase-commit sink took after the
  // last completed checkpoint is not committed.
  bool checkpoints_after_tasks_finish = true;
  // Test hook (runtime::TaskDeployment::records_after_barrier_hook): AT_LEAST_ONCE tasks call it after
  // processing a buffer that came on a channel after its barrier of a checkpoint not taken yet. Empty: off.
  runtime::RecordsAfterBarrierHook records_after_barrier_hook;
};

// What the job client adds for checkpointing jobs.
class CheckpointingJobClient : public JobClient {
 public:
  virtual coordinator::CheckpointStatsSnapshot checkpoint_stats() const = 0;
  virtual int32_t restarts() const = 0;
  // Checkpoint ids each recovery restored from (0: from the start), and its time from failure to running.
  virtual std::vector<std::pair<int64_t, int64_t>> recoveries() const = 0;
  // The checkpoint the first attempt restored (execution.state-recovery.path): its id and chk-<n> folder;
  // nullopt for a fresh start.
  virtual std::optional<std::pair<int64_t, std::string>> initial_restore() const = 0;
  // The failures that restarted the job or a region, or failed it (exception_history.h): the newest
  // web.exception-history-size, newest first, and how many there were in all.
  virtual std::vector<JobException> exception_history() const = 0;
  virtual int64_t num_exceptions() const = 0;

  // Fault injection (tests, the demo's --inject-failures; runtime/fault_injection.h names the points and what
  // must hold after each). Arms one failure: the first task of (vertex, subtask) - -1 for either means any -
  // that reaches `point` fails there, on its own thread, with "injected failure [<point>] <cause>", and the job
  // fails over as for any task failure. Armed failures survive restarts until they fire. kInvalidArgument
  // when no task of the job matches and can reach the point (e.g. kSink on a vertex without a sink, or a
  // checkpoint point with checkpointing off). from_checkpoint_id > 0: only at a checkpoint point for a checkpoint
  // id >= it (FaultInjector::arm).
  virtual Status arm_failure(runtime::FailurePoint point, int32_t vertex, int32_t subtask, const std::string& cause,
                             int64_t from_checkpoint_id = 0) = 0;
  // The armed failures that fired, in order.
  virtual std::vector<runtime::InjectedFailure> injected_failures() const = 0;
  // The generic injected failure: the task of (vertex, subtask) fails at its next mailbox turn with `cause`
  // (arm_failure at FailurePoint::kTask). No such task: nothing happens.
  void fail_task(int32_t vertex, int32_t subtask, const std::string& cause) {
    (void)arm_failure(runtime::FailurePoint::kTask, vertex, subtask, cause);
  }

  // A manual checkpoint now (Flink's POST /jobs/:jobid/checkpoints): triggered like a periodic one, failover and
  // sinks treat it as any checkpoint. Returns its id at once; poll checkpoint_stats() for its completion.
  // kFailedPrecondition when checkpointing is off, the job is not RUNNING, or the coordinator refuses (max
  // concurrent checkpoints pending, min pause not passed).
  virtual Result<CheckpointId> trigger_checkpoint() = 0;

  // What a restore with allow_non_restored_state dropped (operators by uid), empty otherwise.
  virtual std::vector<UnmatchedOperatorState> dropped_state() const = 0;

  // ---- savepoints (docs/savepoints.md) ----
  // Triggers a savepoint into a new folder savepoint-<job>-<random> under `target_dir` (created if missing) and
  // returns its trigger id at once; poll savepoint_status. The savepoint is aligned, self-contained (never refers
  // to a checkpoint's shared files), commits no side effects (sinks get no notification for it), is never used
  // for failover and never deleted by the job. `format`: canonical (portable: another backend, max parallelism
  // re-hashing) or native (the backend's own files: faster, restores only into the same backend).
  // An empty `target_dir` means MiniClusterConfig::savepoint_dir; kInvalidArgument naming the key when that is empty
  // too; kFailedPrecondition when the job has no coordinator (BATCH), is not RUNNING or the coordinator refuses (the
  // folder is removed again); kIOError when the folder cannot be created.
  virtual Result<std::string> trigger_savepoint(
      const std::string& target_dir,
      checkpoint::SavepointFormatType format = checkpoint::SavepointFormatType::kCanonical) = 0;
  // Stop-with-savepoint: the sources stop (with `drain`: they end their input first - final watermark MAX, so
  // windows and timers fire, and end of input), a final savepoint is taken, the sinks commit on its completion,
  // and the job FINISHES. The request (poll savepoint_status) completes only once the job finished. If the
  // savepoint fails the stop fails: without drain the sources resume and the job runs on; with drain the job
  // ends through a final checkpoint instead (without periodic checkpoints: at once; its sinks committed at the end
  // of input). Errors as trigger_savepoint, and kFailedPrecondition when a stop is
  // already in progress or execution.checkpointing.checkpoints-after-tasks-finish is false.
  virtual Result<std::string> stop_with_savepoint(
      const std::string& target_dir, bool drain,
      checkpoint::SavepointFormatType format = checkpoint::SavepointFormatType::kCanonical) = 0;
  // nullopt for an unknown trigger id.
  virtual std::optional<SavepointRequestStatus> savepoint_status(const std::string& trigger_id) const = 0;
  // Blocks until the request is no longer IN_PROGRESS or `timeout_ms` passed.
  virtual std::optional<SavepointRequestStatus> wait_savepoint(const std::string& trigger_id,
                                                               int64_t timeout_ms) const = 0;
};

// What every process that runs a job's tasks fills in before it deploys any (a JobMaster, a TaskManager): the
// system clock when `config` names none, and `names` for RocksDB's working folders when it names none.
void complete_task_settings(MiniClusterConfig& config, const std::shared_ptr<NameSource>& names);

// Deploys and starts the job. The StreamGraph must outlive the client (the client keeps a reference). `claims`:
// the job's exclusive claims (cluster/job_claims.h), released when the job reaches a terminal state, before
// wait() returns, so the next job may take them at once.
Result<std::unique_ptr<JobClient>> submit_job(std::shared_ptr<const StreamGraph> stream_graph,
                                              graph::JobGraph job_graph, const MiniClusterConfig& config,
                                              std::vector<std::unique_ptr<HeldClaim>> claims = {});

}  // namespace sluice::cluster
