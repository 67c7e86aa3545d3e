#include "rpc/cluster_process.h"

#include <arpa/inet.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include <spdlog/spdlog.h>

#include "cluster/injectable_tasks.h"
#include "cluster/job_master.h"
#include "cluster/task_manager_job_client.h"
#include "cluster/task_manager_loss_monitor.h"
#include "rpc/job_master_service.h"
#include "rpc/remote_deployer.h"
#include "rpc/resource_manager_service.h"
#include "rpc/rpc_address.h"
#include "rpc/split_enumerator_service.h"
#include "rpc/task_manager.h"
#include "sluice/config/cluster_options.h"
#include "sluice/core/version.h"
#include "sluice/metrics/metric_registry.h"

namespace sluice::rpc {

Result<ClusterProcessConfig> ClusterProcessConfig::from(const Configuration& config) {
  ClusterProcessConfig c;
  c.jobmanager_address = config.get(options::kJobManagerRpcAddress);
  c.jobmanager_port = config.get(options::kJobManagerRpcPort);
  c.taskmanager_host = config.get(options::kTaskManagerHost);
  c.taskmanager_rpc_port = config.get(options::kTaskManagerRpcPort);
  c.taskmanager_data_port = config.get(options::kTaskManagerDataPort);
  c.slots = config.get(options::kNumberOfTaskSlots);
  c.resource_id = config.get(options::kTaskManagerResourceId);
  c.heartbeats.interval_ms = config.get(options::kHeartbeatInterval).count();
  c.heartbeats.timeout_ms = config.get(options::kHeartbeatTimeout).count();
  c.heartbeats.rpc_failure_threshold = config.get(options::kHeartbeatRpcFailureThreshold);
  c.slot_request_timeout_ms = config.get(options::kSlotRequestTimeout).count();
  c.ask_timeout_ms = config.get(options::kAskTimeout).count();
  c.spread_out_slots = config.get(options::kEvenlySpreadOutSlots);
  c.registration_timeout_ms = config.get(options::kTaskManagerRegistrationTimeout).count();
  SLUICE_RETURN_IF_ERROR(c.heartbeats.validate());
  // The data plane binds and announces this address; peers dial it as given.
  unsigned char ip[sizeof(in6_addr)];
  if (inet_pton(AF_INET, c.taskmanager_host.c_str(), ip) != 1 && inet_pton(AF_INET6, c.taskmanager_host.c_str(), ip) != 1) {
    return Status::invalid_argument(options::kTaskManagerHost.key + " '" + c.taskmanager_host +
                                    "': expected an IP address (the TaskManager binds it and its peers dial it)");
  }
  return c;
}

namespace {

// Epoch of the one JobManager of a cluster without high availability (a leader elected by ZooKeeper gets its own).
constexpr uint64_t kLeaderEpoch = 1;

// A JobManager process's control plane: its ResourceManager and the job's services on one gRPC port, the monitor
// that reports lost TaskManagers, and the metrics the TaskManagers report. Lives as long as the job's deployer.
struct JobManagerServices {
  JobManagerServices(const ClusterProcessConfig& p, uint64_t fingerprint, std::map<std::string, std::string> job_settings)
      : rm(sluice_version(), fingerprint, p.heartbeats, SystemClock::shared().get(), std::move(job_settings)),
        rm_service(&rm, kLeaderEpoch, task_manager_metrics.get()) {
    // A lost TaskManager's figures go with it (its tasks run again elsewhere and count there).
    monitor.add([metrics = task_manager_metrics](const cluster::LostTaskManager& lost) {
      metrics->drop(lost.task_manager_id, lost.registration_id);
    });
  }
  ~JobManagerServices() {
    rm_service.shutdown();
    if (server) server->shutdown();
  }
  // Shared with the job's metric registry, which shows them (and may outlive these services).
  std::shared_ptr<cluster::TaskManagerMetrics> task_manager_metrics = std::make_shared<cluster::TaskManagerMetrics>();
  cluster::ResourceManager rm;
  ResourceManagerService rm_service;
  JobMasterService job_master_service{kLeaderEpoch};
  SplitEnumeratorService split_service{kLeaderEpoch};
  std::unique_ptr<RpcServer> server;
  // Polls for heartbeat timeouts every 50 ms (a dropped connection is reported at once anyway).
  cluster::TaskManagerLossMonitor monitor{&rm, 50};
};

// A TaskManager process as its program's JobClient (cluster_process.h).
class TaskManagerClient final : public cluster::TaskManagerJobClient {
 public:
  TaskManagerClient(std::shared_ptr<const StreamGraph> sg, graph::JobGraph jg, cluster::MiniClusterConfig config,
                    JobId id)
      : sg_(std::move(sg)), jg_(std::move(jg)), config_(std::move(config)), id_(id),
        started_(std::chrono::steady_clock::now()),
        kills_(cluster::injectable_tasks(*sg_, jg_, config_.checkpointing), runtime::InjectedFailureEffect::kKillProcess) {
    config_.names = name_source_or_random(config_.names);
    cluster::complete_task_settings(config_, config_.names);
  }
  ~TaskManagerClient() override {
    if (tm_) tm_->stop();
  }

