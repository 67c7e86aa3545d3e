#include "sluice/metrics/metric_group.h"

#include <spdlog/spdlog.h>

#include "sluice/metrics/metric_names.h"

namespace sluice {

MetricGroup::MetricGroup(std::mutex* mu, std::string scope, std::map<std::string, std::string> variables)
    : mu_(mu), scope_(std::move(scope)), variables_(std::move(variables)) {}

MetricGroup::~MetricGroup() = default;

void MetricGroup::warn_if_name_taken_locked(std::string_view name, std::string_view kind) const {
  bool taken = (kind != "counter" && counters_.find(name) != counters_.end()) ||
               (kind != "gauge" && gauges_.find(name) != gauges_.end()) ||
               (kind != "histogram" && histograms_.find(name) != histograms_.end());
  if (taken) {
    spdlog::warn("metric group '{}': the name '{}' is already used by a metric of another kind; registering the {} "
                 "anyway",
                 scope_, name, kind);
  }
}

Counter& MetricGroup::counter(std::string_view name) {
  std::lock_guard<std::mutex> lock(*mu_);
  auto it = counters_.find(name);
  if (it != counters_.end()) return *it->second;
  warn_if_name_taken_locked(name, "counter");
  return *counters_.emplace(std::string(name), std::make_unique<Counter>()).first->second;
}

Histogram& MetricGroup::histogram(std::string_view name) {
  std::lock_guard<std::mutex> lock(*mu_);
  auto it = histograms_.find(name);
  if (it != histograms_.end()) return *it->second;
  warn_if_name_taken_locked(name, "histogram");
  return *histograms_.emplace(std::string(name), std::make_unique<Histogram>()).first->second;
}

void MetricGroup::gauge(std::string_view name, Gauge fn) {
  Gauge old;  // destroyed after the lock is released: its captures may have destructors of their own
  std::lock_guard<std::mutex> lock(*mu_);
  auto it = gauges_.find(name);
  if (it != gauges_.end()) {
    old = std::move(it->second);
    it->second = std::move(fn);
    return;
  }
  warn_if_name_taken_locked(name, "gauge");
  gauges_.emplace(std::string(name), std::move(fn));
}

void MetricGroup::remove_gauge(std::string_view name) {
  Gauge old;
  std::lock_guard<std::mutex> lock(*mu_);
  auto it = gauges_.find(name);
  if (it == gauges_.end()) return;
  old = std::move(it->second);
  gauges_.erase(it);
}

void MetricGroup::reported_metrics(std::string_view name, ReportedMetrics fn) {
  ReportedMetrics old;  // destroyed after the lock is released, as a replaced gauge
  std::lock_guard<std::mutex> lock(*mu_);
  auto [it, inserted] = reported_.try_emplace(std::string(name));
  old = std::move(it->second);
  it->second = std::move(fn);
}

void MetricGroup::remove_reported_metrics(std::string_view name) {
  ReportedMetrics old;
  std::lock_guard<std::mutex> lock(*mu_);
  auto it = reported_.find(name);
  if (it == reported_.end()) return;
  old = std::move(it->second);
  reported_.erase(it);
}

MetricGroup& MetricGroup::add_group_locked(std::string_view name, std::string_view key) {
  // Children are told apart by key and name: a task and an operator both called "Sink" are two groups.
  const std::string child_key = std::string(key) + '\x1f' + std::string(name);
  auto it = children_.find(child_key);
  if (it != children_.end()) return *it->second;
  std::string child_scope = scope_.empty() ? std::string(name) : scope_ + "." + std::string(name);
  std::map<std::string, std::string> child_variables = variables_;
  if (!key.empty()) child_variables[std::string(key)] = std::string(name);
  auto child = std::unique_ptr<MetricGroup>(new MetricGroup(mu_, std::move(child_scope), std::move(child_variables)));
  return *children_.emplace(child_key, std::move(child)).first->second;
}

MetricGroup& MetricGroup::add_group(std::string_view name) {
  std::lock_guard<std::mutex> lock(*mu_);
  return add_group_locked(name, "");
}

MetricGroup& MetricGroup::add_group(std::string_view key, std::string_view value) {
  std::lock_guard<std::mutex> lock(*mu_);
  return add_group_locked(value, key);
}

MetricGroup& MetricGroup::add_operator_group(std::string_view operator_name) {
  return add_group(metric_scope::kOperatorName, operator_name);
}

MetricGroup& MetricGroup::add_subtask_group(SubtaskIndex index) {
  return add_group(metric_scope::kSubtaskIndex, std::to_string(index.value()));
}

}  // namespace sluice
