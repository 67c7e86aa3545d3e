#include "rpc/resource_manager_service.h"

#include <chrono>

#include <spdlog/spdlog.h>

#include "rpc/grpc_status.h"
#include "rpc/metric_report.h"

namespace sluice::rpc {

ResourceManagerService::ResourceManagerService(cluster::ResourceManager* resource_manager, uint64_t leader_epoch,
                                               cluster::TaskManagerMetrics* metrics)
    : rm_(resource_manager), leader_epoch_(leader_epoch), metrics_(metrics) {}

void ResourceManagerService::shutdown() {
  {
    std::lock_guard lock(mu_);
    shutting_down_ = true;
  }
  cv_.notify_all();
}

void ResourceManagerService::end_job(const std::string& job_status) {
  {
    std::lock_guard lock(mu_);
    job_ended_ = job_status.empty() ? "ENDED" : job_status;
    shutting_down_ = true;
  }
  cv_.notify_all();
}

grpc::Status ResourceManagerService::check_epoch(uint64_t epoch, const std::string& task_manager_id) const {
  if (epoch == leader_epoch_) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::ABORTED, "TaskManager '" + task_manager_id + "' sent leader epoch " +
                                                     std::to_string(epoch) + ", this JobManager leads epoch " +
                                                     std::to_string(leader_epoch_) + ": register again");
}

grpc::Status ResourceManagerService::RegisterTaskManager(grpc::ServerContext* context,
                                                         const v1::RegisterTaskManagerRequest* request,
                                                         v1::RegisterTaskManagerResponse* response) {
  if (request->protocol_version() != kControlProtocolVersion) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "TaskManager '" + request->task_manager_id() + "' speaks control protocol version " +
                            std::to_string(request->protocol_version()) + ", this JobManager version " +
                            std::to_string(kControlProtocolVersion));
  }
  cluster::TaskManagerRegistration r;
  r.task_manager_id = request->task_manager_id();
  r.host = request->host();
  r.rpc_port = static_cast<int32_t>(std::min<uint32_t>(request->rpc_port(), 1u << 30));
  r.data_port = static_cast<int32_t>(std::min<uint32_t>(request->data_port(), 1u << 30));
  r.num_slots = static_cast<int32_t>(std::min<uint32_t>(request->num_slots(), 1u << 20));
  r.sluice_version = request->sluice_version();
  r.job_graph_fingerprint = request->job_graph_fingerprint();
  r.job_settings.insert(request->job_settings().begin(), request->job_settings().end());
  auto id = rm_->register_task_manager(r, /*connected=*/false);
  if (!id.is_ok()) {
    if (id.status().retriable()) {
      // Its id is held by a live TaskManager: it tries again every half second, so say so once per 10 s.
      const int64_t now = SystemClock::shared()->now_ms();
      int64_t last = last_retriable_warning_ms_.load();
      if (now - last >= 10'000 && last_retriable_warning_ms_.compare_exchange_strong(last, now)) {
        spdlog::warn("TaskManager registration from {} refused until its id is free: {}", context->peer(),
                     id.status().to_string());
      }
      return grpc::Status(grpc::StatusCode::ALREADY_EXISTS, id.status().message());
    }
    spdlog::warn("refused TaskManager registration from {}: {}", context->peer(), id.status().to_string());
    return to_grpc(id.status());
  }
  spdlog::info("TaskManager '{}' at {}:{} registered with {} slot(s) (registration {}, from {})", r.task_manager_id,
               r.host, r.rpc_port, r.num_slots, *id, context->peer());
  const cluster::HeartbeatSettings& hb = rm_->heartbeats();
  response->set_leader_epoch(leader_epoch_);
  response->set_registration_id(*id);
  response->set_heartbeat_interval_ms(hb.interval_ms);
  response->set_heartbeat_timeout_ms(hb.timeout_ms);
  response->set_heartbeat_rpc_failure_threshold(hb.rpc_failure_threshold);
  return grpc::Status::OK;
}

