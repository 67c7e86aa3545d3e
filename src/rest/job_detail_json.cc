#include "rest/job_detail_json.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "rest/checkpoint_stats_rest.h"
#include "sluice/metrics/metric_names.h"

namespace sluice::rest {
namespace {

// The metric `name` of each subtask of the task (task_name) or operator (operator_name) called `owner`.
std::map<int32_t, double> per_subtask(const std::vector<MetricValue>& metrics, const char* owner_key,
                                      const std::string& owner, std::string_view name) {
  std::map<int32_t, double> out;
  for (const MetricValue& m : metrics) {
    if (m.name != name) continue;
    auto o = m.variables.find(owner_key);
    auto s = m.variables.find(std::string(metric_scope::kSubtaskIndex));
    if (o == m.variables.end() || o->second != owner || s == m.variables.end()) continue;
    try {
      out[std::stoi(s->second)] = m.value;
    } catch (const std::exception&) {
    }
  }
  return out;
}

double value_or(const std::map<int32_t, double>& m, int32_t k, double fallback) {
  auto it = m.find(k);
  return it == m.end() ? fallback : it->second;
}

std::string watermark_text(double v) {
  // A gauge's double holds the int64 watermark exactly within +-2^53; the extremes print as Flink's Long.MIN/MAX.
  if (v <= static_cast<double>(std::numeric_limits<int64_t>::min())) return std::to_string(std::numeric_limits<int64_t>::min());
  if (v >= static_cast<double>(std::numeric_limits<int64_t>::max())) return std::to_string(std::numeric_limits<int64_t>::max());
  return std::to_string(static_cast<int64_t>(v));
}

nlohmann::json min_max_avg(const std::vector<double>& values) {
  if (values.empty()) return {{"min", 0}, {"max", 0}, {"avg", 0}};
  double sum = 0;
  for (double v : values) sum += v;
  return {{"min", *std::min_element(values.begin(), values.end())},
          {"max", *std::max_element(values.begin(), values.end())},
          {"avg", sum / static_cast<double>(values.size())}};
}

}  // namespace

const char* backpressure_level(double ratio) { return ratio <= 0.10 ? "ok" : ratio <= 0.5 ? "low" : "high"; }

nlohmann::json backpressure_json(const RestVertex& vertex, const std::vector<MetricValue>& metrics,
                                 const std::vector<RestSubtask>& placed, int64_t now_ms) {
  const auto back_pressured =
      per_subtask(metrics, "task_name", vertex.name, metric_names::kBackPressuredTimeMsPerSecond);
  const auto idle = per_subtask(metrics, "task_name", vertex.name, metric_names::kIdleTimeMsPerSecond);
  const auto busy = per_subtask(metrics, "task_name", vertex.name, metric_names::kBusyTimeMsPerSecond);
  nlohmann::json subtasks = nlohmann::json::array();
  double worst = 0;
  for (int32_t i = 0; i < vertex.parallelism; ++i) {
    int32_t attempt = 0;
    for (const RestSubtask& s : placed) {
      if (s.vertex == vertex.id && s.subtask == i) attempt = s.attempt;
    }
    const double ratio = std::clamp(value_or(back_pressured, i, 0) / 1000.0, 0.0, 1.0);
    worst = std::max(worst, ratio);
    subtasks.push_back({{"subtask", i},
                        {"attempt-number", attempt},
                        {"backpressure-level", backpressure_level(ratio)},
                        {"ratio", ratio},
                        {"idleRatio", std::clamp(value_or(idle, i, 0) / 1000.0, 0.0, 1.0)},
                        {"busyRatio", std::clamp(value_or(busy, i, 0) / 1000.0, 0.0, 1.0)}});
  }
  return {{"status", "ok"},
          {"backpressure-level", backpressure_level(worst)},
          {"end-timestamp", now_ms},
          {"subtasks", std::move(subtasks)}};
}

nlohmann::json watermarks_json(const RestVertex& vertex, const std::vector<MetricValue>& metrics) {
  nlohmann::json out = nlohmann::json::array();
  if (vertex.operators.empty()) return out;
  std::map<int32_t, double> in;
  if (!vertex.input_operator.empty()) {
    in = per_subtask(metrics, "operator_name", vertex.operators.front(), metric_names::kCurrentInputWatermark);
  }
  const auto last_out =
      per_subtask(metrics, "operator_name", vertex.operators.back(), metric_names::kCurrentOutputWatermark);
  for (int32_t i = 0; i < vertex.parallelism; ++i) {
    if (auto it = in.find(i); it != in.end()) {
      out.push_back({{"id", std::to_string(i) + ".currentInputWatermark"}, {"value", watermark_text(it->second)}});
    }
    if (auto it = last_out.find(i); it != last_out.end()) {
      out.push_back({{"id", std::to_string(i) + ".currentOutputWatermark"}, {"value", watermark_text(it->second)}});
    }
  }
  return out;
}

nlohmann::json exceptions_json(const std::vector<RestException>& entries, int64_t total) {
  nlohmann::json history = nlohmann::json::array();
  for (const RestException& e : entries) {
    history.push_back({{"exceptionName", e.exception_name},
                       {"stacktrace", e.stacktrace},
                       {"timestamp", e.timestamp_ms},
                       {"taskName", e.task_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.task_name)},
                       {"location", e.location.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.location)},
                       {"taskManagerId",
                        e.task_manager_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.task_manager_id)},
                       {"failureLabels", nlohmann::json::object()},
                       {"concurrentExceptions", nlohmann::json::array()}});
  }
  const bool truncated = total > static_cast<int64_t>(entries.size());
  nlohmann::json out = {{"root-exception", nullptr},
                        {"timestamp", nullptr},
                        {"all-exceptions", nlohmann::json::array()},
                        {"truncated", truncated},
                        {"exceptionHistory", {{"entries", std::move(history)}, {"truncated", truncated}}}};
  if (!entries.empty()) {  // Flink's older fields: the latest failure
    out["root-exception"] = entries.front().stacktrace;
    out["timestamp"] = entries.front().timestamp_ms;
  }
  return out;
}

