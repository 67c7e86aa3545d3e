#include "rpc/task_manager_data_plane.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "runtime/network/tcp/data_connection_manager.h"

namespace sluice::rpc {

void ChannelFailures::on_channel_failed(const runtime::tcp::RemoteChannelId& channel, const Status& reason) {
  if (reason.code() == StatusCode::kCancelled) return;  // its producer's deployment is being cancelled
  std::lock_guard lock(mu_);
  if (gone_) return;
  if (!tasks_) {
    early_.emplace_back(channel, reason);
    return;
  }
  fail_locked(channel, reason);
}

void ChannelFailures::attach(cluster::DeployedTasks* tasks, cluster::NetworkPlacement placement) {
  std::lock_guard lock(mu_);
  tasks_ = tasks;
  placement_ = std::move(placement);
  for (const auto& [channel, reason] : early_) fail_locked(channel, reason);
  early_.clear();
}

void ChannelFailures::detach() {
  std::lock_guard lock(mu_);
  gone_ = true;
  tasks_ = nullptr;
}

void ChannelFailures::fail_locked(const runtime::tcp::RemoteChannelId& channel, const Status& reason) {
  for (const auto& [vertex, subtask] : placement_.local_ends(*job_, channel)) {
    tasks_->fail(runtime::ExecutionAttemptId{JobVertexId(vertex), SubtaskIndex(subtask), attempt_},
                 reason.with_context("remote channel " + channel.to_string()));
  }
}

TaskManagerDataPlane::TaskManagerDataPlane(std::string host, uint16_t port) : host_(std::move(host)), port_(port) {}

TaskManagerDataPlane::~TaskManagerDataPlane() { reset(); }

Result<uint16_t> TaskManagerDataPlane::open(int32_t self_id, uint64_t fingerprint) {
  std::lock_guard lock(mu_);
  if (manager_ && self_id == self_id_ && fingerprint == fingerprint_) return manager_->port();
  if (manager_) {
    size_t users = 0;
    {
      std::lock_guard routes(routes_mu_);
      users = routes_.size();
    }
    if (users > 0) {
      return Status::failed_precondition(fmt::format(
          "the data plane runs as TaskManager {} with fingerprint {:#x} for {} deployment(s); asked for TaskManager {} "
          "with fingerprint {:#x}",
          self_id_, fingerprint_, users, self_id, fingerprint));
    }
    manager_->shutdown();
    manager_.reset();
    peer_ids_.clear();
  }
  runtime::tcp::DataPlaneConfig config;
  config.host = host_;
  config.port = port_;
  config.taskmanager_id = self_id;
  config.job_fingerprint = fingerprint;
  runtime::tcp::DataPlaneCallbacks callbacks;
  callbacks.on_channel_failed = [this](const runtime::tcp::RemoteChannelId& channel, uint64_t owner,
                                       const Status& reason) { on_channel_failed(channel, owner, reason); };
  SLUICE_ASSIGN_OR_RETURN(manager_, runtime::tcp::DataConnectionManager::start(config, std::move(callbacks)));
  self_id_ = self_id;
  fingerprint_ = fingerprint;
  return manager_->port();
}

Status TaskManagerDataPlane::declare_peers(const std::vector<Peer>& peers) {
  std::lock_guard lock(mu_);
  if (!manager_) return Status::failed_precondition("the data plane is not open");
  for (const Peer& peer : peers) {
    if (peer.id == self_id_) continue;
    auto [it, added] = peer_ids_.emplace(peer.task_manager_id, peer.id);
    if (!added && it->second != peer.id) {
      // Registered again since (a new process, or the same after losing its JobManager): what it had is gone.
      spdlog::info("data plane: TaskManager '{}' registered again (data-plane id {} -> {}); closing its old connection",
                   peer.task_manager_id, it->second, peer.id);
      manager_->remove_peer(it->second);
      it->second = peer.id;
    }
    SLUICE_RETURN_IF_ERROR(manager_->add_peer(peer.id, peer.host, peer.port));
  }
  return Status::ok();
}

void TaskManagerDataPlane::track(uint64_t deployment, std::shared_ptr<ChannelFailures> failures) {
  std::lock_guard routes(routes_mu_);
  routes_[deployment] = std::move(failures);
}

void TaskManagerDataPlane::release(uint64_t deployment) {
  std::lock_guard lock(mu_);
  {
    std::lock_guard routes(routes_mu_);
    routes_.erase(deployment);
  }
  if (manager_) manager_->release(deployment);
}

runtime::tcp::DataConnectionManager* TaskManagerDataPlane::manager() {
  std::lock_guard lock(mu_);
  return manager_.get();
}

void TaskManagerDataPlane::reset() {
  std::lock_guard lock(mu_);
  if (manager_) manager_->shutdown();
  manager_.reset();
  self_id_ = -1;
  fingerprint_ = 0;
  peer_ids_.clear();
  std::lock_guard routes(routes_mu_);
  routes_.clear();
}

void TaskManagerDataPlane::on_channel_failed(const runtime::tcp::RemoteChannelId& channel, uint64_t owner,
                                             const Status& reason) {
  std::shared_ptr<ChannelFailures> failures;
  {
    std::lock_guard routes(routes_mu_);
    auto it = routes_.find(owner);
    if (it == routes_.end()) return;  // a deployment that ended: its channels no longer matter
    failures = it->second;
  }
  failures->on_channel_failed(channel, reason);
}

}  // namespace sluice::rpc
