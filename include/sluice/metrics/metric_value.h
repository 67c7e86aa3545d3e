// MetricValue: one metric's value at a snapshot, with the scope and variables of its group
// (MetricRegistry::snapshot, and the metrics a JobManager keeps from its TaskManagers' reports).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "sluice/metrics/histogram.h"

namespace sluice {

enum class MetricKind { kCounter, kGauge, kHistogram };
std::string_view metric_kind_name(MetricKind kind);  // "counter", "gauge", "histogram"

struct MetricValue {
  std::string scope;
  std::string name;
  MetricKind kind = MetricKind::kCounter;
  double value = 0.0;                 // counter: count; gauge: its value; histogram: its count
  HistogramStatistics histogram;      // kHistogram only
  // The variables of the metric's group and its parents (job_name, operator_name, subtask_index, ...).
  std::map<std::string, std::string> variables;
};

}  // namespace sluice
