// The metric report a TaskManager sends with its heartbeats (proto/resource_manager.proto, MetricReport): which of
// its metrics go in, and their conversion to and from the message. Included by src/rpc's .cc files and tests only.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sluice/api/stream_graph.h"
#include "graph/job_graph.h"
#include "proto/resource_manager.pb.h"
#include "sluice/metrics/metric_value.h"

namespace sluice::rpc {

// At most this many metrics go into one report (the rest are counted in MetricReport.omitted): a few dozen per
// subtask is usual, and a heartbeat must stay far below gRPC's 4 MiB message limit.
inline constexpr size_t kMaxReportedMetrics = 8192;

// The task and operator metrics among `snapshot` (a TaskManager's registry): those of an operator (variable
// operator_name) or a task (task_name: the vertex's name) of a vertex whose subtask (subtask_index) runs here;
// `hosted`: (vertex, subtask) pairs. Metrics of subtasks that left this TaskManager (a failover placed them
// elsewhere) and metrics of neither an operator nor a task are left out.
std::vector<MetricValue> hosted_task_metrics(std::vector<MetricValue> snapshot, const StreamGraph& stream_graph,
                                             const graph::JobGraph& job_graph,
                                             const std::set<std::pair<int32_t, int32_t>>& hosted);

// The first kMaxReportedMetrics of `metrics` as report number `sequence`.
void to_proto(const std::vector<MetricValue>& metrics, uint64_t sequence, v1::MetricReport* out);
// The values of a report. A kind this build does not know is read as a gauge.
std::vector<MetricValue> from_proto(const v1::MetricReport& report);

}  // namespace sluice::rpc
