#include "cluster/task_manager_metrics.h"

namespace sluice::cluster {

bool TaskManagerMetrics::update(const std::string& task_manager_id, uint64_t registration_id, uint64_t sequence,
                                std::vector<MetricValue> metrics) {
  std::lock_guard lock(mu_);
  if (frozen_) return false;
  auto it = reports_.find(task_manager_id);
  if (it != reports_.end()) {
    const Report& kept = it->second;
    // Registration ids grow with every registration the ResourceManager accepts.
    if (kept.registration_id > registration_id) return false;
    if (kept.registration_id == registration_id && kept.sequence > sequence) return false;
  }
  reports_[task_manager_id] = Report{registration_id, sequence, std::move(metrics)};
  return true;
}

void TaskManagerMetrics::drop(const std::string& task_manager_id, uint64_t registration_id) {
  std::lock_guard lock(mu_);
  if (frozen_) return;
  auto it = reports_.find(task_manager_id);
  if (it != reports_.end() && it->second.registration_id <= registration_id) reports_.erase(it);
}

void TaskManagerMetrics::freeze() {
  std::lock_guard lock(mu_);
  frozen_ = true;
}

std::vector<MetricValue> TaskManagerMetrics::metrics() const {
  std::lock_guard lock(mu_);
  std::vector<MetricValue> out;
  for (const auto& [id, report] : reports_) {
    for (const MetricValue& m : report.metrics) {
      out.push_back(m);
      out.back().variables[kTaskManagerIdVariable] = id;
    }
  }
  return out;
}

size_t TaskManagerMetrics::reporting_task_managers() const {
  std::lock_guard lock(mu_);
  return reports_.size();
}

}  // namespace sluice::cluster
