#include "rest/checkpoint_stats_rest.h"

#include <algorithm>
#include <map>

#include "checkpoint/checkpoint_metadata.h"
#include "coordinator/checkpoint_failure_manager.h"

namespace sluice::rest {
namespace {

using coordinator::CheckpointStatsEntry;
using coordinator::CheckpointStatus;
using coordinator::StatsSummary;

nlohmann::json summary_json(const StatsSummary& s) {
  return {{"min", s.min}, {"max", s.max}, {"avg", s.avg}, {"p50", s.p50}, {"p99", s.p99}, {"count", s.count}};
}

// Trigger time plus the slowest acknowledgement: when the last subtask acknowledged.
int64_t latest_ack_timestamp(const CheckpointStatsEntry& e) {
  int64_t latest = -1;
  for (const auto& s : e.subtasks) latest = std::max(latest, e.trigger_timestamp_ms + s.ack_duration_ms);
  return latest;
}

}  // namespace

const char* flink_checkpoint_status(CheckpointStatus status) {
  switch (status) {
    case CheckpointStatus::kInProgress: return "IN_PROGRESS";
    case CheckpointStatus::kCompleted: return "COMPLETED";
    case CheckpointStatus::kFailed:
    case CheckpointStatus::kAbandoned: return "FAILED";
  }
  return "FAILED";
}

nlohmann::json flink_checkpoint_entry(const CheckpointStatsEntry& e) {
  const bool savepoint = e.type == checkpoint::SnapshotType::kSavepoint;
  // Per vertex (Flink's "tasks", keyed by vertex id): acknowledged subtasks, sizes, the latest acknowledgement.
  struct Task {
    int32_t acknowledged = 0;
    uint64_t state_size = 0, checkpointed_size = 0, persisted = 0;
    int64_t latest_ack_ms = 0;
  };
  std::map<int32_t, Task> tasks;
  for (const auto& s : e.subtasks) {
    Task& t = tasks[s.vertex];
    ++t.acknowledged;
    t.state_size += s.stats.state_size_bytes;
    t.checkpointed_size += s.stats.checkpointed_size_bytes;
    t.persisted += s.stats.persisted_data_bytes;
    t.latest_ack_ms = std::max(t.latest_ack_ms, s.ack_duration_ms);
  }
  nlohmann::json tasks_json = nlohmann::json::object();
  for (const auto& [vertex, t] : tasks) {
    tasks_json[std::to_string(vertex)] = {{"id", std::to_string(vertex)},
                                          {"num_acknowledged_subtasks", t.acknowledged},
                                          {"state_size", t.state_size},
                                          {"checkpointed_size", t.checkpointed_size},
                                          {"persisted_data", t.persisted},
                                          {"latest_ack_timestamp", e.trigger_timestamp_ms + t.latest_ack_ms},
                                          {"end_to_end_duration", t.latest_ack_ms}};
  }
  nlohmann::json j = {
      {"id", e.id.value()},
      {"status", flink_checkpoint_status(e.status)},
      {"is_savepoint", savepoint},
      {"savepoint_format", nullptr},
      {"trigger_timestamp", e.trigger_timestamp_ms},
      {"latest_ack_timestamp", latest_ack_timestamp(e)},
      {"checkpointed_size", e.checkpointed_size_bytes},
      {"state_size", e.state_size_bytes},
      {"end_to_end_duration", e.end_to_end_duration_ms},
      {"alignment_buffered", 0},
      {"processed_data", 0},
      {"persisted_data", e.persisted_data_bytes},
      {"num_subtasks", e.num_tasks},
      {"num_acknowledged_subtasks", e.num_acknowledged},
      {"checkpoint_type", savepoint ? "SAVEPOINT" : e.unaligned ? "UNALIGNED_CHECKPOINT" : "CHECKPOINT"},
      {"tasks", std::move(tasks_json)},
  };
  if (e.status == CheckpointStatus::kCompleted) {
    j["external_path"] = e.location;
    j["discarded"] = false;
  }
  if (e.status == CheckpointStatus::kFailed || e.status == CheckpointStatus::kAbandoned) {
    j["failure_timestamp"] = e.trigger_timestamp_ms + e.end_to_end_duration_ms;
    std::string message = e.failure_message;
    if (e.failure_reason) message = std::string(coordinator::failure_reason_name(*e.failure_reason)) + ": " + message;
    if (e.status == CheckpointStatus::kAbandoned) message = "abandoned when the job finished: " + message;
    j["failure_message"] = message;
  }
  return j;
}

nlohmann::json flink_checkpoint_statistics(const CheckpointView& view) {
  const coordinator::CheckpointStatsSnapshot& s = view.stats;
  nlohmann::json counts = {{"restored", view.num_restored},
                           {"total", s.num_triggered},
                           {"in_progress", s.num_in_progress},
                           {"completed", s.num_completed},
                           {"failed", s.num_failed}};
  nlohmann::json summary = {{"checkpointed_size", summary_json(s.checkpointed_size_bytes)},
                            {"state_size", summary_json(s.state_size_bytes)},
                            {"end_to_end_duration", summary_json(s.end_to_end_duration_ms)},
                            {"alignment_buffered", summary_json(StatsSummary{})},
                            {"processed_data", summary_json(StatsSummary{})},
                            {"persisted_data", summary_json(s.persisted_data_bytes)},
                            // Sluice's own figures (the slowest subtask of each checkpoint, ms).
                            {"sync_duration", summary_json(s.sync_duration_ms)},
                            {"async_duration", summary_json(s.async_duration_ms)},
                            {"alignment_duration", summary_json(s.alignment_duration_ms)},
                            {"start_delay", summary_json(s.start_delay_ms)}};
  nlohmann::json latest = {{"completed", nullptr}, {"savepoint", nullptr}, {"failed", nullptr}, {"restored", nullptr}};
  if (s.latest_completed) latest["completed"] = flink_checkpoint_entry(*s.latest_completed);
  if (s.latest_failed) latest["failed"] = flink_checkpoint_entry(*s.latest_failed);
  for (const CheckpointStatsEntry& e : s.history) {  // newest first: the first completed savepoint is the latest
    if (e.type == checkpoint::SnapshotType::kSavepoint && e.status == CheckpointStatus::kCompleted) {
      latest["savepoint"] = flink_checkpoint_entry(e);
      break;
    }
  }
  if (view.latest_restored) {
    latest["restored"] = {{"id", view.latest_restored->id},
                          {"is_savepoint", view.latest_restored->is_savepoint},
                          {"external_path", view.latest_restored->external_path}};
  }
  // Flink's history lists the checkpoints in progress too, newest first.
  nlohmann::json history = nlohmann::json::array();
  for (auto it = s.in_progress.rbegin(); it != s.in_progress.rend(); ++it) history.push_back(flink_checkpoint_entry(*it));
  for (const CheckpointStatsEntry& e : s.history) history.push_back(flink_checkpoint_entry(e));
  return {{"counts", std::move(counts)}, {"summary", std::move(summary)}, {"latest", std::move(latest)},
          {"history", std::move(history)}};
}

}  // namespace sluice::rest
