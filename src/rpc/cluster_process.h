// A program started as one process of an application-mode cluster (execution.process-role; docs/cluster.md): what
// execute() runs instead of the MiniCluster. Every process builds the same program; the JobManager serves the
// job's JobMaster, ResourceManager and split enumerators on its control-plane port and deploys the job on the
// slots of the TaskManagers that register; a TaskManager registers its slots and runs what it is given until the
// job ends. The JobManager refuses a TaskManager of another Sluice release or another JobGraph (fingerprint:
// graph/job_graph_fingerprint.h), naming both values.
//
// Both return a JobClient so a program's execute() works unchanged in every role:
//   - the JobManager's is the job's own client (a cluster::CheckpointingJobClient: checkpoints, savepoints, REST);
//     when the job ends, every TaskManager is told and ends too;
//   - a TaskManager's reports the TaskManager: RUNNING while it serves; wait() returns when the JobManager's job
//     ended (that status), or FAILED with the reason when the JobManager refused it for good; cancel() stops it.
// Thread-safety: start from one thread; the clients are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/mini_cluster.h"
#include "cluster/resource_manager.h"
#include "sluice/api/job_client.h"
#include "sluice/config/configuration.h"

namespace sluice::rpc {

// The cluster options (sluice/config/cluster_options.h) of one process.
struct ClusterProcessConfig {
  std::string jobmanager_address = "127.0.0.1";  // jobmanager.rpc.address
  int32_t jobmanager_port = 6123;                // jobmanager.rpc.port
  std::string taskmanager_host = "127.0.0.1";    // taskmanager.host
  int32_t taskmanager_rpc_port = 0;              // taskmanager.rpc.port
  int32_t taskmanager_data_port = 0;             // taskmanager.data.port
  int32_t slots = 1;                             // taskmanager.numberOfTaskSlots
  std::string resource_id;                       // taskmanager.resource-id
  cluster::HeartbeatSettings heartbeats;         // heartbeat.*
  int64_t slot_request_timeout_ms = 300'000;     // slot.request.timeout
  int64_t ask_timeout_ms = 10'000;               // pekko.ask.timeout: one JobManager-to-TaskManager call
  bool spread_out_slots = false;                 // cluster.evenly-spread-out-slots
  int64_t registration_timeout_ms = 300'000;     // taskmanager.registration.timeout

  // kInvalidArgument naming the key for a value the configuration refuses or heartbeat.timeout <= interval.
  static Result<ClusterProcessConfig> from(const Configuration& config);
};

// Serves the JobManager on jobmanager.rpc.address:jobmanager.rpc.port and starts the job: its first attempt waits
// up to slot.request.timeout for the TaskManagers' slots. Errors: kIOError when the port cannot be bound; those of
// cluster::start_job_master. `fingerprint`: the program's JobGraph fingerprint; `job_settings`: the options it
// covers (graph::fingerprint_settings), so a refused TaskManager is told which of them differ.
Result<std::unique_ptr<JobClient>> start_job_manager(std::shared_ptr<const StreamGraph> stream_graph,
                                                     graph::JobGraph job_graph, const cluster::MiniClusterConfig& config,
                                                     std::vector<std::unique_ptr<HeldClaim>> claims,
                                                     const ClusterProcessConfig& process, uint64_t fingerprint,
                                                     std::map<std::string, std::string> job_settings);

// Starts a TaskManager for the program and registers it with the JobManager (again and again until one answers).
// Errors: kIOError when its TaskExecutor port cannot be bound.
Result<std::unique_ptr<JobClient>> start_task_manager(std::shared_ptr<const StreamGraph> stream_graph,
                                                      graph::JobGraph job_graph, cluster::MiniClusterConfig config,
                                                      const ClusterProcessConfig& process, uint64_t fingerprint,
                                                      std::map<std::string, std::string> job_settings);

}  // namespace sluice::rpc
