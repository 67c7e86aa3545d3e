#include "cluster/mini_cluster.h"

#include <utility>

#include "cluster/in_process_deployer.h"
#include "cluster/job_master.h"

namespace sluice::cluster {

void complete_task_settings(MiniClusterConfig& config, const std::shared_ptr<NameSource>& names) {
  if (!config.clock) config.clock = SystemClock::shared();
  if (!config.rocksdb.names) config.rocksdb.names = names;
}

Result<std::unique_ptr<JobClient>> submit_job(std::shared_ptr<const StreamGraph> stream_graph,
                                              graph::JobGraph job_graph, const MiniClusterConfig& config,
                                              std::vector<std::unique_ptr<HeldClaim>> claims) {
  return start_job_master(std::move(stream_graph), std::move(job_graph), config, std::move(claims),
                          [](JobTaskContext context) -> std::unique_ptr<TaskDeployer> {
                            return std::make_unique<InProcessDeployer>(std::move(context));
                          });
}

}  // namespace sluice::cluster
