// Where a job's tasks run, as the JobManager's REST endpoint shows it (docs/rest-api.md: GET /taskmanagers,
// /overview and /jobs/:jobid/vertices/:vertexid). The job's client implements JobPlacementView next to
// CheckpointingJobClient; the answers come from its TaskDeployer: the ResourceManager's TaskManagers and the slots
// of the running attempt in cluster mode, this process as the one TaskManager of the MiniCluster (as Flink's
// MiniCluster runs its TaskManagers inside the process).
// Thread-safety: every method from any thread.
#pragma once

#include <string>
#include <vector>

#include "cluster/resource_manager.h"
#include "runtime/execution_attempt_id.h"

namespace sluice::cluster {

// The TaskManager id and host the MiniCluster reports for itself.
inline constexpr const char* kMiniClusterTaskManagerId = "mini-cluster";
inline constexpr const char* kMiniClusterHost = "localhost";

// Where one subtask of the running attempt is deployed.
struct SubtaskLocation {
  runtime::ExecutionAttemptId id;  // vertex, subtask index, attempt number
  std::string task_manager_id;     // taskmanager.resource-id (kMiniClusterTaskManagerId in the MiniCluster)
  std::string host;                // taskmanager.host (kMiniClusterHost in the MiniCluster)
};

class JobPlacementView {
 public:
  virtual ~JobPlacementView() = default;
  // The TaskManagers the job can use, in registration order (the MiniCluster: one, with as many slots as the job's
  // highest vertex parallelism).
  virtual std::vector<TaskManagerInfo> task_managers() const = 0;
  // Every subtask of the attempt deployed now, in ExecutionGraph order; empty while no attempt is deployed
  // (restarting, or after the job ended).
  virtual std::vector<SubtaskLocation> subtask_locations() const = 0;
};

}  // namespace sluice::cluster
