#include "cluster/region_tasks.h"

#include <utility>

namespace sluice::cluster {

RegionTasks::RegionTasks(std::vector<std::unique_ptr<DeployedTasks>> regions) : regions_(std::move(regions)) {}

std::unique_ptr<DeployedTasks> RegionTasks::release(size_t region) { return std::move(regions_.at(region)); }

void RegionTasks::install(size_t region, std::unique_ptr<DeployedTasks> tasks) {
  regions_.at(region) = std::move(tasks);
}

void RegionTasks::trigger_checkpoint(const runtime::CheckpointBarrier& barrier, const std::string& savepoint_location,
                                     std::map<JobVertexId, std::vector<uint8_t>> enumerator_states) {
  // Each region passes the enumerator state to the subtask 0 it holds, if any: one region gets each vertex's.
  each([&](DeployedTasks& r) { r.trigger_checkpoint(barrier, savepoint_location, enumerator_states); });
}

void RegionTasks::notify_checkpoint_complete(CheckpointId id) {
  each([&](DeployedTasks& r) { r.notify_checkpoint_complete(id); });
}

void RegionTasks::notify_checkpoint_aborted(CheckpointId id) {
  each([&](DeployedTasks& r) { r.notify_checkpoint_aborted(id); });
}

void RegionTasks::stop_sources(bool drain) {
  each([&](DeployedTasks& r) { r.stop_sources(drain); });
}

void RegionTasks::resume_sources() {
  each([](DeployedTasks& r) { r.resume_sources(); });
}

void RegionTasks::finish() {
  each([](DeployedTasks& r) { r.finish(); });
}

void RegionTasks::wake() {
  each([](DeployedTasks& r) { r.wake(); });
}

void RegionTasks::fail(const runtime::ExecutionAttemptId& subtask, const Status& cause) {
  each([&](DeployedTasks& r) { r.fail(subtask, cause); });
}

std::vector<SubtaskLocation> RegionTasks::locations() const {
  std::vector<SubtaskLocation> out;
  each([&](DeployedTasks& r) {
    std::vector<SubtaskLocation> some = r.locations();
    out.insert(out.end(), std::make_move_iterator(some.begin()), std::make_move_iterator(some.end()));
  });
  return out;
}

void RegionTasks::cancel() {
  each([](DeployedTasks& r) { r.cancel(); });
}

void RegionTasks::join() {
  each([](DeployedTasks& r) { r.join(); });
}

}  // namespace sluice::cluster
