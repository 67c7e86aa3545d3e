// MetricGroup: a named scope of metrics, as Flink's metric groups: job "demo" / operator "per-auction" /
// subtask 1 has the scope "demo.per-auction.1".
//
// Groups and metrics are created on first use and live as long as their MetricRegistry: the references
// returned stay valid until the registry is destroyed (nothing is ever removed except gauges). Creating a
// group or metric takes the registry's mutex (rare: at task setup); recording into a Counter or Histogram
// takes no lock (see counter.h, histogram.h for the single-writer rule).
//
// Names: a metric name is unique per kind within a group; reusing a name for another kind is allowed but
// logged as a warning (find() then prefers counter, then gauge, then histogram).
//
// Thread-safety: all member functions may be called from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/ids.h"
#include "sluice/metrics/counter.h"
#include "sluice/metrics/histogram.h"
#include "sluice/metrics/metric_value.h"

namespace sluice {

// A gauge reports a value when a snapshot is taken, on the snapshotting thread (not the task thread), so
// the function must be safe to call from any thread (read atomics, not plain fields of the task). It runs
// under the registry's mutex: it must not call into the registry, and it must be quick. Exceptions it
// throws are caught and reported as NaN.
using Gauge = std::function<double()>;

// A set of metrics kept elsewhere whose values every snapshot of the registry includes as they are, in their own
// scopes and with their own variables: a JobManager's copy of the metrics its TaskManagers report. Called like a
// Gauge: on the snapshotting thread, under the registry's mutex, so it must be quick and must not call into the
// registry. Exceptions it throws are caught and logged; the set then adds nothing to that snapshot.
using ReportedMetrics = std::function<std::vector<MetricValue>()>;

class MetricRegistry;

class MetricGroup {
 public:
  MetricGroup(const MetricGroup&) = delete;
  MetricGroup& operator=(const MetricGroup&) = delete;
  ~MetricGroup();

  // Dot-joined names from the registry's root: "demo.per-auction.1". Empty for the root group.
  const std::string& scope() const { return scope_; }
  // Variables recorded by key/value groups on the path from the root, e.g.
  // {job_name: demo, operator_name: per-auction, subtask_index: 1}.
  const std::map<std::string, std::string>& variables() const { return variables_; }

  // The counter / histogram `name` of this group, created on first use.
  Counter& counter(std::string_view name);
  Histogram& histogram(std::string_view name);
  // Registers (or replaces) the gauge `name`.
  void gauge(std::string_view name, Gauge fn);
  // Unregisters the gauge `name` (no-op if absent). When this returns, no snapshot is calling it any more,
  // so objects it captured may be destroyed.
  void remove_gauge(std::string_view name);

  // Registers (or replaces) the reported metric set `name` (see ReportedMetrics).
  void reported_metrics(std::string_view name, ReportedMetrics fn);
  // Unregisters it (no-op if absent); as remove_gauge, no snapshot calls it any more once this returns.
  void remove_reported_metrics(std::string_view name);

  // The child group `name` (scope "<scope>.<name>"), created on first use.
  MetricGroup& add_group(std::string_view name);
  // A key/value child group (Flink's addGroup(key, value)): the scope gains `value`, and the variables
  // gain key -> value. Groups of different keys are different groups, also with the same value (and then the same
  // scope: give them different parents, as the runtime's task groups under "<job>.task_name").
  MetricGroup& add_group(std::string_view key, std::string_view value);
  // Standard key/value groups of the runtime (metric_names.h, metric_scope).
  MetricGroup& add_operator_group(std::string_view operator_name);
  MetricGroup& add_subtask_group(SubtaskIndex index);

 private:
  friend class MetricRegistry;
  MetricGroup(std::mutex* mu, std::string scope, std::map<std::string, std::string> variables);
  MetricGroup& add_group_locked(std::string_view name, std::string_view key);
  void warn_if_name_taken_locked(std::string_view name, std::string_view kind) const;

  std::mutex* const mu_;  // the registry's; guards every map below in every group
  const std::string scope_;
  const std::map<std::string, std::string> variables_;
  std::map<std::string, std::unique_ptr<Counter>, std::less<>> counters_;
  std::map<std::string, Gauge, std::less<>> gauges_;
  std::map<std::string, std::unique_ptr<Histogram>, std::less<>> histograms_;
  std::map<std::string, ReportedMetrics, std::less<>> reported_;
  // By key (empty for a plain group), '\x1f', name.
  std::map<std::string, std::unique_ptr<MetricGroup>, std::less<>> children_;
};

}  // namespace sluice
