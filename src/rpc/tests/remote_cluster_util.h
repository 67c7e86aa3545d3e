// A JobManager's control plane and TaskManagers in one test process, talking over gRPC on loopback as separate
// processes would (application mode: each side builds its own copy of the program). Shared by the tests that run
// jobs through the RemoteDeployer.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cluster/job_master.h"
#include "cluster/resource_manager.h"
#include "cluster/task_manager_loss_monitor.h"
#include "rpc/remote_deployer.h"
#include "rpc/resource_manager_connection.h"
#include "rpc/resource_manager_service.h"
#include "rpc/task_executor_service.h"
#include "rpc/task_manager.h"
#include "sluice/metrics/metric_registry.h"

namespace sluice::rpc::remote_test {

constexpr uint64_t kEpoch = 11;

// One process's copy of the program (the JobManager and the TaskManager each build their own).
struct Program {
  std::shared_ptr<StreamGraph> sg;
  graph::JobGraph jg;
  cluster::MiniClusterConfig config;
};

// A TaskManager's TaskExecutor for `program`, reporting to `jm_address` under the registration `session` gives.
inline TaskExecutorSetup task_executor_setup(Program& program, MetricRegistry& metrics, const std::string& jm_address,
                                      std::function<std::optional<TaskManagerSessionId>()> session) {
  TaskExecutorSetup tm;
  tm.stream_graph = program.sg.get();
  tm.job_graph = &program.jg;
  tm.config = &program.config;
  tm.job_metrics = &metrics.add_job_group(program.jg.job_name);
  tm.jobmanager_address = jm_address;
  tm.session = std::move(session);
  tm.report_timeout_ms = 20'000;
  return tm;
}

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed), for a fixed
// taskmanager.data.port; 0 if none could be had.
inline uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// True while something listens on 127.0.0.1:`port` (a connection to it is accepted).
inline bool listening(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return connected;
}

// Waits up to 60 s for `done`; false (with the test failed naming `what`) when it never came.
inline bool wait_until(const std::function<bool()>& done, const std::string& what) {
  for (int i = 0; i < 60'000 / 2; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ADD_FAILURE() << "waited 60 s for " << what;
  return false;
}

// A JobManager's control plane: its ResourceManager and the job's services on one port.
struct JobManagerControlPlane {
  JobManagerControlPlane() {
    auto s = RpcServer::start("127.0.0.1", 0, {&rm_service, &job_master_service, &split_service});
    EXPECT_TRUE(s.is_ok()) << s.status().to_string();
    if (s.is_ok()) server = std::move(*s);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server->port()); }
  // Starts `program`'s job with its JobMaster deploying through this control plane. `monitor`: null for none.
  // `spread_out`: cluster.evenly-spread-out-slots.
  Result<std::unique_ptr<JobClient>> start_job(Program& program, cluster::TaskManagerLossMonitor* monitor,
                                               int64_t slot_request_timeout_ms, bool spread_out = false) {
    return cluster::start_job_master(
        program.sg, program.jg, program.config, {},
        [this, monitor, slot_request_timeout_ms, spread_out](cluster::JobTaskContext context)
            -> std::unique_ptr<cluster::TaskDeployer> {
          return std::make_unique<RemoteDeployer>(
              std::move(context), RemoteDeployerSetup{.leader_epoch = kEpoch,
                                                      .resource_manager = &rm,
                                                      .loss_monitor = monitor,
                                                      .spread_out_slots = spread_out,
                                                      .slot_request_timeout_ms = slot_request_timeout_ms,
                                                      .job_master_service = &job_master_service,
                                                      .split_enumerator_service = &split_service,
                                                      .resource_manager_service = &rm_service,
                                                      .keep_alive = {}});
        });
  }

  // A generous heartbeat timeout: a TaskManager's death is seen through its connection (the tests check that), and a
  // slow machine (sanitizers) must not lose a live one.
  cluster::ResourceManager rm{"0.1.0", 0, cluster::HeartbeatSettings{100, 10'000, 5}, SystemClock::shared().get()};
  ResourceManagerService rm_service{&rm, kEpoch};
  JobMasterService job_master_service{kEpoch};
  SplitEnumeratorService split_service{kEpoch};
  std::unique_ptr<RpcServer> server;
};

// A TaskManager "process" for `program` on `port`, registering as `id` with `slots` slots with the JobManager at
// `jm_address`; its tasks meet the failures `injector` arms. `data_port`: taskmanager.data.port (0: ephemeral).
inline std::unique_ptr<TaskManager> start_task_manager(Program& program, MetricRegistry& metrics, const std::string& jm_address,
                                                int32_t port, const std::string& id = "tm-1", int32_t slots = 2,
                                                runtime::FaultInjector* injector = nullptr, uint16_t data_port = 0) {
  TaskManagerConfig config;
  config.rpc_port = port;
  config.task_manager_id = id;
  config.num_slots = slots;
  config.sluice_version = "0.1.0";
  config.registration_retry_ms = 50;
  config.executor = task_executor_setup(program, metrics, jm_address, nullptr);
  config.executor.fault_injector = injector;
  config.executor.data_port = data_port;
  auto tm = TaskManager::start(std::move(config), SystemClock::shared().get());
  EXPECT_TRUE(tm.is_ok()) << tm.status().to_string();
  return tm.is_ok() ? std::move(*tm) : nullptr;
}

}  // namespace sluice::rpc::remote_test
