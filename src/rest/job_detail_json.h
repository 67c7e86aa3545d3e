// The bodies of a job's detail views in the shapes of Flink's REST API (docs/rest-api.md), as pure functions of what
// a RestJob reports:
//   backpressure_json         GET /jobs/:jobid/vertices/:vertexid/backpressure  (JobVertexBackPressureInfo)
//   watermarks_json           GET /jobs/:jobid/vertices/:vertexid/watermarks    (a metric collection: id, value)
//   exceptions_json           GET /jobs/:jobid/exceptions                       (JobExceptionsInfoWithHistory)
//   checkpoint_config_json    GET /jobs/:jobid/checkpoints/config               (CheckpointConfigInfo)
//   checkpoint_subtasks_json  GET /jobs/:jobid/checkpoints/details/:cid/subtasks/:vertexid
//                             (TaskCheckpointStatisticsWithSubtaskDetails)
//
// Back-pressure comes from the task metrics (observability.md): a subtask's ratio is its
// backPressuredTimeMsPerSecond / 1000, its level as Flink's: ok up to 0.10, low up to 0.5, high above. Flink samples
// the tasks when asked; Sluice's figures are the last 60 s averages the metrics keep, so the status is always "ok"
// (no sampling in progress). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/checkpoint_stats.h"
#include "rest/rest_server.h"

namespace sluice::rest {

// Flink's back-pressure level of a ratio in [0, 1].
const char* backpressure_level(double ratio);

// `placed`: where the subtasks of the running attempt are (their attempt numbers); `now_ms`: the end-timestamp.
nlohmann::json backpressure_json(const RestVertex& vertex, const std::vector<MetricValue>& metrics,
                                 const std::vector<RestSubtask>& placed, int64_t now_ms);
// Per subtask: "<i>.currentInputWatermark" of the chain's head (not for a source vertex) and
// "<i>.currentOutputWatermark" of its last operator, values as decimal strings (as Flink's metric endpoints).
nlohmann::json watermarks_json(const RestVertex& vertex, const std::vector<MetricValue>& metrics);
// `entries` newest first; `total`: how many failures there were (the history keeps the newest only).
nlohmann::json exceptions_json(const std::vector<RestException>& entries, int64_t total);
nlohmann::json checkpoint_config_json(const RestCheckpointConfig& config);
// The subtasks of `vertex` (`parallelism` of them) in checkpoint `entry`: those that acknowledged with their
// figures, the others "pending_or_failed".
nlohmann::json checkpoint_subtasks_json(const coordinator::CheckpointStatsEntry& entry, int32_t vertex,
                                        int32_t parallelism);

}  // namespace sluice::rest
