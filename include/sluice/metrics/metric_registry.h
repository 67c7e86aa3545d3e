// MetricRegistry: owns the metric groups of one job run (or one process) and takes snapshots of them.
//
// snapshot_json() structure (stable; new fields may be added, none removed or renamed):
//   {
//     "metrics": [                                   // sorted by scope, then name, then kind
//       {"scope": "demo.per-auction.1", "name": "numRecordsIn", "kind": "counter", "value": 42},
//       {"scope": "demo.per-auction.1", "name": "stateSizeBytes", "kind": "gauge", "value": 1.5e6},
//       {"scope": "demo.per-auction.1", "name": "latencyNs", "kind": "histogram",
//        "count": 10, "min": 3, "max": 90, "mean": 21.5, "p50": 12, "p95": 88, "p99": 90}
//     ],
//     "scopes": {                                    // every group's variables (empty object if none)
//       "demo": {"job_name": "demo"},
//       "demo.per-auction.1": {"job_name": "demo", "operator_name": "per-auction", "subtask_index": "1"}
//     }
//   }
// Counter values are integers; gauge values are numbers (null when NaN or infinite).
// Snapshots include the values of every reported metric set (MetricGroup::reported_metrics), in the scopes and with
// the variables those values carry; find() and find_histogram() see only the metrics registered here.
//
// Thread-safety: all member functions may be called from any thread. A snapshot holds the registry's
// mutex while it reads (and calls gauges), so metric registration waits for it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sluice/metrics/metric_group.h"
#include "sluice/metrics/metric_value.h"

namespace sluice {

class MetricRegistry {
 public:
  MetricRegistry();
  ~MetricRegistry();
  MetricRegistry(const MetricRegistry&) = delete;
  MetricRegistry& operator=(const MetricRegistry&) = delete;

  // The root group (scope ""): top-level groups are added through it.
  MetricGroup& root() { return *root_; }
  // root().add_group(metric_scope::kJobName, job_name): the scope of a job's metrics.
  MetricGroup& add_job_group(std::string_view job_name);

  // Every metric, sorted by (scope, name, kind).
  std::vector<MetricValue> snapshot() const;
  nlohmann::json snapshot_json() const;

  // The current value of metric `name` in the group whose scope is `scope`: a counter's count, a gauge's
  // value, a histogram's count. nullopt if there is no such metric.
  std::optional<double> find(std::string_view scope, std::string_view name) const;
  std::optional<HistogramStatistics> find_histogram(std::string_view scope, std::string_view name) const;

 private:
  const MetricGroup* find_group_locked(std::string_view scope) const;

  mutable std::mutex mu_;
  std::unique_ptr<MetricGroup> root_;
};

}  // namespace sluice
