// InProcessDeployer: runs every subtask of an attempt as a thread of this process (the MiniCluster's way, and a
// TaskManager's for the subtasks it holds). Each attempt gets a fresh in-process network (attempt_network.h), one
// StreamTask thread per subtask and a buffer-timeout flusher (Flink's OutputFlusher: partial buffers go out at
// least once per execution.buffer-timeout.interval). Asynchronous snapshot parts run on one executor shared by
// all attempts, so join() waits for the old attempt's snapshots before a new attempt reads its restored state.
//
// Where the tasks run (job_placement.h) is reported as the MiniCluster's one TaskManager, this process, with as many
// slots as the job's highest vertex parallelism; a TaskManager process, which uses it for its share of an
// attempt, is reported by its JobManager's deployer instead.
//
// Thread-safety: deploy() from one thread at a time; task_managers() from any thread; see task_deployer.h for
// DeployedTasks.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cluster/task_deployer.h"
#include "runtime/checkpointing/async_snapshot_executor.h"

namespace sluice::cluster {

class InProcessDeployer final : public TaskDeployer {
 public:
  explicit InProcessDeployer(JobTaskContext context);
  ~InProcessDeployer() override;

  // Errors: those of reading the restored state (attempt_restore.h); nothing runs then.
  Result<std::unique_ptr<DeployedTasks>> deploy(AttemptDeployment attempt) override;
  std::vector<TaskManagerInfo> task_managers() const override;
  bool deploys_regions() const override { return true; }

 private:
  JobTaskContext context_;
  const int64_t started_at_ms_;  // wall clock
  // How many deployments (attempts, or pipelined regions of one) have tasks now: their slots count as allocated.
  std::shared_ptr<std::atomic<int32_t>> deployed_ = std::make_shared<std::atomic<int32_t>>(0);
  runtime::AsyncSnapshotExecutor executor_{2};
};

}  // namespace sluice::cluster
