// TaskExecutorService: a TaskManager's side of the TaskExecutorGateway (proto/task_executor.proto), Flink's
// TaskExecutor for one job in application mode. The TaskManager built the same JobGraph as its JobManager; an
// attempt it is given runs through the in-process deployer (task threads and the network between them), with
// TaskReports as the tasks' TaskListener and CheckpointResponder and, for each source, a proxy to its split
// enumerator in the JobManager. The state a restored attempt needs is read here, from the checkpoint storage both
// processes reach.
//
// Deployments: the JobMaster deploys the job's subtasks as deployments, each named by a deployment id: every subtask
// of an attempt at once, or, with region failover (jobmanager.execution.failover-strategy region), one pipelined
// region's subtasks, so several deployments - of the same or of different attempts - run here side by side, and
// a region restarts without touching the others. Every call names its deployment.
//
// A deployment spread over several TaskManagers comes in two calls: PrepareAttempt opens this process's data plane
// (TCP, on `data_host`:`data_port`; task_manager_data_plane.h) unless it is open already, and answers with the port,
// then SubmitAttempt names where every subtask runs and the peers' ports and registration ids. The data plane is one
// per process, shared by every deployment here (one connection per pair of TaskManagers carries the channels of all),
// so a fixed taskmanager.data.port serves any number of deployments. On it a TaskManager is known by its registration
// id; the JobMaster submits to the TaskManager with the highest one first: a data connection is dialled by the lower
// id, so every TaskManager a connection reaches has declared its peers already. A remote channel that fails (its
// connection dropped, a bad peer) fails the local subtask of the deployment it belongs to, through the normal task
// failure report; a channel cancelled by its producer is the deployment going away and fails nothing. A deployment's
// end unregisters its channels and leaves the connections open; a new registration (start_registration) shuts the
// data plane down, and it opens again under the new registration id.
//
// Fencing: every request must carry the leader epoch of the TaskManager's current registration (`session()`);
// another epoch is refused with ABORTED, and requests while the TaskManager is not registered with UNAVAILABLE.
// Requests about a deployment not running here are answered and ignored (a late call of a cancelled one).
// SubmitAttempt first cancels every deployment holding one of its subtasks, and refuses a deployment id not above
// every one prepared, deployed or cancelled here, so a submission the JobManager gave up on never runs beside its
// successor.
// Thread-safety: gRPC calls it from its threads; one internal mutex orders the calls that change the deployments.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "cluster/mini_cluster.h"
#include "proto/task_executor.grpc.pb.h"
#include "rpc/task_manager_data_plane.h"
#include "rpc/task_reports.h"

namespace sluice::rpc {

struct TaskExecutorSetup {
  // The job this process built; all must outlive the service.
  const StreamGraph* stream_graph = nullptr;
  const graph::JobGraph* job_graph = nullptr;
  const cluster::MiniClusterConfig* config = nullptr;  // completed (cluster::complete_task_settings)
  MetricGroup* job_metrics = nullptr;
  std::string jobmanager_address;  // "host:port" of the JobManager's control plane
  // The TaskManager's current registration (ResourceManagerConnection), nullopt while it has none.
  std::function<std::optional<TaskManagerSessionId>()> session;
  int64_t report_timeout_ms = 50'000;  // heartbeat.timeout
  // Failures armed for this TaskManager's tasks (runtime/fault_injection.h; the failure tests); null: none.
  runtime::FaultInjector* fault_injector = nullptr;
  // The data plane: taskmanager.host (an IP address) and taskmanager.data.port (0: an ephemeral port). Bound once per
  // registration, at its first deployment spanning TaskManagers, and shared by all its deployments.
  std::string data_host = "127.0.0.1";
  uint16_t data_port = 0;
  // Called on a task's thread before it reports FINISHED (TaskReports' `before_finished`): the TaskManager sends
  // its metric report then, so the JobManager holds the task's final figures. Empty: nothing.
  std::function<void()> before_task_finished = {};
};

class TaskExecutorService final : public v1::TaskExecutorGateway::Service {
 public:
  explicit TaskExecutorService(TaskExecutorSetup setup);
  ~TaskExecutorService() override;  // cancels and joins every deployment

