// JobMaster: one job's coordinator side (Flink's JobMaster). It owns the job's lifecycle
// (coordinator/job_lifecycle.h), its CheckpointCoordinator and checkpoint bookkeeping (job_checkpoints.h), the split
// enumerators of its sources, the restart strategy, savepoint requests and stop-with-savepoint; it decides what
// every subtask of each attempt restores and hands the attempt to a TaskDeployer (task_deployer.h), which runs the
// tasks in this process or elsewhere. The returned client is the job's JobClient (a CheckpointingJobClient).
//
// Lifecycle and failover are as documented in mini_cluster.h. Thread-safety: start_job_master from any thread;
// the client is thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "cluster/mini_cluster.h"
#include "cluster/task_deployer.h"

namespace sluice::cluster {

// Checks the configuration and the restore point, then starts the control thread, which deploys the first attempt
// through the deployer that `deployers` makes; returns without waiting for that deployment (a failed one goes
// through the restart strategy and ends in the job's result). Errors: a refused restore or configuration
// (kInvalidArgument, kFailedPrecondition), an unreadable or damaged checkpoint metadata (kIOError, kCorruption,
// kNotFound); nothing is left running and a job folder the checkpoint storage made for this run is removed again
// when empty. `claims` as for submit_job.
Result<std::unique_ptr<JobClient>> start_job_master(std::shared_ptr<const StreamGraph> stream_graph,
                                                    graph::JobGraph job_graph, const MiniClusterConfig& config,
                                                    std::vector<std::unique_ptr<HeldClaim>> claims,
                                                    TaskDeployerFactory deployers);

}  // namespace sluice::cluster
