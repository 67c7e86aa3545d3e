// InProcessDeployer: runs every subtask of an attempt as a thread of this process (the MiniCluster's way, and a
// TaskManager's for the subtasks it holds). Each attempt gets a fresh in-process network (attempt_network.h), one
// StreamTask thread per subtask and a buffer-timeout flusher (Flink's OutputFlusher: partial buffers go out at
// least once per execution.buffer-timeout.interval). Asynchronous snapshot parts run on one executor shared by
// all attempts, so join() waits for the old attempt's snapshots before a new attempt reads its restored state.
//
// Thread-safety: deploy() from one thread at a time; see task_deployer.h for DeployedTasks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cluster/task_deployer.h"
#include "runtime/checkpointing/async_snapshot_executor.h"

namespace sluice::cluster {

class InProcessDeployer final : public TaskDeployer {
 public:
  explicit InProcessDeployer(JobTaskContext context) : context_(std::move(context)) {}
  ~InProcessDeployer() override;

  // Errors: those of reading the restored state (attempt_restore.h); nothing runs then.
  Result<std::unique_ptr<DeployedTasks>> deploy(AttemptDeployment attempt) override;

 private:
  JobTaskContext context_;
  runtime::AsyncSnapshotExecutor executor_{2};
};

}  // namespace sluice::cluster
