// RemoteDeployer: the JobMaster's TaskDeployer for tasks in TaskManager processes. Each deployment asks the
// ResourceManager for the job's slots (slot sharing as in Flink's default group: slot k holds subtask k of every
// vertex), waiting up to slot.request.timeout for enough TaskManagers to be registered, as Flink's JobMaster waits
// for slots; cluster.evenly-spread-out-slots picks them one TaskManager after another or spread out. Every
// TaskManager holding a slot gets its subtasks as one SubmitAttempt, with their key-group ranges and the checkpoint
// to restore from (each TaskManager reads its subtasks' state from checkpoint storage itself). When the slots are
// on several TaskManagers, each first opens its end of the attempt's TCP data plane (PrepareAttempt) and the
// submissions name every subtask's TaskManager and every peer's data port, highest index first
// (task_executor_service.h).
//
// Every DeployedTasks call becomes one call to each TaskManager of the attempt under the JobManager's leader epoch,
// all sent in order by one sender thread per attempt; events the split enumerators send to a reader go to its
// TaskManager in that same order. The tasks' reports come back through the JobMasterService and their source
// readers' calls through the SplitEnumeratorService, both bound to this deployer's job while it lives; only those
// from the TaskManager registration a subtask was deployed to count. With a loss monitor, the running attempt fails
// as soon as one of its TaskManagers' registrations is lost.
// A call a TaskExecutor refuses or cannot be reached for fails the job's tasks through the JobMaster's listener
// (on_task_failed with the call's error), so the restart strategy decides, as for any task failure.
// Thread-safety: deploy() from one thread at a time (the JobMaster's control thread); DeployedTasks as in
// task_deployer.h.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/resource_manager.h"
#include "cluster/task_deployer.h"
#include "cluster/task_manager_loss_monitor.h"
#include "rpc/job_master_service.h"
#include "rpc/resource_manager_service.h"
#include "rpc/split_enumerator_service.h"

namespace sluice::rpc {

struct RemoteDeployerSetup {
  uint64_t leader_epoch = 0;
  // The registered TaskManagers and their slots; required, must outlive the deployer (whose destruction frees the
  // job's slots). `loss_monitor`, when given, fails the running attempt as soon as one of its TaskManagers is lost.
  cluster::ResourceManager* resource_manager = nullptr;
  cluster::TaskManagerLossMonitor* loss_monitor = nullptr;
  bool spread_out_slots = false;  // cluster.evenly-spread-out-slots (Flink's default: false)
  // slot.request.timeout (Flink's default 5 min): how long a deployment waits for enough free slots before it fails
  // (retriably, through the restart strategy). The JobMaster's control thread waits meanwhile, so a cancel takes
  // effect once the wait ends.
  int64_t slot_request_timeout_ms = 300'000;
  // pekko.ask.timeout: one call; CancelAttempt waits for the tasks to end, so it gets 6x that.
  int64_t rpc_timeout_ms = 10'000;
  // Served by the JobManager's RpcServer; bound to the job from construction to destruction. Must outlive this.
  JobMasterService* job_master_service = nullptr;
  SplitEnumeratorService* split_enumerator_service = nullptr;
  // When given, told the job's end (ResourceManagerService::end_job), so its TaskManagers end with it.
  ResourceManagerService* resource_manager_service = nullptr;
  // What the deployer keeps alive until it is destroyed (a JobManager process's services); may be null.
  std::shared_ptr<void> keep_alive;
};

class RemoteDeployer final : public cluster::TaskDeployer, private ReaderHub {
 public:
  RemoteDeployer(cluster::JobTaskContext context, RemoteDeployerSetup setup);
  ~RemoteDeployer() override;  // unbinds the services

  Result<std::unique_ptr<cluster::DeployedTasks>> deploy(cluster::AttemptDeployment attempt) override;
  void on_job_end(JobStatus terminal) override;
  std::vector<cluster::TaskManagerInfo> task_managers() const override { return setup_.resource_manager->task_managers(); }

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

  struct Stub;
  struct Target;
  class ReaderSink;
  // Keeps `sink` until the deployer goes (split enumerators hold its address); returns it.
  ReaderSink* keep_sink(std::unique_ptr<ReaderSink> sink);
  std::mutex sinks_mu_;
  std::vector<std::unique_ptr<ReaderSink>> reader_sinks_;  // guarded by sinks_mu_
  // The TaskExecutor stub of `address` ("host:port"), made once and kept (its channel reconnects quickly).
  std::shared_ptr<Stub> stub_for(const std::string& address);
  // Waits for the job's slots and returns, per TaskManager holding some (in order of their first slot), its target;
  // *slot_tm gets the index of each slot's TaskManager.
  Result<std::vector<Target>> allocate_slots(int32_t attempt_number, int32_t slots, std::vector<int32_t>* slot_tm);

  cluster::JobTaskContext context_;
  RemoteDeployerSetup setup_;
  std::map<std::string, std::shared_ptr<Stub>> stubs_;  // by address; deploy() only

  void on_lost(const cluster::LostTaskManager& lost);

  std::mutex mu_;
  Attempt* current_ = nullptr;  // the attempt deployed last, until it is cancelled
  int64_t loss_handle_ = 0;
};

}  // namespace sluice::rpc
