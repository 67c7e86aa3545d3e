// The options of cluster mode: a program started as a JobManager or a TaskManager process instead of on the
// in-process MiniCluster (docs/cluster.md). Keys and defaults are Flink's where Flink has the option (its
// JobManagerOptions, TaskManagerOptions, HeartbeatManagerOptions, ClusterOptions); the process role is Sluice's own,
// because a Sluice job is compiled code and every process of an application-mode cluster runs the same program.
// Registered in all_options() (options.h) and documented in docs/configuration.md like every other option.
// Thread-safety: immutable after static initialization.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "sluice/config/config_option.h"

namespace sluice {

// execution.process-role: what execute() does with the program.
//   MINI_CLUSTER - runs the job in this process (the default; every example and test).
//   JOBMANAGER   - serves the job's JobManager (JobMaster, CheckpointCoordinator, split enumerators,
//                  ResourceManager) on jobmanager.rpc.address:jobmanager.rpc.port, waits for TaskManagers' slots,
//                  runs the job on them and returns when it ends.
//   TASKMANAGER  - offers taskmanager.numberOfTaskSlots slots to the JobManager and runs the subtasks it deploys;
//                  execute() returns when the JobManager finishes the job or refuses this process.
enum class ProcessRole { kMiniCluster, kJobManager, kTaskManager };

template <>
struct EnumOptionNames<ProcessRole> {
  static constexpr std::array<std::pair<ProcessRole, std::string_view>, 3> kValues{{
      {ProcessRole::kMiniCluster, "MINI_CLUSTER"},
      {ProcessRole::kJobManager, "JOBMANAGER"},
      {ProcessRole::kTaskManager, "TASKMANAGER"},
  }};
};

namespace options {

// execution.process-role (enum, MINI_CLUSTER; Sluice's own); `--role jobmanager|taskmanager` of from_args programs.
extern const ConfigOption<ProcessRole> kProcessRole;
// jobmanager.rpc.address (String, "127.0.0.1"): where the JobManager serves its control plane (it binds this
// address) and where TaskManagers reach it.
extern const ConfigOption<std::string> kJobManagerRpcAddress;
// jobmanager.rpc.port (Integer, 6123): the JobManager's control-plane port.
extern const ConfigOption<int32_t> kJobManagerRpcPort;
// taskmanager.host (String, "127.0.0.1"): the IP address a TaskManager binds and announces for its TaskExecutor
// and its data plane.
extern const ConfigOption<std::string> kTaskManagerHost;
// taskmanager.rpc.port (Integer, 0 = an ephemeral port): the TaskManager's TaskExecutor port.
extern const ConfigOption<int32_t> kTaskManagerRpcPort;
// taskmanager.data.port (Integer, 0 = an ephemeral port): the TaskManager's data-plane port, shared by all the
// deployments it runs.
extern const ConfigOption<int32_t> kTaskManagerDataPort;
// taskmanager.numberOfTaskSlots (Integer, 1): slots a TaskManager offers; slot k holds subtask k of every vertex.
extern const ConfigOption<int32_t> kNumberOfTaskSlots;
// taskmanager.resource-id (String, "" = "<host>:<rpc port>"): the TaskManager's id; a process that starts again
// with the same id replaces its predecessor at once.
extern const ConfigOption<std::string> kTaskManagerResourceId;
// heartbeat.interval (Duration, 10 s), heartbeat.timeout (Duration, 50 s), heartbeat.rpc-failure-threshold
// (Integer, 2): Flink's HeartbeatManagerOptions, between the JobManager and its TaskManagers.
extern const ConfigOption<std::chrono::milliseconds> kHeartbeatInterval;
extern const ConfigOption<std::chrono::milliseconds> kHeartbeatTimeout;
extern const ConfigOption<int32_t> kHeartbeatRpcFailureThreshold;
// pekko.ask.timeout (Duration, 10 s; deprecated key akka.ask.timeout): how long the JobManager waits for a
// TaskManager to answer one control-plane call (deploying, triggering a checkpoint, ...; cancelling an attempt, which
// waits for its tasks to end, gets six times as long) before the call counts as failed and the job fails over.
extern const ConfigOption<std::chrono::milliseconds> kAskTimeout;
// slot.request.timeout (Duration, 5 min): how long a deployment waits for enough free slots.
extern const ConfigOption<std::chrono::milliseconds> kSlotRequestTimeout;
// taskmanager.registration.timeout (Duration, 5 min): a TaskManager that has had no registration with a JobManager
// for this long gives up and its process ends (execute() returns FAILED naming the key).
extern const ConfigOption<std::chrono::milliseconds> kTaskManagerRegistrationTimeout;
// cluster.evenly-spread-out-slots (Boolean, false): take the job's slots from all TaskManagers in turn instead of
// filling one TaskManager after another.
extern const ConfigOption<bool> kEvenlySpreadOutSlots;

}  // namespace options
}  // namespace sluice
