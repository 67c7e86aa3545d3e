// TaskManagerDataPlane: a TaskManager process's one end of the TCP data plane (runtime/network/tcp), shared by every
// deployment that runs there, as Flink's TaskManager has one netty server on taskmanager.data.port for all its tasks.
// One TCP connection per pair of TaskManagers carries the remote channels of every deployment between them.
//
// Identity: on the data plane a TaskManager is known by its registration id (the ResourceManager assigns it at
// registration, cluster/resource_manager.h), which holds for every deployment of that registration; a TaskManager that
// registers again - a new process, or the same after losing its JobManager - is a new peer, so a connection to its
// former self is never taken for a live one. Both ends of a connection agree on a fingerprint of the job and the
// JobManager's leader epoch, not of one deployment.
//
// Lifecycle: opened at the first PrepareAttempt of a registration (binding taskmanager.host:taskmanager.data.port),
// kept until the registration ends (reset(): JobManager lost, a new session), then opened again on the same port.
// Each deployment registers its channels under its deployment id (NetworkPlacement::data_plane_owner); their failures
// reach that deployment's ChannelFailures, and release() unregisters them at its end without closing connections the
// other deployments use. A connection that fails fails the channels of every deployment on it: all lost their peer.
// Thread-safety: every method may be called from any thread except the data plane's IO thread; one mutex orders
// open/reset/release, another (never held while calling out) the routing of failures.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/attempt_network.h"
#include "cluster/task_deployer.h"
#include "graph/job_graph.h"
#include "runtime/network/tcp/remote_channel_id.h"
#include "sluice/core/status.h"

namespace sluice::runtime::tcp {
class DataConnectionManager;  // Asio stays out of the headers that include this one
}

namespace sluice::rpc {

// Routes the failures of one deployment's remote channels, reported on the data plane's IO thread, to the local
// subtasks they join. Failures reported before the tasks exist are kept until they do; none count once the deployment
// goes. A channel cancelled by its producer is that deployment going away and fails nothing.
class ChannelFailures {
 public:
  ChannelFailures(const graph::JobGraph* job, int32_t attempt_number) : job_(job), attempt_(attempt_number) {}

  void on_channel_failed(const runtime::tcp::RemoteChannelId& channel, const Status& reason);
  // The deployment's tasks are running: failures reach them from now on.
  void attach(cluster::DeployedTasks* tasks, cluster::NetworkPlacement placement);
  void detach();

 private:
  void fail_locked(const runtime::tcp::RemoteChannelId& channel, const Status& reason);

  const graph::JobGraph* job_;
  const int32_t attempt_;
  std::mutex mu_;
  cluster::DeployedTasks* tasks_ = nullptr;
  cluster::NetworkPlacement placement_;
  std::vector<std::pair<runtime::tcp::RemoteChannelId, Status>> early_;
  bool gone_ = false;
};

class TaskManagerDataPlane {
 public:
  struct Peer {
    int32_t id = 0;               // its registration id
    std::string task_manager_id;  // its resource id (taskmanager.resource-id), the same across registrations
    std::string host;             // an IP address
    uint16_t port = 0;
  };

  // `host`: taskmanager.host (an IP address); `port`: taskmanager.data.port (0: an ephemeral port, chosen at each
  // open after a reset).
  TaskManagerDataPlane(std::string host, uint16_t port);
  ~TaskManagerDataPlane();  // reset()
  TaskManagerDataPlane(const TaskManagerDataPlane&) = delete;
  TaskManagerDataPlane& operator=(const TaskManagerDataPlane&) = delete;

  // The data plane as TaskManager `self_id` (>= 0) of the job and session named by `fingerprint`: started if it is not
  // running, and its port returned. Running under another id or fingerprint, it is started again when no deployment
  // uses it, else FailedPrecondition naming both. IOError when it cannot bind (the port taken by another process).
  [[nodiscard]] Result<uint16_t> open(int32_t self_id, uint64_t fingerprint);

  // Declares `peers` (this TaskManager's own entry is skipped). A TaskManager declared before under another id
  // registered again, so its former id is removed and its connection closed. Errors: those of add_peer, or
  // FailedPrecondition when the data plane is not open.
  [[nodiscard]] Status declare_peers(const std::vector<Peer>& peers);

  // Failures of the channels registered under `deployment` go to `failures` from now on.
  void track(uint64_t deployment, std::shared_ptr<ChannelFailures> failures);
  // The deployment ended (its tasks are gone): its channels are unregistered, its failures no longer routed.
  void release(uint64_t deployment);

  // The open data plane, or null. Valid until reset(), which only happens with no deployment running.
  runtime::tcp::DataConnectionManager* manager();

  // Shuts the data plane down (every connection closed) and forgets the peers: the registration ended.
  void reset();

 private:
  void on_channel_failed(const runtime::tcp::RemoteChannelId& channel, uint64_t owner, const Status& reason);

  const std::string host_;
  const uint16_t port_;

  std::mutex mu_;  // orders open, declare_peers, release and reset
  std::unique_ptr<runtime::tcp::DataConnectionManager> manager_;
  int32_t self_id_ = -1;
  uint64_t fingerprint_ = 0;
  std::map<std::string, int32_t> peer_ids_;  // resource id -> data-plane id

  std::mutex routes_mu_;  // guards routes_; never held while calling a ChannelFailures
  std::map<uint64_t, std::shared_ptr<ChannelFailures>> routes_;  // by deployment id
};

}  // namespace sluice::rpc
