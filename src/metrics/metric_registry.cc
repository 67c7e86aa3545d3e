#include "sluice/metrics/metric_registry.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <tuple>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "sluice/metrics/metric_names.h"

namespace sluice {
namespace {

double call_gauge(const Gauge& fn, const std::string& scope, const std::string& name) {
  try {
    return fn();
  } catch (const std::exception& e) {
    spdlog::warn("gauge '{}' in '{}' threw: {}", name, scope, e.what());
  } catch (...) {
    spdlog::warn("gauge '{}' in '{}' threw a non-standard exception", name, scope);
  }
  return std::nan("");
}

void append_reported(const ReportedMetrics& fn, const std::string& scope, const std::string& name,
                     std::vector<MetricValue>* out) {
  try {
    std::vector<MetricValue> values = fn();
    out->insert(out->end(), std::make_move_iterator(values.begin()), std::make_move_iterator(values.end()));
  } catch (const std::exception& e) {
    spdlog::warn("reported metrics '{}' in '{}' threw: {}", name, scope, e.what());
  } catch (...) {
    spdlog::warn("reported metrics '{}' in '{}' threw a non-standard exception", name, scope);
  }
}

}  // namespace

std::string_view metric_kind_name(MetricKind kind) {
  switch (kind) {
    case MetricKind::kCounter: return "counter";
    case MetricKind::kGauge: return "gauge";
    case MetricKind::kHistogram: return "histogram";
  }
  return "unknown";
}

MetricRegistry::MetricRegistry() : root_(new MetricGroup(&mu_, "", {})) {}

MetricRegistry::~MetricRegistry() = default;

MetricGroup& MetricRegistry::add_job_group(std::string_view job_name) {
  return root_->add_group(metric_scope::kJobName, job_name);
}

std::vector<MetricValue> MetricRegistry::snapshot() const {
  std::vector<MetricValue> out;
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const MetricGroup*> pending{root_.get()};
  while (!pending.empty()) {
    const MetricGroup* g = pending.back();
    pending.pop_back();
    for (const auto& [name, c] : g->counters_) {
      out.push_back({g->scope_, name, MetricKind::kCounter, static_cast<double>(c->count()), {}, g->variables_});
    }
    for (const auto& [name, fn] : g->gauges_) {
      out.push_back({g->scope_, name, MetricKind::kGauge, call_gauge(fn, g->scope_, name), {}, g->variables_});
    }
    for (const auto& [name, h] : g->histograms_) {
      HistogramStatistics stats = h->statistics();
      out.push_back({g->scope_, name, MetricKind::kHistogram, static_cast<double>(stats.count), stats, g->variables_});
    }
    for (const auto& [name, fn] : g->reported_) append_reported(fn, g->scope_, name, &out);
    for (const auto& [name, child] : g->children_) pending.push_back(child.get());
  }
  std::sort(out.begin(), out.end(), [](const MetricValue& a, const MetricValue& b) {
    return std::tie(a.scope, a.name, a.kind) < std::tie(b.scope, b.name, b.kind);
  });
  return out;
}

nlohmann::json MetricRegistry::snapshot_json() const {
  nlohmann::json metrics = nlohmann::json::array();
  nlohmann::json scopes = nlohmann::json::object();
  for (const MetricValue& m : snapshot()) {
    if (!m.scope.empty()) scopes[m.scope] = m.variables;  // reported metrics have no group here
    nlohmann::json j = {{"scope", m.scope}, {"name", m.name}, {"kind", metric_kind_name(m.kind)}};
    switch (m.kind) {
      case MetricKind::kCounter:
        j["value"] = static_cast<int64_t>(m.value);
        break;
      case MetricKind::kGauge:
        j["value"] = std::isfinite(m.value) ? nlohmann::json(m.value) : nlohmann::json(nullptr);
        break;
      case MetricKind::kHistogram:
        j["count"] = m.histogram.count;
        j["min"] = m.histogram.min;
        j["max"] = m.histogram.max;
        j["mean"] = m.histogram.mean;
        j["p50"] = m.histogram.p50;
        j["p95"] = m.histogram.p95;
        j["p99"] = m.histogram.p99;
        break;
    }
    metrics.push_back(std::move(j));
  }

  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<const MetricGroup*> pending{root_.get()};
    while (!pending.empty()) {
      const MetricGroup* g = pending.back();
      pending.pop_back();
      if (!g->scope_.empty()) scopes[g->scope_] = g->variables_;
      for (const auto& [name, child] : g->children_) pending.push_back(child.get());
    }
  }
  return {{"metrics", std::move(metrics)}, {"scopes", std::move(scopes)}};
}

const MetricGroup* MetricRegistry::find_group_locked(std::string_view scope) const {
  std::vector<const MetricGroup*> pending{root_.get()};
  while (!pending.empty()) {
    const MetricGroup* g = pending.back();
    pending.pop_back();
    if (g->scope_ == scope) return g;
    // Only descend where the scope can still match: a child's scope starts with its parent's.
    if (!g->scope_.empty() && scope.substr(0, g->scope_.size()) != g->scope_) continue;
    for (const auto& [name, child] : g->children_) pending.push_back(child.get());
  }
  return nullptr;
}

std::optional<double> MetricRegistry::find(std::string_view scope, std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const MetricGroup* g = find_group_locked(scope);
  if (g == nullptr) return std::nullopt;
  if (auto it = g->counters_.find(name); it != g->counters_.end()) return static_cast<double>(it->second->count());
  if (auto it = g->gauges_.find(name); it != g->gauges_.end()) return call_gauge(it->second, g->scope_, it->first);
  if (auto it = g->histograms_.find(name); it != g->histograms_.end()) {
    return static_cast<double>(it->second->count());
  }
  return std::nullopt;
}

std::optional<HistogramStatistics> MetricRegistry::find_histogram(std::string_view scope, std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const MetricGroup* g = find_group_locked(scope);
  if (g == nullptr) return std::nullopt;
  auto it = g->histograms_.find(name);
  if (it == g->histograms_.end()) return std::nullopt;
  return it->second->statistics();
}

}  // namespace sluice