  // Cancels and joins every deployment running here (the TaskManager lost its JobManager, or shuts down).
  void cancel_running_attempt();
  // The highest attempt number of a deployment whose tasks run here, if any.
  std::optional<int32_t> running_attempt();
  // How many deployments have tasks running here.
  size_t running_deployments();
  // The (vertex, subtask) pairs of every deployment whose tasks were installed here and not cancelled or replaced
  // since (a finished task stays until then). Never waits for a deployment being changed (a SubmitAttempt may hold
  // the service for a long restore): then it answers the set it saw last.
  std::set<std::pair<int32_t, int32_t>> hosted_subtasks();
  // The TaskManager registered anew (possibly with a JobManager that started again and counts attempts from 0):
  // cancels what runs and forgets the attempt numbers seen.
  void start_registration();

  grpc::Status PrepareAttempt(grpc::ServerContext* context, const v1::PrepareAttemptRequest* request,
                              v1::PrepareAttemptResponse* response) override;
  grpc::Status SubmitAttempt(grpc::ServerContext* context, const v1::SubmitAttemptRequest* request,
                             v1::TaskExecutorReply* response) override;
  grpc::Status CancelAttempt(grpc::ServerContext* context, const v1::AttemptRequest* request,
                             v1::TaskExecutorReply* response) override;
  grpc::Status TriggerCheckpoint(grpc::ServerContext* context, const v1::TriggerCheckpointRequest* request,
                                 v1::TaskExecutorReply* response) override;
  grpc::Status NotifyCheckpoint(grpc::ServerContext* context, const v1::NotifyCheckpointRequest* request,
                                v1::TaskExecutorReply* response) override;
  grpc::Status ControlTasks(grpc::ServerContext* context, const v1::ControlTasksRequest* request,
                            v1::TaskExecutorReply* response) override;
  grpc::Status SendOperatorEvent(grpc::ServerContext* context, const v1::SendOperatorEventRequest* request,
                                 v1::TaskExecutorReply* response) override;

 private:
  struct Attempt;
  // OK with *session set when `epoch` is the current registration's.
  grpc::Status admit(uint64_t epoch, TaskManagerSessionId* session) const;
  // The deployment `id` when its tasks run here and are of `attempt_number`, else null (mu_ held).
  Attempt* running_locked(uint64_t id, int32_t attempt_number);
  // Removes the deployments (other than `keep`) that hold one of `subtasks`; the caller destroys them (mu_ held).
  std::vector<std::unique_ptr<Attempt>> take_overlapping_locked(const std::vector<std::pair<int32_t, int32_t>>& subtasks,
                                                               uint64_t keep);

  // The channels of a SubmitAttempt spread over several TaskManagers: peers declared on the data plane, indexes
  // in the deployment mapped to data-plane ids (registration ids). mu_ held.
  Result<cluster::NetworkPlacement> placement_of(const v1::SubmitAttemptRequest& request, const Attempt& attempt);

  TaskExecutorSetup setup_;
  // Before deployments_: the deployments release their channels on it as they go.
  TaskManagerDataPlane data_plane_;
  // Held by SubmitAttempt throughout (its tasks start under it) and by every call that touches the attempt.
  std::mutex mu_;
  std::string storage_job_;  // the job the checkpoint storage was initialized for
  uint64_t last_deployment_ = 0;  // the latest deployment prepared, deployed or cancelled: earlier ones are refused
  std::map<uint64_t, std::unique_ptr<Attempt>> deployments_;  // by deployment id
  std::mutex hosted_mu_;  // taken after mu_, if both
  std::set<std::pair<int32_t, int32_t>> hosted_;  // hosted_subtasks() as last seen
};

}  // namespace sluice::rpc
