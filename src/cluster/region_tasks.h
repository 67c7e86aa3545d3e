// RegionTasks: the running tasks of a job deployed one pipelined region at a time (graph/pipelined_regions.h), so
// that region failover (jobmanager.execution.failover-strategy: region) cancels and redeploys one region's tasks
// while the others keep running. Each region's tasks are one DeployedTasks of their own; every DeployedTasks call
// on RegionTasks reaches the tasks of every region deployed at that moment, in region order. A job with one region
// (or the full strategy) has one entry, and RegionTasks is then a plain pass-through.
//
// Thread-safety: as any DeployedTasks (task_deployer.h): one caller at a time, which the JobMaster serialises under
// its lock, including release() and install(); join() is called without that lock, once, after cancel().
#pragma once

#include <memory>
#include <vector>

#include "cluster/task_deployer.h"

namespace sluice::cluster {

class RegionTasks final : public DeployedTasks {
 public:
  // `regions`: one DeployedTasks per pipelined region, none null.
  explicit RegionTasks(std::vector<std::unique_ptr<DeployedTasks>> regions);

  // Takes region `region`'s tasks out (null when already out), so the caller cancels and joins them alone, without
  // the JobMaster's lock; until install() the region gets no calls.
  std::unique_ptr<DeployedTasks> release(size_t region);
  // Puts a new deployment of `region` in.
  void install(size_t region, std::unique_ptr<DeployedTasks> tasks);

  void trigger_checkpoint(const runtime::CheckpointBarrier& barrier, const std::string& savepoint_location,
                          std::map<JobVertexId, std::vector<uint8_t>> enumerator_states) override;
  void notify_checkpoint_complete(CheckpointId id) override;
  void notify_checkpoint_aborted(CheckpointId id) override;
  void stop_sources(bool drain) override;
  void resume_sources() override;
  void finish() override;
  void wake() override;
  void fail(const runtime::ExecutionAttemptId& subtask, const Status& cause) override;
  std::vector<SubtaskLocation> locations() const override;
  void cancel() override;
  void join() override;

 private:
  // `fn` on every region's tasks that are deployed now, in region order.
  template <class Fn>
  void each(Fn fn) const {
    for (const auto& r : regions_)
      if (r) fn(*r);
  }

  std::vector<std::unique_ptr<DeployedTasks>> regions_;
};

}  // namespace sluice::cluster
