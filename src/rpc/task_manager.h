// TaskManager: one TaskManager process's control-plane side - its TaskExecutor served on `taskmanager.host`
// (an RpcServer, Flink's TaskExecutor RPC endpoint) and its connection to the JobManager's ResourceManager
// (registration, heartbeats, connection watch). Its TaskExecutor answers under the registration the connection
// currently holds; when the connection loses the JobManager, the running attempt is cancelled at once (Flink's
// TaskExecutor fails its tasks when it disconnects from the JobManager) and the connection registers again.
// Its heartbeats report the metrics of the subtasks it hosts (TaskExecutorService::hosted_subtasks), and a task
// that finishes reports them once more before its FINISHED report.
// Thread-safety: start/stop from one thread.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "rpc/resource_manager_connection.h"
#include "rpc/resource_manager_service.h"
#include "rpc/task_executor_service.h"
#include "sluice/metrics/metric_registry.h"

namespace sluice::rpc {

struct TaskManagerConfig {
  // taskmanager.host: an IP address, where the TaskExecutor and the data plane listen (announced to the JobManager).
  std::string bind_address = "127.0.0.1";
  int32_t rpc_port = 0;                    // the TaskExecutor's port (0: an ephemeral port)
  std::string task_manager_id;
  int32_t num_slots = 1;       // taskmanager.numberOfTaskSlots
  std::string sluice_version;  // this build's release
  uint64_t job_graph_fingerprint = 0;
  std::map<std::string, std::string> job_settings;  // the options the fingerprint covers (graph::fingerprint_settings)
  int64_t registration_retry_ms = 500;
  int64_t registration_timeout_ms = 300'000;  // taskmanager.registration.timeout (0: never give up)
  // The registry `executor.job_metrics` belongs to: its task metrics go with every heartbeat (the JobManager shows
  // them; docs/cluster.md). Null: heartbeats carry no metrics.
  const MetricRegistry* metric_registry = nullptr;
  // The job (as TaskExecutorSetup): stream graph, job graph, config, metrics, jobmanager address, report timeout,
  // fault injector, data port (taskmanager.data.port). `session` and `data_host` are filled in by the TaskManager.
  TaskExecutorSetup executor;
};

class TaskManager final : private ResourceManagerConnection::Listener {
 public:
  // Serves the TaskExecutor and starts registering. kIOError naming taskmanager.host or taskmanager.rpc.port when
  // the TaskExecutor cannot listen there (RpcServer::start).
  static Result<std::unique_ptr<TaskManager>> start(TaskManagerConfig config, const Clock* clock);
  ~TaskManager() override;  // stop()

  int32_t rpc_port() const { return server_->port(); }
  // The registration held now; nullopt while none.
  std::optional<TaskManagerSessionId> session() const;
  // As a process exit: the connection, the server and the running attempt go. Idempotent.
  void stop();
  // The attempt number running here, if any.
  std::optional<int32_t> running_attempt() { return executor_->running_attempt(); }
  // Why the JobManager refused this TaskManager for good (another release or program): the process should stop
  // with it. OK while not refused.
  Status refused() const;
  // Blocks until the JobManager's job ended (its status name: FINISHED, FAILED, CANCELED), the JobManager refused
  // this TaskManager (that error), or stop() was called ("STOPPED").
  Result<std::string> wait_for_end();

 private:
  explicit TaskManager(TaskManagerConfig config) : config_(std::move(config)) {}
  void on_registered(uint64_t leader_epoch, uint64_t registration_id, const cluster::HeartbeatSettings&) override;
  void on_jobmanager_lost(const std::string& reason) override;
  void on_refused(const Status& reason) override;
  void on_job_ended(const std::string& job_status) override;

  TaskManagerConfig config_;
  mutable std::mutex mu_;
  std::condition_variable ended_;
  std::optional<TaskManagerSessionId> session_;
  Status refused_;
  std::string job_ended_;
  std::unique_ptr<TaskExecutorService> executor_;
  std::unique_ptr<RpcServer> server_;
  std::unique_ptr<ResourceManagerConnection> connection_;
  bool stopped_ = false;
};

}  // namespace sluice::rpc
