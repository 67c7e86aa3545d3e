#include "rpc/task_manager.h"

#include <spdlog/spdlog.h>

#include "rpc/metric_report.h"

namespace sluice::rpc {

Result<std::unique_ptr<TaskManager>> TaskManager::start(TaskManagerConfig config, const Clock* clock) {
  std::unique_ptr<TaskManager> tm(new TaskManager(std::move(config)));
  TaskExecutorSetup setup = tm->config_.executor;
  setup.data_host = tm->config_.bind_address;
  setup.session = [t = tm.get()] { return t->session(); };
  // The connection exists before any task runs: tasks come only once it registered.
  if (tm->config_.metric_registry) setup.before_task_finished = [t = tm.get()] { t->connection_->report_metrics_now(); };
  tm->executor_ = std::make_unique<TaskExecutorService>(std::move(setup));
  SLUICE_ASSIGN_OR_RETURN(tm->server_, RpcServer::start(tm->config_.bind_address, tm->config_.rpc_port,
                                                        {tm->executor_.get()}, RpcServerKeys::task_manager()));
  cluster::TaskManagerRegistration r{tm->config_.task_manager_id, tm->config_.bind_address, tm->server_->port(),
                                     tm->config_.executor.data_port,   tm->config_.num_slots, tm->config_.sluice_version,
                                     tm->config_.job_graph_fingerprint, tm->config_.job_settings};
  ResourceManagerConnectionConfig connection{tm->config_.executor.jobmanager_address, std::move(r),
                                             tm->config_.registration_retry_ms, tm->config_.registration_timeout_ms,
                                             {}};
  if (const MetricRegistry* registry = tm->config_.metric_registry) {
    connection.task_metrics = [t = tm.get(), registry] {
      return hosted_task_metrics(registry->snapshot(), *t->config_.executor.stream_graph, *t->config_.executor.job_graph,
                                 t->executor_->hosted_subtasks());
    };
  }
  tm->connection_ = std::make_unique<ResourceManagerConnection>(
      std::move(connection), static_cast<ResourceManagerConnection::Listener*>(tm.get()), clock);
  tm->connection_->start();
  return tm;
}

TaskManager::~TaskManager() { stop(); }

std::optional<TaskManagerSessionId> TaskManager::session() const {
  std::lock_guard lock(mu_);
  return session_;
}

void TaskManager::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  ended_.notify_all();
  // A start() that failed (its port could not be bound) leaves what it had not built yet null.
  if (server_) server_->shutdown(0);
  if (connection_) connection_->stop();
  if (executor_) executor_->cancel_running_attempt();
}

Result<std::string> TaskManager::wait_for_end() {
  std::unique_lock lock(mu_);
  ended_.wait(lock, [&] { return stopped_ || !refused_.is_ok() || !job_ended_.empty(); });
  if (!refused_.is_ok()) return refused_;
  if (!job_ended_.empty()) return job_ended_;
  return std::string("STOPPED");
}

void TaskManager::on_job_ended(const std::string& job_status) {
  {
    std::lock_guard lock(mu_);
    job_ended_ = job_status;
    session_.reset();
  }
  executor_->cancel_running_attempt();
  ended_.notify_all();
}

void TaskManager::on_registered(uint64_t leader_epoch, uint64_t registration_id, const cluster::HeartbeatSettings&) {
  executor_->start_registration();
  std::lock_guard lock(mu_);
  session_ = TaskManagerSessionId{leader_epoch, config_.task_manager_id, registration_id};
}

void TaskManager::on_jobmanager_lost(const std::string& reason) {
  {
    std::lock_guard lock(mu_);
    session_.reset();
  }
  spdlog::warn("TaskManager '{}': cancelling its tasks, the JobManager is lost ({})", config_.task_manager_id, reason);
  executor_->cancel_running_attempt();
}

Status TaskManager::refused() const {
  std::lock_guard lock(mu_);
  return refused_;
}

void TaskManager::on_refused(const Status& reason) {
  {
    std::lock_guard lock(mu_);
    refused_ = reason;
  }
  ended_.notify_all();
  if (reason.code() == StatusCode::kTimeout) {  // nothing answered: no JobManager refused anything
    spdlog::error("TaskManager '{}': gave up registering: {}", config_.task_manager_id, reason.to_string());
  } else {
    spdlog::error("TaskManager '{}': the JobManager refused it for good: {}", config_.task_manager_id, reason.to_string());
  }
}

}  // namespace sluice::rpc
