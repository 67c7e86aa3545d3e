// TaskDeployer and DeployedTasks: the seam between a job's JobMaster (lifecycle, CheckpointCoordinator, split
// enumerators, restore decisions) and the place its tasks run. The JobMaster decides what each subtask of an
// attempt restores (a SubtaskDeployment, Flink's TaskDeploymentDescriptor) and talks to the running tasks only
// through DeployedTasks; the in-process implementation (in_process_deployer.h) runs them as threads of this
// process, a TaskManager-backed one runs them elsewhere behind the same calls.
//
// Every call into DeployedTasks is asynchronous: it queues work (in the tasks' mailboxes, or in order for the
// TaskManager) and returns; the tasks
// report back through runtime::TaskListener (state changes) and runtime::CheckpointResponder (acknowledgements).
// Thread-safety: a DeployedTasks is called by one thread at a time (the JobMaster serialises its calls under its
// own lock); join() is called without that lock, once, after cancel().
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/attempt_network.h"
#include "cluster/attempt_restore.h"
#include "cluster/job_placement.h"
#include "cluster/mini_cluster.h"
#include "runtime/execution_attempt_id.h"
#include "runtime/stream_task.h"
#include "sluice/core/ids.h"
#include "sluice/core/status.h"
#include "sluice/state/key_group.h"

namespace sluice::cluster {

// What one subtask of an attempt is deployed with (Flink's TaskDeploymentDescriptor).
struct SubtaskDeployment {
  runtime::ExecutionAttemptId id;
  KeyGroupRange key_group_range;
};

// One attempt of a job: every subtask of the ExecutionGraph once, in its order.
struct AttemptDeployment {
  int32_t attempt_number = 0;
  std::vector<SubtaskDeployment> subtasks;
  // Indexed by JobVertexId: the split enumerator of each source vertex (null for the other vertices). Owned by
  // the JobMaster; must outlive the DeployedTasks.
  std::vector<SourceReaderCoordinator*> source_coordinators;
  // The checkpoint every subtask restores from (the deployer reads each subtask's part where it runs:
  // attempt_restore.h); none: a fresh start. Operators without state in it start empty but see is_restored().
  std::optional<AttemptRestore> restore;
  // Set when `subtasks` is not every subtask of the job: by a TaskManager that holds only its share of an attempt
  // spread over several (where the others run and the data plane that reaches them), and by the JobMaster for one
  // pipelined region deployed alone (the region's subtasks local, no data plane: no channel leaves a region).
  // None: `subtasks` is every subtask of the job.
  std::optional<NetworkPlacement> placement;
};

class DeployedTasks {
 public:
  virtual ~DeployedTasks() = default;

  // A checkpoint or savepoint barrier into every source subtask; `enumerator_states` (by source vertex) goes
  // with it to subtask 0 of that vertex, which stores it in the checkpoint. `savepoint_location`: a savepoint's
  // folder (empty for checkpoints), where tasks with checkpoint storage of their own must write its state.
  virtual void trigger_checkpoint(const runtime::CheckpointBarrier& barrier, const std::string& savepoint_location,
                                  std::map<JobVertexId, std::vector<uint8_t>> enumerator_states) = 0;
  virtual void notify_checkpoint_complete(CheckpointId id) = 0;
  virtual void notify_checkpoint_aborted(CheckpointId id) = 0;

  // Stop-with-savepoint (docs/savepoints.md): sources stop emitting; with `drain` they end their input (every
  // operator's end_input runs), without it no task calls end_input when it finishes.
  virtual void stop_sources(bool drain) = 0;
  // A stop without drain failed: sources emit again and finishing tasks call end_input again.
  virtual void resume_sources() = 0;
  // After the final checkpoint or the stop's savepoint: every task ends.
  virtual void finish() = 0;
  // Every task takes a turn of its mailbox now (e.g. to meet a failure armed for it).
  virtual void wake() = 0;
  // `subtask` fails with `cause` (its TaskManager's data plane lost one of its channels): it is reported as any task
  // failure, and the restart strategy decides. Ignored for a subtask not deployed here.
  virtual void fail(const runtime::ExecutionAttemptId& subtask, const Status& cause) = 0;

  // Where each subtask of the attempt runs (no network call; cheap).
  virtual std::vector<SubtaskLocation> locations() const = 0;

  // Cancels every task (non-blocking); join() then waits until they and their asynchronous snapshots are gone.
  virtual void cancel() = 0;
  virtual void join() = 0;
};

// What every task of the job shares, owned by the JobMaster and handed to the deployer it creates; every pointer
// must outlive the deployer and every DeployedTasks it made.
struct JobTaskContext {
  const StreamGraph* stream_graph = nullptr;
  const graph::JobGraph* job_graph = nullptr;
  const MiniClusterConfig* config = nullptr;  // the job's settings (network, state backend, checkpointing, ...)
  runtime::TaskListener* listener = nullptr;  // the tasks' state changes
  runtime::CheckpointResponder* checkpoint_responder = nullptr;  // null: checkpointing off
  runtime::FaultInjector* fault_injector = nullptr;              // null: none
  MetricGroup* job_metrics = nullptr;
  std::string job_id;                        // hex
  std::vector<std::string> lineage_job_ids;  // hex, newest first
};

class TaskDeployer {
 public:
  virtual ~TaskDeployer() = default;
  // Starts every subtask of `attempt`. An error (e.g. a restore that cannot be read: attempt_restore.h) leaves
  // nothing running.
  [[nodiscard]] virtual Result<std::unique_ptr<DeployedTasks>> deploy(AttemptDeployment attempt) = 0;
  // The job reached `terminal` and its last attempt is gone (called once, by the JobMaster's control thread, before
  // the job's client reports the end). A deployer whose tasks run in TaskManager processes tells them.
  virtual void on_job_end(JobStatus terminal) { (void)terminal; }
  // The job is ending (called once by the JobMaster's control thread, before it stops the last attempt): every task
  // that finished reported so before. A deployer that keeps what its tasks reported takes it as final.
  virtual void before_job_end() {}
  // The job is being cancelled (any thread, any number of times): a deploy() waiting for resources (a TaskManager's
  // slots) stops waiting and returns kCancelled, and so does every later one. A deployer that never waits ignores it.
  virtual void interrupt_deploy() {}
  // The TaskManagers this deployer places tasks on (job_placement.h). Any thread, while the deployer lives.
  virtual std::vector<TaskManagerInfo> task_managers() const = 0;
  // True when deploy() takes one pipelined region's subtasks alone (with a placement naming them, no data plane),
  // beside other regions' deployments that keep running: what region failover needs. False: every deployment is
  // every subtask of the job, and a task failure restarts all of them.
  virtual bool deploys_regions() const { return false; }
};

// Makes the deployer of one job (its JobMaster calls it once, when the job starts).
using TaskDeployerFactory = std::function<std::unique_ptr<TaskDeployer>(JobTaskContext context)>;

}  // namespace sluice::cluster
