#include "coordinator/checkpoint_stats_json.h"

namespace sluice::coordinator {

std::string_view checkpoint_status_name(CheckpointStatus status) {
  switch (status) {
    case CheckpointStatus::kInProgress: return "in_progress";
    case CheckpointStatus::kCompleted: return "completed";
    case CheckpointStatus::kFailed: return "failed";
    case CheckpointStatus::kAbandoned: return "abandoned";
  }
  return "unknown";
}

nlohmann::json to_json(const SubtaskStatsEntry& s) {
  return {{"vertex", s.vertex},
          {"subtask", s.subtask},
          {"ack_duration_ms", s.ack_duration_ms},
          {"sync_duration_ms", s.stats.sync_duration_ms},
          {"async_duration_ms", s.stats.async_duration_ms},
          {"alignment_duration_ms", s.stats.alignment_duration_ms},
          {"start_delay_ms", s.stats.start_delay_ms},
          {"state_size_bytes", s.stats.state_size_bytes},
          {"checkpointed_size_bytes", s.stats.checkpointed_size_bytes},
          {"persisted_data_bytes", s.stats.persisted_data_bytes},
          {"unaligned", s.stats.unaligned}};
}

nlohmann::json to_json(const CheckpointStatsEntry& e) {
  nlohmann::json j = {{"id", e.id.value()},
                      {"type", e.type == checkpoint::SnapshotType::kSavepoint ? "savepoint" : "checkpoint"},
                      {"status", std::string(checkpoint_status_name(e.status))},
                      {"trigger_timestamp_ms", e.trigger_timestamp_ms},
                      {"end_to_end_duration_ms", e.end_to_end_duration_ms},
                      {"sync_duration_ms", e.sync_duration_ms},
                      {"async_duration_ms", e.async_duration_ms},
                      {"alignment_duration_ms", e.alignment_duration_ms},
                      {"start_delay_ms", e.start_delay_ms},
                      {"state_size_bytes", e.state_size_bytes},
                      {"checkpointed_size_bytes", e.checkpointed_size_bytes},
                      {"persisted_data_bytes", e.persisted_data_bytes},
                      {"unaligned", e.unaligned},
                      {"num_acknowledged", e.num_acknowledged},
                      {"num_tasks", e.num_tasks}};
  if (e.failure_reason) {
    j["failure_reason"] = std::string(failure_reason_name(*e.failure_reason));
    j["failure_message"] = e.failure_message;
  }
  if (!e.location.empty()) j["location"] = e.location;
  nlohmann::json subtasks = nlohmann::json::array();
  for (const auto& s : e.subtasks) subtasks.push_back(to_json(s));
  j["subtasks"] = std::move(subtasks);
  return j;
}

nlohmann::json to_json(const StatsSummary& s) {
  return {{"count", s.count}, {"min", s.min}, {"avg", s.avg}, {"p50", s.p50}, {"p99", s.p99}, {"max", s.max}};
}

nlohmann::json to_json(const CheckpointStatsSnapshot& s) {
  nlohmann::json j = {{"num_triggered", s.num_triggered},
                      {"num_in_progress", s.num_in_progress},
                      {"num_completed", s.num_completed},
                      {"num_failed", s.num_failed},
                      {"consecutive_failures", s.consecutive_failures}};
  j["summary"] = {{"end_to_end_duration_ms", to_json(s.end_to_end_duration_ms)},
                  {"sync_duration_ms", to_json(s.sync_duration_ms)},
                  {"async_duration_ms", to_json(s.async_duration_ms)},
                  {"alignment_duration_ms", to_json(s.alignment_duration_ms)},
                  {"start_delay_ms", to_json(s.start_delay_ms)},
                  {"state_size_bytes", to_json(s.state_size_bytes)},
                  {"checkpointed_size_bytes", to_json(s.checkpointed_size_bytes)},
                  {"persisted_data_bytes", to_json(s.persisted_data_bytes)}};
  j["latest_completed"] = s.latest_completed ? to_json(*s.latest_completed) : nlohmann::json(nullptr);
  j["latest_failed"] = s.latest_failed ? to_json(*s.latest_failed) : nlohmann::json(nullptr);
  nlohmann::json in_progress = nlohmann::json::array(), history = nlohmann::json::array();
  for (const auto& e : s.in_progress) in_progress.push_back(to_json(e));
  for (const auto& e : s.history) history.push_back(to_json(e));
  j["in_progress"] = std::move(in_progress);
  j["history"] = std::move(history);
  return j;
}

Result<CheckpointStatsEntry> checkpoint_stats_entry_from_json(const nlohmann::json& j) {
  try {
    CheckpointStatsEntry e;
    e.id = CheckpointId(j.at("id").get<int64_t>());
    e.type = j.at("type").get<std::string>() == "savepoint" ? checkpoint::SnapshotType::kSavepoint
                                                             : checkpoint::SnapshotType::kCheckpoint;
    const std::string status = j.at("status").get<std::string>();
    e.status = status == "completed" ? CheckpointStatus::kCompleted
               : status == "failed"  ? CheckpointStatus::kFailed
               : status == "abandoned" ? CheckpointStatus::kAbandoned
                                     : CheckpointStatus::kInProgress;
    e.trigger_timestamp_ms = j.at("trigger_timestamp_ms").get<int64_t>();
    e.end_to_end_duration_ms = j.at("end_to_end_duration_ms").get<int64_t>();
    e.sync_duration_ms = j.at("sync_duration_ms").get<int64_t>();
    e.async_duration_ms = j.at("async_duration_ms").get<int64_t>();
    e.alignment_duration_ms = j.at("alignment_duration_ms").get<int64_t>();
    e.start_delay_ms = j.at("start_delay_ms").get<int64_t>();
    e.state_size_bytes = j.at("state_size_bytes").get<uint64_t>();
    e.checkpointed_size_bytes = j.at("checkpointed_size_bytes").get<uint64_t>();
    e.persisted_data_bytes = j.at("persisted_data_bytes").get<uint64_t>();
    e.unaligned = j.at("unaligned").get<bool>();
    e.num_acknowledged = j.at("num_acknowledged").get<int32_t>();
    e.num_tasks = j.at("num_tasks").get<int32_t>();
    if (j.contains("failure_message")) e.failure_message = j.at("failure_message").get<std::string>();
    if (j.contains("location")) e.location = j.at("location").get<std::string>();
    for (const auto& sj : j.at("subtasks")) {
      SubtaskStatsEntry s;
      s.vertex = sj.at("vertex").get<int32_t>();
      s.subtask = sj.at("subtask").get<int32_t>();
      s.ack_duration_ms = sj.at("ack_duration_ms").get<int64_t>();
      s.stats.sync_duration_ms = sj.at("sync_duration_ms").get<int64_t>();
      s.stats.async_duration_ms = sj.at("async_duration_ms").get<int64_t>();
      s.stats.alignment_duration_ms = sj.at("alignment_duration_ms").get<int64_t>();
      s.stats.start_delay_ms = sj.at("start_delay_ms").get<int64_t>();
      s.stats.state_size_bytes = sj.at("state_size_bytes").get<uint64_t>();
      s.stats.checkpointed_size_bytes = sj.at("checkpointed_size_bytes").get<uint64_t>();
      s.stats.persisted_data_bytes = sj.at("persisted_data_bytes").get<uint64_t>();
      s.stats.unaligned = sj.at("unaligned").get<bool>();
      e.subtasks.push_back(s);
    }
    return e;
  } catch (const nlohmann::json::exception& ex) {
    return Status::corruption(std::string("checkpoint statistics: ") + ex.what());
  }
}

}  // namespace sluice::coordinator
