// RemoteDeployer: the JobMaster's TaskDeployer for tasks in TaskManager processes. The job holds slots from the
// ResourceManager (slot sharing as in Flink's default group: slot k holds subtask k of every vertex), asked for when
// a deployment first needs them and kept until the job ends; a slot whose TaskManager is lost is replaced by the
// next deployment that needs it, waiting up to slot.request.timeout for a free one, as Flink's JobMaster waits for
// slots; cluster.evenly-spread-out-slots picks them one TaskManager after another or spread out.
//
// Each deploy() is one deployment (a deployment id, increasing): every subtask of an attempt, or with region
// failover one pipelined region's subtasks, deployed alone beside the other regions' deployments (deploys_regions).
// Every TaskManager holding a slot of the deployment gets its subtasks as one SubmitAttempt, with their key-group
// ranges and the checkpoint to restore from (each TaskManager reads its subtasks' state from checkpoint storage
// itself). When the deployment's slots are on several TaskManagers, each first opens its process's TCP data plane
// (PrepareAttempt; one per TaskManager, shared by all its deployments, so a fixed taskmanager.data.port serves any
// number of them) and the submissions name every subtask's TaskManager and every peer's data port and registration
// id, highest registration id first (task_executor_service.h).
//
// Every DeployedTasks call becomes one call to each TaskManager of the deployment under the JobManager's leader
// epoch, all sent in order by one sender thread per deployment; events the split enumerators send to a reader go to
// its TaskManager in that same order. The tasks' reports come back through the JobMasterService and their source
// readers' calls through the SplitEnumeratorService, both bound to this deployer's job while it lives; only those
// from the TaskManager registration a running deployment put the subtask on count. With a loss monitor, every
// running deployment with a subtask on a lost TaskManager fails as soon as its registration is lost: its region
// restarts (or the job, with one region), on a replacement slot.
// A call a TaskExecutor refuses or cannot be reached for fails the deployment's tasks through the JobMaster's
// listener (on_task_failed for one of its subtasks, with the call's error), so the restart strategy decides, as for
// any task failure.
// Thread-safety: deploy() from one thread at a time (the JobMaster's control thread); DeployedTasks as in
// task_deployer.h.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
  // (retriably, through the restart strategy). The JobMaster's control thread waits meanwhile; a cancel interrupts
  // the wait (interrupt_deploy), so the job goes CANCELED at once.
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
  void before_job_end() override;
  void on_job_end(JobStatus terminal) override;
  // A deploy() waiting for slots returns kCancelled within a few milliseconds; so does every later one.
  void interrupt_deploy() override;
  std::vector<cluster::TaskManagerInfo> task_managers() const override { return setup_.resource_manager->task_managers(); }
  bool deploys_regions() const override { return true; }

 private:
  class Attempt;
  bool register_reader(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader,
                       std::vector<OperatorEvent>* events) override;
  bool request_split(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader) override;
  bool snapshot_done(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader,
                     CheckpointId checkpoint_id) override;
  // The running deployment that put `id` (its attempt number included) on the TaskManager registration `from`, or
  // null: the report or call does not count (mu_ held).
  Attempt* deployment_of(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& id) const;
  // That deployment's coordinator of `reader`'s vertex, or null when the call does not count (mu_ held).
  SourceReaderCoordinator* coordinator_of(const TaskManagerSessionId& from, const runtime::ExecutionAttemptId& reader,
                                          Attempt** deployment = nullptr);

  struct Stub;
  struct Target;
  class ReaderSink;
  // Keeps `sink` until the deployer goes (split enumerators hold its address); returns it.
  ReaderSink* keep_sink(std::unique_ptr<ReaderSink> sink);
  std::mutex sinks_mu_;
  std::vector<std::unique_ptr<ReaderSink>> reader_sinks_;  // guarded by sinks_mu_
  // The TaskExecutor stub of `address` ("host:port"), made once and kept (its channel reconnects quickly).
  std::shared_ptr<Stub> stub_for(const std::string& address);
  // Makes sure the job holds slots `needed` (slot indexes), replacing those of lost TaskManagers and waiting for
  // free ones, and returns, per TaskManager holding some of them (in order of their first slot), its target;
  // (*slot_tm)[k] gets the index of slot k's TaskManager (-1 for slots not needed).
  Result<std::vector<Target>> allocate_slots(int32_t attempt_number, const std::vector<bool>& needed,
                                             std::vector<int32_t>* slot_tm);

  cluster::JobTaskContext context_;
  RemoteDeployerSetup setup_;
  std::map<std::string, std::shared_ptr<Stub>> stubs_;  // by address; deploy() only

  void on_lost(const cluster::LostTaskManager& lost);

  // The job's slots, by slot index (deploy() only): where it is and the registration it was allocated from.
  struct HeldSlot {
    cluster::AllocatedSlot slot;
    uint64_t registration_id = 0;
  };
  std::vector<std::optional<HeldSlot>> slots_;
  uint64_t next_deployment_id_ = 1;  // deploy() only

  std::mutex interrupt_mu_;
  std::condition_variable interrupt_cv_;
  bool interrupted_ = false;  // guarded by interrupt_mu_

  std::mutex mu_;
  std::vector<Attempt*> running_;  // deployed and not cancelled
  int64_t loss_handle_ = 0;
};

}  // namespace sluice::rpc
