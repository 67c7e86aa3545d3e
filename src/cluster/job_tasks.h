// JobTasks: what of one job runs now, as its JobMaster drives it: the tasks of the current attempt, deployed one
// pipelined region at a time (graph/pipelined_regions.h, region_tasks.h) through the job's TaskDeployer, and the
// split enumerators of its sources (one per source vertex, started with each attempt, kept across region restarts).
//
// Regions: with jobmanager.execution.failover-strategy region, a job of several regions and a deployer that deploys
// regions alone (TaskDeployer::deploys_regions), each region is its own deployment, so stop_region and
// deploy_region restart one while the others run (Flink's RestartPipelinedRegionFailoverStrategy). Otherwise the job
// is one region of every subtask.
//
// Thread-safety: deploy_all, stop_all, stop_region and deploy_region from one thread (the JobMaster's control
// thread); the other methods from any thread, serialised with those by an internal mutex. Tasks report through the
// listener given to the deployer, never under that mutex.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cluster/attempt_restore.h"
#include "cluster/mini_cluster.h"
#include "cluster/region_tasks.h"
#include "cluster/task_deployer.h"
#include "graph/job_graph.h"
#include "graph/pipelined_regions.h"
#include "sluice/operators/source_operator.h"

namespace sluice::cluster {

class JobTasks {
 public:
  // All referenced objects must outlive it; `config` is the job's (storage, failover strategy).
  JobTasks(const StreamGraph& stream_graph, const graph::JobGraph& job_graph,
           const graph::ExecutionGraph& execution_graph, const MiniClusterConfig& config);
  ~JobTasks();  // stop_all()

  // Chooses the regions for `deployer` (must outlive this); once, before deploy_all.
  void bind(TaskDeployer* deployer);
  // The regions tasks are deployed by: one of every subtask unless restarted region by region.
  const graph::PipelinedRegions& regions() const { return regions_; }

  // Starts the split enumerators (restored from `restore` when set) and deploys every region as attempt
  // `attempt_number`. Errors: an enumerator that does not start (kInvalidArgument naming the source), an unreadable
  // restore point, a refused deployment; nothing runs then.
  [[nodiscard]] Status deploy_all(int32_t attempt_number, const std::optional<AttemptRestore>& restore);
  // Cancels every task, waits until they and their asynchronous snapshots are gone, then closes the enumerators.
  void stop_all();

  // Cancels region `region`'s tasks and waits until they are gone; the other regions run on.
  void stop_region(size_t region);
  // Deploys region `region` again as attempt `attempt_number` from `restore` (none: from no checkpoint). Its source
  // readers first give back the splits assigned after that checkpoint (SourceCoordinatorBase::reset_subtask).
  // Errors: those of the deployment; the region then has no tasks until a later deploy_region.
  [[nodiscard]] Status deploy_region(size_t region, int32_t attempt_number, const std::optional<AttemptRestore>& restore);

  // `fn` with the running tasks, under the mutex; not called when none are deployed.
  void with_tasks(const std::function<void(DeployedTasks&)>& fn);
  // Snapshots every enumerator for checkpoint `barrier.id` (their event valves close), then sends the barrier into
  // the source tasks, each source's enumerator state to its subtask 0.
  void trigger_checkpoint(const runtime::CheckpointBarrier& barrier, const std::string& savepoint_location);
  void notify_checkpoint_complete(CheckpointId id);
  void notify_checkpoint_aborted(CheckpointId id);
  std::vector<SubtaskLocation> locations() const;

 private:
  AttemptDeployment region_deployment(size_t region, int32_t attempt_number,
                                      const std::optional<AttemptRestore>& restore) const;

  const StreamGraph& sg_;
  const graph::JobGraph& jg_;
  const graph::ExecutionGraph& eg_;
  const MiniClusterConfig& cfg_;
  TaskDeployer* deployer_ = nullptr;
  graph::PipelinedRegions regions_;

  // Replaced by the control thread only, which therefore reads them without the mutex.
  mutable std::mutex mu_;
  std::unique_ptr<RegionTasks> tasks_;
  std::vector<std::unique_ptr<SourceCoordinatorBase>> coordinators_;  // by vertex; null for non-sources
};

}  // namespace sluice::cluster