  Status start(const ClusterProcessConfig& p, uint64_t fingerprint, std::map<std::string, std::string> job_settings) {
    TaskManagerConfig c;
    c.bind_address = p.taskmanager_host;
    c.rpc_port = p.taskmanager_rpc_port;
    c.num_slots = p.slots;
    c.sluice_version = sluice_version();
    c.registration_timeout_ms = p.registration_timeout_ms;
    c.job_graph_fingerprint = fingerprint;
    c.job_settings = std::move(job_settings);
    c.executor.stream_graph = sg_.get();
    c.executor.job_graph = &jg_;
    c.executor.config = &config_;
    c.executor.job_metrics = &metrics_.add_job_group(jg_.job_name.empty() ? "job" : jg_.job_name);
    c.metric_registry = &metrics_;
    c.executor.jobmanager_address = host_port(p.jobmanager_address, p.jobmanager_port);
    c.executor.report_timeout_ms = p.heartbeats.timeout_ms;
    c.executor.data_port = static_cast<uint16_t>(p.taskmanager_data_port);
    c.executor.fault_injector = &kills_;
    // Without an id of its own the TaskManager is named by where it serves, so a restart on the same port
    // replaces its predecessor at once; with an ephemeral port the name is only known once bound.
    c.task_manager_id = p.resource_id.empty() && p.taskmanager_rpc_port != 0
                            ? p.taskmanager_host + ":" + std::to_string(p.taskmanager_rpc_port)
                            : p.resource_id;
    if (c.task_manager_id.empty()) c.task_manager_id = p.taskmanager_host + ":" + random_suffix();
    SLUICE_ASSIGN_OR_RETURN(tm_, TaskManager::start(std::move(c), SystemClock::shared().get()));
    spdlog::info("TaskManager serving on {}:{} with {} slot(s); JobManager at {}:{}", p.taskmanager_host,
                 tm_->rpc_port(), p.slots, p.jobmanager_address, p.jobmanager_port);
    return Status::ok();
  }

  JobId job_id() const override { return id_; }
  JobStatus status() const override {
    std::lock_guard lock(mu_);
    return result_ ? result_->status : JobStatus::kRunning;
  }
  void cancel() override { tm_->stop(); }
  JobExecutionResult wait() override {
    Result<std::string> end = tm_->wait_for_end();
    std::lock_guard lock(mu_);
    if (result_) return *result_;
    JobExecutionResult r;
    r.job_id = id_;
    r.job_name = jg_.job_name;
    r.runtime_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_).count();
    if (!end.is_ok()) {
      r.status = JobStatus::kFailed;
      r.error = end.status();
    } else if (*end == "FINISHED") {
      r.status = JobStatus::kFinished;
    } else if (*end == "FAILED") {
      r.status = JobStatus::kFailed;
      r.error = Status::failed_precondition("the JobManager's job failed (its log names the cause)");
    } else {
      r.status = JobStatus::kCanceled;  // cancelled on the JobManager, or this TaskManager was stopped
    }
    tm_->stop();
    result_ = r;
    return r;
  }
  const MetricRegistry& metrics() const override { return metrics_; }

