// StopWithSavepoint: one job's stop-with-savepoint (docs/savepoints.md; Flink's StopWithSavepoint), driven by the
// job's control thread. Sources get stop_source(drain) mails; without drain the savepoint is triggered at once (its
// barriers follow the stop in every source mailbox), with drain once every task reached the end of its input. On
// the savepoint's completion every task gets its completion notification (sinks commit) before any gets finish().
// If the savepoint fails the stop fails: without drain the sources resume and the job runs on; with drain (the input
// ended) periodic checkpoints take over and the next one is the final one, or without periodic checkpoints the
// tasks end at once (their sinks committed at the end of input).
//
// Also create_savepoint_folder: the checks and the new folder every savepoint request (stop or not) starts with.
//
// Thread-safety: StopWithSavepoint is used by the control thread only; Tasks::with_tasks takes the job's task lock
// itself.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "checkpoint/checkpoint_storage.h"
#include "cluster/savepoint_requests.h"
#include "coordinator/checkpoint_coordinator.h"
#include "cluster/task_deployer.h"
#include "sluice/api/job_client.h"

namespace sluice::cluster {

// The new folder savepoint-<job>-<random> under `target_dir` for a savepoint of job `job_id` ("stop-with-savepoint"
// when `stop`). kFailedPrecondition when the job has no coordinator (`storage` null), the job is not RUNNING, or the
// storage cannot write savepoints; kInvalidArgument (checkpoint::no_savepoint_directory) for an empty `target_dir`;
// kInvalidArgument / kIOError from creating the folder.
// `names`: the job's name source (the folder's random part).
Result<std::string> create_savepoint_folder(const std::string& target_dir, bool stop, const JobId& job_id,
                                            JobStatus status, const checkpoint::CheckpointStorage* storage,
                                            NameSource& names);
// Removes a folder create_savepoint_folder made for a savepoint that never started, through the filesystem of its
// scheme (best effort: the folder holds no `_metadata`, so it is never taken for a savepoint).
void remove_unused_savepoint_folder(const checkpoint::CheckpointStorage* storage, const std::string& folder);

class StopWithSavepoint {
 public:
  // The job's tasks of the current attempt, as the stop needs them.
  class Tasks {
   public:
    virtual ~Tasks() = default;
    // Calls fn with the current attempt's tasks under the job's task lock; not at all when none are deployed.
    virtual void with_tasks(const std::function<void(DeployedTasks& tasks)>& fn) = 0;
  };

  struct Request {
    std::string trigger_id;
    std::string folder;  // the savepoint folder, created
    bool drain = false;
    checkpoint::SavepointFormatType format = checkpoint::SavepointFormatType::kCanonical;
    CheckpointId savepoint{0};  // 0 until triggered
  };

  // All referenced objects must outlive the StopWithSavepoint.
  // `storage`: where savepoint folders are (removed through its filesystems when a request is refused).
  StopWithSavepoint(std::string job_name, coordinator::CheckpointCoordinator& coordinator,
                    SavepointRequests& requests, Tasks& tasks, const checkpoint::CheckpointStorage* storage)
      : job_name_(std::move(job_name)), coordinator_(coordinator), requests_(requests), tasks_(tasks),
        storage_(storage) {}

  bool in_progress() const { return stop_.has_value(); }

  // The request arrives while the job is in `status`. Refused (the request fails, its folder is removed) when
  // the job is not running or another stop is in progress.
  void start(Request r, JobStatus status);
  // Every task reached the end of its input (`running`: the job is RUNNING). True when a drained stop takes its savepoint now (then it is the
  // final snapshot of the job, not a final checkpoint).
  bool on_end_of_data(bool running);
  // The coordinator's outcome for savepoint `id` (ignored unless it is the stop's).
  void on_savepoint_complete(CheckpointId id, bool running);
  void on_savepoint_aborted(CheckpointId id, const Status& cause, bool running);
  // The job fails over: the stop fails.
  void on_failover(const Status& cause);
  // The job reached a terminal state; `finished`: FINISHED (the stop, if any, completes).
  void on_job_end(bool finished);

 private:
  void trigger_savepoint(bool running);
  void abandon(const Status& cause, bool running);
  void finish_tasks_after(CheckpointId id);

  std::string job_name_;
  coordinator::CheckpointCoordinator& coordinator_;
  SavepointRequests& requests_;
  Tasks& tasks_;
  const checkpoint::CheckpointStorage* storage_;
  std::optional<Request> stop_;
};

}  // namespace sluice::cluster
