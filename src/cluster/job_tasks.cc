#include "cluster/job_tasks.h"

#include <map>
#include <utility>

#include <spdlog/spdlog.h>

#include "cluster/state_assignment.h"

namespace sluice::cluster {

JobTasks::JobTasks(const StreamGraph& stream_graph, const graph::JobGraph& job_graph,
                   const graph::ExecutionGraph& execution_graph, const MiniClusterConfig& config)
    : sg_(stream_graph), jg_(job_graph), eg_(execution_graph), cfg_(config) {}

JobTasks::~JobTasks() { stop_all(); }

void JobTasks::bind(TaskDeployer* deployer) {
  deployer_ = deployer;
  graph::PipelinedRegions regions = graph::compute_pipelined_regions(jg_, eg_);
  const bool by_region = cfg_.failover_strategy == FailoverStrategy::kRegion && regions.regions.size() > 1;
  if (by_region && deployer_->deploys_regions()) {
    spdlog::info("job {}: {} pipelined regions; a task failure restarts its region only "
                 "(jobmanager.execution.failover-strategy region)", jg_.job_name, regions.regions.size());
    regions_ = std::move(regions);
    return;
  }
  if (by_region) {
    spdlog::warn("job {}: {} pipelined regions, but its deployer places the job as one: a task failure restarts "
                 "every task", jg_.job_name,
                 regions.regions.size());
  }
  regions_.regions.assign(1, std::vector<int32_t>(eg_.subtasks.size()));
  for (size_t i = 0; i < eg_.subtasks.size(); ++i) regions_.regions[0][i] = static_cast<int32_t>(i);
  regions_.region_of.assign(eg_.subtasks.size(), 0);
}

AttemptDeployment JobTasks::region_deployment(size_t region, int32_t attempt_number,
                                              const std::optional<AttemptRestore>& restore) const {
  AttemptDeployment attempt;
  attempt.attempt_number = attempt_number;
  for (const auto& c : coordinators_) attempt.source_coordinators.push_back(c.get());
  for (int32_t i : regions_.regions[region]) {
    const auto& ev = eg_.subtasks[static_cast<size_t>(i)];
    attempt.subtasks.push_back(
        {runtime::ExecutionAttemptId{JobVertexId(ev.vertex), SubtaskIndex(ev.subtask_index), attempt_number},
         ev.key_group_range});
  }
  if (regions_.regions.size() > 1) {
    // The region's subtasks here, none elsewhere, no data plane: no channel leaves a region.
    NetworkPlacement placement;
    placement.self = 0;
    placement.attempt_number = attempt_number;
    for (const auto& v : jg_.vertices) placement.task_manager_of.emplace_back(static_cast<size_t>(v.parallelism), -1);
    for (int32_t i : regions_.regions[region]) {
      const auto& ev = eg_.subtasks[static_cast<size_t>(i)];
      placement.task_manager_of[static_cast<size_t>(ev.vertex)][static_cast<size_t>(ev.subtask_index)] = 0;
    }
    attempt.placement = std::move(placement);
  }
  attempt.restore = restore;
  return attempt;
}

Status JobTasks::deploy_all(int32_t attempt_number, const std::optional<AttemptRestore>& restore) {
  std::vector<std::unique_ptr<SourceCoordinatorBase>> coordinators(jg_.vertices.size());
  for (const auto& v : jg_.vertices) {
    if (!v.is_source) continue;
    try {
      std::optional<std::vector<uint8_t>> enum_state;
      if (restore) {
        SLUICE_ASSIGN_OR_RETURN(enum_state,
                                restored_enumerator_state(restore->point.metadata, restore->point.location,
                                                          *cfg_.storage, graph::operator_id(sg_.node(v.head_node))));
      }
      coordinators[static_cast<size_t>(v.id)] = sg_.node(v.head_node).create_source_coordinator();
      coordinators[static_cast<size_t>(v.id)]->start(v.parallelism, enum_state ? &*enum_state : nullptr);
    } catch (const std::exception& e) {
      return Status::invalid_argument(e.what()).with_context("starting the split enumerator of source '" +
                                                             sg_.node(v.head_node).name + "'");
    }
  }
  {
    std::lock_guard lock(mu_);
    coordinators_ = std::move(coordinators);
  }
  std::vector<std::unique_ptr<DeployedTasks>> regions;
  for (size_t r = 0; r < regions_.regions.size(); ++r) {
    auto deployed = deployer_->deploy(region_deployment(r, attempt_number, restore));
    if (!deployed.is_ok()) {
      regions.clear();  // the regions deployed already are cancelled and joined
      for (auto& c : coordinators_)
        if (c) c->close();
      std::lock_guard lock(mu_);
      coordinators_.clear();
      return deployed.status();
    }
    regions.push_back(std::move(*deployed));
  }
  std::lock_guard lock(mu_);
  tasks_ = std::make_unique<RegionTasks>(std::move(regions));
  return Status::ok();
}

void JobTasks::stop_all() {
  DeployedTasks* running = nullptr;
  {
    std::lock_guard lock(mu_);
    running = tasks_.get();
    if (running) running->cancel();
  }
  // Join outside the mutex: task threads may be calling into the JobMaster meanwhile. Only this (the control)
  // thread replaces tasks_, so `running` stays valid.
  if (running) running->join();
  std::unique_ptr<RegionTasks> tasks;
  std::vector<std::unique_ptr<SourceCoordinatorBase>> coordinators;
  {
    std::lock_guard lock(mu_);
    tasks = std::move(tasks_);
    coordinators = std::move(coordinators_);
    coordinators_.clear();
  }
  tasks.reset();  // before the enumerators close: whatever the tasks' side still holds of them goes first
  for (auto& c : coordinators)
    if (c) c->close();
}

void JobTasks::stop_region(size_t region) {
  std::unique_ptr<DeployedTasks> gone;
  {
    std::lock_guard lock(mu_);
    if (tasks_) gone = tasks_->release(region);
  }
  if (!gone) return;  // its last redeployment failed
  gone->cancel();
  gone->join();
}

Status JobTasks::deploy_region(size_t region, int32_t attempt_number, const std::optional<AttemptRestore>& restore) {
  const CheckpointId restored = restore ? restore->point.metadata.checkpoint_id : CheckpointId(0);
  for (int32_t i : regions_.regions[region]) {
    const auto& ev = eg_.subtasks[static_cast<size_t>(i)];
    if (auto& c = coordinators_[static_cast<size_t>(ev.vertex)]) {
      try {
        c->reset_subtask(ev.subtask_index, restored);
      } catch (const std::exception& e) {
        return Status::internal(e.what()).with_context("resetting the split assignment of source '" +
                                                       jg_.vertices[static_cast<size_t>(ev.vertex)].name + "'");
      }
    }
  }
  auto deployed = deployer_->deploy(region_deployment(region, attempt_number, restore));
  if (!deployed.is_ok()) return deployed.status();
  std::lock_guard lock(mu_);
  tasks_->install(region, std::move(*deployed));
  return Status::ok();
}

void JobTasks::with_tasks(const std::function<void(DeployedTasks&)>& fn) {
  std::lock_guard lock(mu_);
  if (tasks_) fn(*tasks_);
}

void JobTasks::trigger_checkpoint(const runtime::CheckpointBarrier& barrier, const std::string& savepoint_location) {
  std::lock_guard lock(mu_);
  if (!tasks_) return;
  std::map<JobVertexId, std::vector<uint8_t>> enumerator_states;
  for (size_t v = 0; v < coordinators_.size(); ++v) {
    if (coordinators_[v]) {
      enumerator_states[JobVertexId(static_cast<int32_t>(v))] = coordinators_[v]->snapshot_enumerator(barrier.id);
    }
  }
  tasks_->trigger_checkpoint(barrier, savepoint_location, std::move(enumerator_states));
}

void JobTasks::notify_checkpoint_complete(CheckpointId id) {
  std::lock_guard lock(mu_);
  // A region restarts from the latest completed checkpoint: the readers' state in it covers what their enumerators
  // assigned before it.
  for (auto& c : coordinators_)
    if (c) c->checkpoint_complete(id);
  if (tasks_) tasks_->notify_checkpoint_complete(id);
}

void JobTasks::notify_checkpoint_aborted(CheckpointId id) {
  std::lock_guard lock(mu_);
  for (auto& c : coordinators_)
    if (c) c->abort_checkpoint(id);
  if (tasks_) tasks_->notify_checkpoint_aborted(id);
}

std::vector<SubtaskLocation> JobTasks::locations() const {
  std::lock_guard lock(mu_);
  return tasks_ ? tasks_->locations() : std::vector<SubtaskLocation>{};
}

}  // namespace sluice::cluster