  Status arm_process_kill(runtime::FailurePoint point, int32_t vertex, int32_t subtask,
                          int64_t from_checkpoint_id) override {
    return kills_.arm(point, vertex, subtask, "TaskManager process killed", from_checkpoint_id);
  }

 private:
  std::string random_suffix() const { return config_.names ? config_.names->hex("taskmanager-id", 8) : "taskmanager"; }

  std::shared_ptr<const StreamGraph> sg_;
  graph::JobGraph jg_;
  cluster::MiniClusterConfig config_;
  const JobId id_;
  const std::chrono::steady_clock::time_point started_;
  MetricRegistry metrics_;
  runtime::FaultInjector kills_;  // outlives every attempt deployed here (tm_ is stopped first)
  std::unique_ptr<TaskManager> tm_;
  mutable std::mutex mu_;
  std::optional<JobExecutionResult> result_;
};

}  // namespace

Result<std::unique_ptr<JobClient>> start_job_manager(std::shared_ptr<const StreamGraph> stream_graph,
                                                     graph::JobGraph job_graph, const cluster::MiniClusterConfig& config,
                                                     std::vector<std::unique_ptr<HeldClaim>> claims,
                                                     const ClusterProcessConfig& process, uint64_t fingerprint,
                                                     std::map<std::string, std::string> job_settings) {
  auto services = std::make_shared<JobManagerServices>(process, fingerprint, std::move(job_settings));
  SLUICE_ASSIGN_OR_RETURN(services->server,
                          RpcServer::start(process.jobmanager_address, process.jobmanager_port,
                                           {&services->rm_service, &services->job_master_service, &services->split_service}));
  int32_t slots = 1;
  for (const auto& v : job_graph.vertices) slots = std::max(slots, v.parallelism);
  spdlog::info("JobManager serving on {}:{} (JobGraph {:016x}, Sluice {}); the job needs {} slot(s)",
               process.jobmanager_address, services->server->port(), fingerprint, sluice_version(), slots);
  RemoteDeployerSetup setup;
  setup.leader_epoch = kLeaderEpoch;
  setup.resource_manager = &services->rm;
  setup.loss_monitor = &services->monitor;
  setup.spread_out_slots = process.spread_out_slots;
  setup.slot_request_timeout_ms = process.slot_request_timeout_ms;
  setup.rpc_timeout_ms = process.ask_timeout_ms;
  setup.job_master_service = &services->job_master_service;
  setup.split_enumerator_service = &services->split_service;
  setup.resource_manager_service = &services->rm_service;
  setup.keep_alive = services;
  return cluster::start_job_master(std::move(stream_graph), std::move(job_graph), config, std::move(claims),
                                   [setup, reported = services->task_manager_metrics](
                                       cluster::JobTaskContext context) -> std::unique_ptr<cluster::TaskDeployer> {
                                     // The tasks run in the TaskManagers: the job's metrics show what they report.
                                     if (context.job_metrics != nullptr) {
                                       context.job_metrics->reported_metrics(
                                           "taskmanagers", [reported] { return reported->metrics(); });
                                     }
                                     return std::make_unique<RemoteDeployer>(std::move(context), setup);
                                   });
}

Result<std::unique_ptr<JobClient>> start_task_manager(std::shared_ptr<const StreamGraph> stream_graph,
                                                      graph::JobGraph job_graph, cluster::MiniClusterConfig config,
                                                      const ClusterProcessConfig& process, uint64_t fingerprint,
                                                      std::map<std::string, std::string> job_settings) {
  const JobId id = config.job_id ? *config.job_id : JobId();
  auto client = std::make_unique<TaskManagerClient>(std::move(stream_graph), std::move(job_graph), std::move(config), id);
  SLUICE_RETURN_IF_ERROR(client->start(process, fingerprint, std::move(job_settings)));
  return std::unique_ptr<JobClient>(std::move(client));
}

}  // namespace sluice::rpc