nlohmann::json checkpoint_config_json(const RestCheckpointConfig& c) {
  return {{"mode", c.exactly_once ? "exactly_once" : "at_least_once"},
          {"interval", c.interval_ms},
          {"timeout", c.timeout_ms},
          {"min_pause", c.min_pause_ms},
          {"max_concurrent", c.max_concurrent},
          {"externalization", {{"enabled", c.externalized}, {"delete_on_cancellation", c.delete_on_cancellation}}},
          {"state_backend", c.state_backend},
          {"checkpoint_storage", c.checkpoint_storage},
          {"unaligned_checkpoints", c.unaligned},
          {"tolerable_failed_checkpoints", c.tolerable_failed_checkpoints},
          {"aligned_checkpoint_timeout", c.aligned_checkpoint_timeout_ms},
          {"checkpoints_after_tasks_finish", c.checkpoints_after_tasks_finish},
          {"state_changelog_enabled", false}};
}

nlohmann::json checkpoint_subtasks_json(const coordinator::CheckpointStatsEntry& e, int32_t vertex,
                                        int32_t parallelism) {
  std::map<int32_t, const coordinator::SubtaskStatsEntry*> acked;
  for (const auto& s : e.subtasks) {
    if (s.vertex == vertex) acked[s.subtask] = &s;
  }
  std::vector<double> state, checkpointed, e2e, sync, async, alignment, start_delay, persisted;
  uint64_t state_sum = 0, checkpointed_sum = 0, persisted_sum = 0;
  int64_t latest_ack = 0;
  nlohmann::json subtasks = nlohmann::json::array();
  for (int32_t i = 0; i < parallelism; ++i) {
    auto it = acked.find(i);
    if (it == acked.end()) {
      subtasks.push_back({{"index", i}, {"status", "pending_or_failed"}});
      continue;
    }
    const coordinator::SubtaskStatsEntry& s = *it->second;
    const coordinator::SubtaskCheckpointStats& st = s.stats;
    state.push_back(static_cast<double>(st.state_size_bytes));
    checkpointed.push_back(static_cast<double>(st.checkpointed_size_bytes));
    e2e.push_back(static_cast<double>(s.ack_duration_ms));
    sync.push_back(static_cast<double>(st.sync_duration_ms));
    async.push_back(static_cast<double>(st.async_duration_ms));
    alignment.push_back(static_cast<double>(st.alignment_duration_ms));
    start_delay.push_back(static_cast<double>(st.start_delay_ms));
    persisted.push_back(static_cast<double>(st.persisted_data_bytes));
    state_sum += st.state_size_bytes;
    checkpointed_sum += st.checkpointed_size_bytes;
    persisted_sum += st.persisted_data_bytes;
    latest_ack = std::max(latest_ack, s.ack_duration_ms);
    subtasks.push_back({{"index", i},
                        {"status", "completed"},
                        {"ack_timestamp", e.trigger_timestamp_ms + s.ack_duration_ms},
                        {"end_to_end_duration", s.ack_duration_ms},
                        {"state_size", st.state_size_bytes},
                        {"checkpointed_size", st.checkpointed_size_bytes},
                        {"checkpoint", {{"sync", st.sync_duration_ms}, {"async", st.async_duration_ms}}},
                        {"alignment",
                         {{"buffered", 0}, {"processed", 0}, {"persisted", st.persisted_data_bytes},
                          {"duration", st.alignment_duration_ms}}},
                        {"start_delay", st.start_delay_ms},
                        {"unaligned_checkpoint", st.unaligned},
                        {"aborted", false}});
  }
  const std::vector<double> zero;
  return {{"id", e.id.value()},
          {"status", flink_checkpoint_status(e.status)},
          {"latest_ack_timestamp", acked.empty() ? -1 : e.trigger_timestamp_ms + latest_ack},
          {"checkpointed_size", checkpointed_sum},
          {"state_size", state_sum},
          {"end_to_end_duration", latest_ack},
          {"alignment_buffered", 0},
          {"processed_data", 0},
          {"persisted_data", persisted_sum},
          {"num_subtasks", parallelism},
          {"num_acknowledged_subtasks", static_cast<int32_t>(acked.size())},
          {"summary",
           {{"checkpointed_size", min_max_avg(checkpointed)},
            {"state_size", min_max_avg(state)},
            {"end_to_end_duration", min_max_avg(e2e)},
            {"checkpoint_duration", {{"sync", min_max_avg(sync)}, {"async", min_max_avg(async)}}},
            {"alignment",
             {{"buffered", min_max_avg(zero)}, {"processed", min_max_avg(zero)}, {"persisted", min_max_avg(persisted)},
              {"duration", min_max_avg(alignment)}}},
            {"start_delay", min_max_avg(start_delay)}}},
          {"subtasks", std::move(subtasks)}};
}

}  // namespace sluice::rest
