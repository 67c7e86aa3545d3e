// The `metrics` object of a vertex in GET /jobs/:jobid (Flink's IOMetricsInfo in JobDetailsInfo): the records and
// bytes a vertex (a chain of operators) read from and wrote to the network, summed over its subtasks, from the
// job's metrics (RestJob::metrics: the MiniCluster's registry, or what the TaskManagers reported to the JobManager):
//   read-records / read-bytes   numRecordsIn / numBytesIn of the chain's head (0 for a source vertex: it reads no
//                               network input);
//   write-records / write-bytes numRecordsOut / numBytesOut of the operators whose output leaves the vertex (0 for a
//                               vertex whose output goes nowhere, e.g. a sink);
//   <key>-complete              true when every subtask of the vertex has that figure (Flink: all subtasks reported).
// A subtask that two TaskManagers reported (one lost it to the other in a failover, until its next report) counts
// once per report. Pure: no I/O. Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "rest/rest_server.h"
#include "sluice/metrics/metric_value.h"

namespace sluice::rest {

nlohmann::json vertex_metrics_json(const RestVertex& vertex, const std::vector<MetricValue>& metrics);

}  // namespace sluice::rest
