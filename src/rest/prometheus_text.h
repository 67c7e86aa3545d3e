// Metrics in Prometheus' text exposition format (version 0.0.4, https://prometheus.io/docs/instrumenting/exposition_formats/),
// named and labelled as Flink's PrometheusReporter does (Flink docs, "Metric Reporters" / Prometheus), so a
// dashboard or alert written for Flink reads Sluice's:
//   - name: "flink_" + the logical scope + "_" + the metric name, every character outside [a-zA-Z0-9_:] turned
//     into '_': an operator subtask's metric (its group has an operator_name) is
//     flink_taskmanager_job_task_operator_<name>; a task subtask's (a task_name, no operator_name: busy time, ...)
//     flink_taskmanager_job_task_<name>; a metric of the job's own group flink_jobmanager_job_<name>;
//   - labels: the group's variables (job_name, task_name, operator_name, subtask_index, ...) plus those given per job (job_id);
//   - counters and gauges are exported as Prometheus gauges (Flink's reporter does the same: its counters may go
//     down); a histogram as a summary: quantile 0.5, 0.95 and 0.99, _sum (count x mean) and _count.
// A gauge whose value is NaN or infinite is written as such ("NaN", "+Inf", "-Inf"), which the format allows.
// Every family is written once (its # TYPE line first), with the samples of all jobs under it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sluice/metrics/metric_registry.h"

namespace sluice::rest {

// The metrics of one job, with labels every one of its samples gets (e.g. {"job_id": hex}).
struct JobMetrics {
  std::map<std::string, std::string> labels;
  std::vector<MetricValue> metrics;
};

// The exposition text of every metric of `jobs`, families sorted by name. Pure: no I/O.
std::string prometheus_text(const std::vector<JobMetrics>& jobs);

// `name` with every character outside [a-zA-Z0-9_:] replaced by '_' (and a leading digit prefixed with '_').
std::string prometheus_name(const std::string& name);

}  // namespace sluice::rest
