// ResourceManagerService: the JobManager's side of the ResourceManagerGateway (proto/resource_manager.proto) over a
// ResourceManager (cluster/resource_manager.h), and RpcServer, the gRPC server a JobManager serves it on.
//
// Fencing (Flink's FencedRpcEndpoint): the service answers under one leader epoch; a heartbeat or watch that
// carries another is refused with ABORTED (the sender talks to an old leader, or this one is old) and changes
// nothing. A TaskManager's WatchConnection call is held open until the TaskManager's process or connection goes
// (then the ResourceManager loses it at once, "connection to the TaskManager lost"), its registration is lost
// (the call ends with NOT_FOUND, so the TaskManager registers again at once), or the service shuts down
// (UNAVAILABLE).
// A heartbeat's metric report (when it carries one) is kept in `metrics` once the heartbeat is accepted: the latest
// per TaskManager (cluster/task_manager_metrics.h); a refused heartbeat's report is not.
// Thread-safety: gRPC calls the service from its own threads; shutdown() from any thread, once serving ends.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "cluster/resource_manager.h"
#include "cluster/task_manager_metrics.h"
#include "proto/resource_manager.grpc.pb.h"
#include "rpc/rpc_address.h"

namespace sluice::rpc {

// The protocol version this build speaks (RegisterTaskManagerRequest.protocol_version).
inline constexpr uint32_t kControlProtocolVersion = 1;

class ResourceManagerService final : public v1::ResourceManagerGateway::Service {
 public:
  // `resource_manager` and `metrics` (null: reports are ignored) must outlive the service.
  ResourceManagerService(cluster::ResourceManager* resource_manager, uint64_t leader_epoch,
                         cluster::TaskManagerMetrics* metrics = nullptr);

  uint64_t leader_epoch() const { return leader_epoch_; }
  // Ends every open WatchConnection call (UNAVAILABLE) and refuses new ones. Call before the server shuts down.
  void shutdown();
  // The job reached `job_status` (a terminal state's name): every open WatchConnection call sends it as its last
  // event and ends, so the TaskManagers end too; new calls are refused as after shutdown().
  void end_job(const std::string& job_status);
  // The job is about to end: the reported metrics are final (TaskManagerMetrics::freeze).
  void freeze_metrics() {
    if (metrics_ != nullptr) metrics_->freeze();
  }

  grpc::Status RegisterTaskManager(grpc::ServerContext* context, const v1::RegisterTaskManagerRequest* request,
                                   v1::RegisterTaskManagerResponse* response) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                         v1::HeartbeatResponse* response) override;
  grpc::Status WatchConnection(grpc::ServerContext* context, const v1::WatchConnectionRequest* request,
                               grpc::ServerWriter<v1::ConnectionEvent>* writer) override;

 private:
  grpc::Status check_epoch(uint64_t epoch, const std::string& task_manager_id) const;

  cluster::ResourceManager* rm_;
  const uint64_t leader_epoch_;
  cluster::TaskManagerMetrics* const metrics_;
  std::atomic<int64_t> last_retriable_warning_ms_{INT64_MIN / 2};
  std::mutex mu_;
  std::condition_variable cv_;
  bool shutting_down_ = false;
  std::string job_ended_;  // guarded by mu_
};

// A gRPC server on `bind_address`:`port` (0: an ephemeral port) serving `services` (which must outlive it), with
// keepalive pings so a peer that vanished without closing its connection (a cut network) is noticed.
// The port is this server's alone: gRPC's default SO_REUSEPORT is switched off, so a second JobManager or a
// TaskManager on a port another process listens on fails at start instead of sharing its connections.
// kIOError when it cannot bind, naming the key of `keys` to change and why (bind_failure in rpc_address.h);
// kInvalidArgument naming the port key for a port outside 0..65535.
class RpcServer {
 public:
  static Result<std::unique_ptr<RpcServer>> start(const std::string& bind_address, int32_t port,
                                                  const std::vector<grpc::Service*>& services,
                                                  const RpcServerKeys& keys = RpcServerKeys::job_manager());
  ~RpcServer();
  int32_t port() const { return port_; }
  // Stops accepting calls and waits up to `deadline_ms` for calls in flight, then cancels them. Idempotent.
  void shutdown(int64_t deadline_ms = 1'000);

 private:
  RpcServer(std::unique_ptr<grpc::Server> server, int32_t port) : server_(std::move(server)), port_(port) {}
  std::unique_ptr<grpc::Server> server_;
  int32_t port_;
  std::atomic<bool> stopped_{false};
};

}  // namespace sluice::rpc
