#include "rpc/metric_report.h"

#include <algorithm>
#include <exception>
#include <map>

#include "sluice/metrics/metric_names.h"

namespace sluice::rpc {
namespace {

v1::MetricKind kind_to_proto(MetricKind kind) {
  switch (kind) {
    case MetricKind::kCounter: return v1::METRIC_COUNTER;
    case MetricKind::kGauge: return v1::METRIC_GAUGE;
    case MetricKind::kHistogram: return v1::METRIC_HISTOGRAM;
  }
  return v1::METRIC_GAUGE;
}

MetricKind kind_from_proto(v1::MetricKind kind) {
  switch (kind) {
    case v1::METRIC_COUNTER: return MetricKind::kCounter;
    case v1::METRIC_HISTOGRAM: return MetricKind::kHistogram;
    default: return MetricKind::kGauge;
  }
}

}  // namespace

std::vector<MetricValue> hosted_task_metrics(std::vector<MetricValue> snapshot, const StreamGraph& stream_graph,
                                             const graph::JobGraph& job_graph,
                                             const std::set<std::pair<int32_t, int32_t>>& hosted) {
  // Operator names need not be unique: a name stands for every vertex that has an operator of that name. A task's
  // metrics (no operator) name its vertex by the task name.
  std::map<std::string, std::set<int32_t>> vertices_of_operator;
  std::map<std::string, std::set<int32_t>> vertices_of_task;
  for (const graph::JobVertex& v : job_graph.vertices) {
    for (int32_t node : v.nodes) vertices_of_operator[stream_graph.node(node).name].insert(v.id);
    vertices_of_task[v.name].insert(v.id);
  }
  const std::string op_key(metric_scope::kOperatorName), task_key(metric_scope::kTaskName),
      subtask_key(metric_scope::kSubtaskIndex);
  std::vector<MetricValue> out;
  for (MetricValue& m : snapshot) {
    auto subtask = m.variables.find(subtask_key);
    if (subtask == m.variables.end()) continue;
    const std::set<int32_t>* vertices = nullptr;
    if (auto op = m.variables.find(op_key); op != m.variables.end()) {
      auto it = vertices_of_operator.find(op->second);
      if (it != vertices_of_operator.end()) vertices = &it->second;
    } else if (auto task = m.variables.find(task_key); task != m.variables.end()) {
      auto it = vertices_of_task.find(task->second);
      if (it != vertices_of_task.end()) vertices = &it->second;
    }
    if (vertices == nullptr) continue;
    int32_t index = -1;
    try {
      index = std::stoi(subtask->second);
    } catch (const std::exception&) {
      continue;
    }
    bool here = false;
    for (int32_t v : *vertices) here = here || hosted.count({v, index}) > 0;
    if (here) out.push_back(std::move(m));
  }
  return out;
}

void to_proto(const std::vector<MetricValue>& metrics, uint64_t sequence, v1::MetricReport* out) {
  out->set_sequence(sequence);
  const size_t n = std::min(metrics.size(), kMaxReportedMetrics);
  out->set_omitted(static_cast<uint32_t>(metrics.size() - n));
  for (size_t i = 0; i < n; ++i) {
    const MetricValue& m = metrics[i];
    v1::MetricSample* s = out->add_metrics();
    s->set_scope(m.scope);
    s->set_name(m.name);
    s->set_kind(kind_to_proto(m.kind));
    s->set_value(m.value);
    if (m.kind == MetricKind::kHistogram) {
      v1::HistogramStatistics* h = s->mutable_histogram();
      h->set_count(m.histogram.count);
      h->set_min(m.histogram.min);
      h->set_max(m.histogram.max);
      h->set_mean(m.histogram.mean);
      h->set_p50(m.histogram.p50);
      h->set_p95(m.histogram.p95);
      h->set_p99(m.histogram.p99);
    }
    for (const auto& [k, v] : m.variables) (*s->mutable_variables())[k] = v;
  }
}

std::vector<MetricValue> from_proto(const v1::MetricReport& report) {
  std::vector<MetricValue> out;
  out.reserve(static_cast<size_t>(report.metrics_size()));
  for (const v1::MetricSample& s : report.metrics()) {
    MetricValue m;
    m.scope = s.scope();
    m.name = s.name();
    m.kind = kind_from_proto(s.kind());
    m.value = s.value();
    if (m.kind == MetricKind::kHistogram) {
      const v1::HistogramStatistics& h = s.histogram();
      m.histogram = HistogramStatistics{h.count(), h.min(), h.max(), h.mean(), h.p50(), h.p95(), h.p99()};
    }
    m.variables.insert(s.variables().begin(), s.variables().end());
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace sluice::rpc