grpc::Status ResourceManagerService::Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest* request,
                                               v1::HeartbeatResponse*) {
  const v1::TaskManagerSession& session = request->session();
  if (auto fenced = check_epoch(session.leader_epoch(), session.task_manager_id()); !fenced.ok()) return fenced;
  const Status accepted = rm_->heartbeat(session.task_manager_id(), session.registration_id());
  if (accepted.is_ok() && metrics_ != nullptr && request->has_metrics()) {
    const v1::MetricReport& report = request->metrics();
    if (report.omitted() > 0) {
      spdlog::debug("TaskManager '{}' left {} metrics out of its report", session.task_manager_id(), report.omitted());
    }
    metrics_->update(session.task_manager_id(), session.registration_id(), report.sequence(), from_proto(report));
  }
  return to_grpc(accepted);
}

grpc::Status ResourceManagerService::WatchConnection(grpc::ServerContext* context,
                                                     const v1::WatchConnectionRequest* request,
                                                     grpc::ServerWriter<v1::ConnectionEvent>* writer) {
  const v1::TaskManagerSession& session = request->session();
  const std::string& id = session.task_manager_id();
  if (auto fenced = check_epoch(session.leader_epoch(), id); !fenced.ok()) return fenced;
  if (!rm_->is_registered(id, session.registration_id())) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "TaskManager '" + id + "' is not registered (registration " +
                                                         std::to_string(session.registration_id()) + ")");
  }
  // The TaskManager knows its registration by now (it opens the watch after the reply): its slots are offered.
  rm_->mark_connected(id, session.registration_id());
  // The first event tells the TaskManager that its connection is watched from here on.
  if (!writer->Write(v1::ConnectionEvent{})) {
    rm_->disconnect(id, session.registration_id(), "connection to the TaskManager lost (" + context->peer() + ")");
    return grpc::Status::CANCELLED;
  }
  // The sync server has no "call cancelled" callback: look every 20 ms, which bounds how late a dead peer is seen.
  std::unique_lock lock(mu_);
  while (!shutting_down_) {
    if (context->IsCancelled()) {
      lock.unlock();
      spdlog::warn("connection to TaskManager '{}' lost ({})", id, context->peer());
      rm_->disconnect(id, session.registration_id(), "connection to the TaskManager lost (" + context->peer() + ")");
      return grpc::Status::CANCELLED;
    }
    if (!rm_->is_registered(id, session.registration_id())) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          "TaskManager '" + id + "' is no longer registered (registration " +
                              std::to_string(session.registration_id()) + "): register again");
    }
    cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
  if (!job_ended_.empty()) {
    v1::ConnectionEvent last;
    last.set_job_ended(job_ended_);
    lock.unlock();
    writer->Write(last);
    rm_->unregister(id, session.registration_id());  // it ends with the job: not a loss
    return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the JobManager is shutting down");
}

Result<std::unique_ptr<RpcServer>> RpcServer::start(const std::string& bind_address, int32_t port,
                                                    const std::vector<grpc::Service*>& services,
                                                    const RpcServerKeys& keys) {
  if (port < 0 || port > 65535) {
    return Status::invalid_argument(keys.port + " " + std::to_string(port) + " is not a port: expected 0..65535");
  }
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort(host_port(bind_address, port), grpc::InsecureServerCredentials(), &bound);
  // gRPC sets SO_REUSEPORT by default: a second server on the port would bind too and the kernel would share the
  // connections between the two processes.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 2'000);
  // An unanswered ping closes the connection and fails the calls on it: generous, since a loaded peer (or a
  // sanitizer build) may be slow to answer; heartbeat.timeout is what decides a peer is gone.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1'000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  for (grpc::Service* s : services) builder.RegisterService(s);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound == 0) {
    if (server) server->Shutdown(std::chrono::system_clock::now());
    return bind_failure(bind_address, port, keys);
  }
  return std::unique_ptr<RpcServer>(new RpcServer(std::move(server), bound));
}

RpcServer::~RpcServer() { shutdown(); }

void RpcServer::shutdown(int64_t deadline_ms) {
  if (stopped_.exchange(true)) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
  server_->Wait();
}

}  // namespace sluice::rpc
