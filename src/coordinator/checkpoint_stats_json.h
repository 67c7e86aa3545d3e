// Checkpoint statistics as JSON: what the demo's --summary-json and `sluice checkpoint inspect --json` print,
// and the file each completed checkpoint's statistics are persisted in, next to its _metadata
// (kCheckpointStatsFileName, written by the coordinator after the metadata is durable; best effort: a
// checkpoint without it is just as valid, and restore and verify never read it).
//
// Field names are snake_case versions of the struct fields (units in the names). Thread-safety: functions.
#pragma once

#include <nlohmann/json.hpp>

#include "coordinator/checkpoint_stats.h"
#include "sluice/core/status.h"

namespace sluice::coordinator {

inline constexpr const char* kCheckpointStatsFileName = "_checkpoint_stats.json";

std::string_view checkpoint_status_name(CheckpointStatus status);  // "in_progress", "completed", "failed"

nlohmann::json to_json(const SubtaskStatsEntry& subtask);
nlohmann::json to_json(const CheckpointStatsEntry& entry);  // with its subtasks
nlohmann::json to_json(const StatsSummary& summary);
// Counts, summaries, latest completed / failed, in progress and the history.
nlohmann::json to_json(const CheckpointStatsSnapshot& snapshot);

// The inverse of to_json(CheckpointStatsEntry) (for inspect); kCorruption naming what is wrong.
Result<CheckpointStatsEntry> checkpoint_stats_entry_from_json(const nlohmann::json& j);

}  // namespace sluice::coordinator
