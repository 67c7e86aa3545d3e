// RemoteDeployer: the JobMaster's TaskDeployer for tasks in a TaskManager process. An attempt goes to the
// TaskManager's TaskExecutorGateway as one SubmitAttempt (its subtasks with their key-group ranges and the checkpoint
// to restore from: the TaskManager reads its subtasks' state from checkpoint storage itself); every DeployedTasks
// call becomes one call to that TaskExecutor under the JobManager's leader epoch. The tasks' reports come back
// through the JobMasterService and their source readers' calls through the SplitEnumeratorService, both bound to
// this deployer's job while it lives; events the split enumerators send to a reader are delivered in order by one
// sender thread per attempt.
//
// Every subtask of an attempt runs on the one TaskManager given (its slots must hold the job); spreading an
// attempt over several TaskManagers needs the TCP data plane between them (docs/cluster.md).
//
// With a ResourceManager, a deployment waits up to slot.request.timeout for the TaskManager to be registered (a
// replacement of a lost one), as Flink's JobMaster waits for slots; with a loss monitor, the running attempt fails
// as soon as its TaskManager's registration is lost.
// A call the TaskExecutor refuses or cannot be reached for fails the job's tasks through the JobMaster's listener
// (on_task_failed with the call's error), so the restart strategy decides, as for any task failure.
// Thread-safety: deploy() from one thread at a time (the JobMaster's control thread); DeployedTasks as in
// task_deployer.h.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "cluster/resource_manager.h"
#include "cluster/task_deployer.h"
#include "cluster/task_manager_loss_monitor.h"
#include "rpc/job_master_service.h"
#include "rpc/split_enumerator_service.h"

namespace sluice::rpc {

struct RemoteDeployerSetup {
  uint64_t leader_epoch = 0;
  std::string task_executor_address;  // "host:port" of the TaskManager's TaskExecutorGateway
  // The TaskManager, by its id. With `resource_manager`, every attempt goes to its registration current at
  // deployment (an attempt fails to deploy, retriably, while it is not registered) and `loss_monitor`, when given,
  // fails the running attempt as soon as that registration is lost. Without one, `registration_id` is fixed.
  // Only the registration's reports and reader calls count.
  std::string task_manager_id;
  uint64_t registration_id = 0;
  cluster::ResourceManager* resource_manager = nullptr;
  cluster::TaskManagerLossMonitor* loss_monitor = nullptr;
  // slot.request.timeout (Flink's default 5 min): how long a deployment waits for the TaskManager to be registered
  // before it fails (retriably, through the restart strategy). The JobMaster's control thread waits meanwhile, so a
  // cancel takes effect once the wait ends.
  int64_t slot_request_timeout_ms = 300'000;
  int64_t rpc_timeout_ms = 10'000;    // one call; CancelAttempt waits for the tasks to end, so it gets 6x that
  // Served by the JobManager's RpcServer; bound to the job from construction to destruction. Must outlive this.
  JobMasterService* job_master_service = nullptr;
  SplitEnumeratorService* split_enumerator_service = nullptr;
};

class RemoteDeployer final : public cluster::TaskDeployer, private ReaderHub {
 public:
  RemoteDeployer(cluster::JobTaskContext context, RemoteDeployerSetup setup);
  ~RemoteDeployer() override;  // unbinds the services

  Result<std::unique_ptr<cluster::DeployedTasks>> deploy(cluster::AttemptDeployment attempt) override;

 private:
  class Attempt;
  bool register_reader(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader,
                       std::vector<OperatorEvent>* events) override;
  bool request_split(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader) override;
  bool snapshot_done(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader,
                     CheckpointId checkpoint_id) override;
  // True when `id` is of the current attempt and `from` is the TaskManager registration it was deployed to (mu_ held).
  bool counts_locked(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& id) const;
  // The current attempt's coordinator of `reader`'s vertex, or null when the call does not count (mu_ held).
  SourceReaderCoordinator* coordinator_of(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader);

  cluster::JobTaskContext context_;
  RemoteDeployerSetup setup_;
  struct Stub;
  std::shared_ptr<Stub> stub_;

  void on_lost(const cluster::LostTaskManager& lost);

  std::mutex mu_;
  Attempt* current_ = nullptr;  // the attempt deployed last, until it is cancelled
  int64_t loss_handle_ = 0;
};

}  // namespace sluice::rpc
