// The checkpoint statistics of a job in the shape of Flink's GET /jobs/:jobid/checkpoints
// (CheckpointingStatistics): counts, summary, latest (completed, savepoint, failed, restored) and history.
//
// What Sluice does not measure is reported as Flink reports an absent figure (alignment_buffered and
// processed_data are 0) or left out (the p90 / p95 / p999 quantiles: the tracker keeps p50 and p99). Sluice's
// extra figures (sync, async, alignment durations, start delay) are in the summary under their own keys.
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "coordinator/checkpoint_stats.h"
#include "rest/checkpoint_view.h"

namespace sluice::rest {

// "COMPLETED", "IN_PROGRESS", "FAILED" (abandoned checkpoints are failed in Flink's terms).
const char* flink_checkpoint_status(coordinator::CheckpointStatus status);

nlohmann::json flink_checkpoint_entry(const coordinator::CheckpointStatsEntry& entry);
nlohmann::json flink_checkpoint_statistics(const CheckpointView& view);

}  // namespace sluice::rest
