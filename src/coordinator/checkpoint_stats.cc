#include "coordinator/checkpoint_stats.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sluice::coordinator {
namespace {

// Nearest rank: the smallest value with at least q of the values at or below it.
int64_t nearest_rank(const std::vector<int64_t>& sorted, double q) {
  const auto n = static_cast<double>(sorted.size());
  auto rank = static_cast<size_t>(std::ceil(q * n));
  if (rank < 1) rank = 1;
  return sorted[rank - 1];
}

}  // namespace

StatsSummary summarize(std::vector<int64_t> values) {
  StatsSummary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = static_cast<int64_t>(values.size());
  s.min = values.front();
  s.max = values.back();
  double sum = 0;
  for (int64_t v : values) sum += static_cast<double>(v);
  s.avg = sum / static_cast<double>(values.size());
  s.p50 = nearest_rank(values, 0.50);
  s.p99 = nearest_rank(values, 0.99);
  return s;
}

void CheckpointStatsTracker::report_triggered(CheckpointId id, checkpoint::SnapshotType type,
                                              int64_t trigger_timestamp_ms, int64_t trigger_monotonic_ms,
                                              int32_t num_tasks) {
  InProgress p;
  p.entry.id = id;
  p.entry.type = type;
  p.entry.trigger_timestamp_ms = trigger_timestamp_ms;
  p.entry.num_tasks = num_tasks;
  p.trigger_monotonic_ms = trigger_monotonic_ms;
  in_progress_[id] = std::move(p);
  ++num_triggered_;
}

void CheckpointStatsTracker::report_acknowledged(CheckpointId id, int32_t vertex, int32_t subtask,
                                                 int64_t now_monotonic_ms, const SubtaskCheckpointStats& stats,
                                                 uint64_t handle_bytes, std::optional<uint64_t> checkpointed_bytes) {
  auto it = in_progress_.find(id);
  if (it == in_progress_.end()) return;
  CheckpointStatsEntry& e = it->second.entry;
  e.subtasks.push_back({vertex, subtask, now_monotonic_ms - it->second.trigger_monotonic_ms, stats});
  e.state_size_bytes += handle_bytes;
  e.checkpointed_size_bytes += checkpointed_bytes.value_or(handle_bytes);
  e.persisted_data_bytes += stats.persisted_data_bytes;
  e.unaligned = e.unaligned || stats.unaligned;
  e.sync_duration_ms = std::max(e.sync_duration_ms, stats.sync_duration_ms);
  e.async_duration_ms = std::max(e.async_duration_ms, stats.async_duration_ms);
  e.alignment_duration_ms = std::max(e.alignment_duration_ms, stats.alignment_duration_ms);
  e.start_delay_ms = std::max(e.start_delay_ms, stats.start_delay_ms);
  ++e.num_acknowledged;
}

void CheckpointStatsTracker::report_completed(CheckpointId id, int64_t now_monotonic_ms, std::string location) {
  auto it = in_progress_.find(id);
  if (it == in_progress_.end()) return;
  InProgress p = std::move(it->second);
  in_progress_.erase(it);
  p.entry.status = CheckpointStatus::kCompleted;
  p.entry.end_to_end_duration_ms = now_monotonic_ms - p.trigger_monotonic_ms;
  p.entry.location = std::move(location);
  ++num_completed_;
  const CheckpointStatsEntry& e = p.entry;
  const int64_t values[kNumFigures] = {e.end_to_end_duration_ms, static_cast<int64_t>(e.state_size_bytes),
                                       static_cast<int64_t>(e.checkpointed_size_bytes), e.sync_duration_ms,
                                       e.async_duration_ms, e.alignment_duration_ms, e.start_delay_ms,
                                       static_cast<int64_t>(e.persisted_data_bytes)};
  for (int f = 0; f < kNumFigures; ++f) {
    window_[f].push_back(values[f]);
    if (window_[f].size() > kSummaryWindow) window_[f].pop_front();
  }
  latest_completed_ = p.entry;
  finish(std::move(p));
}

void CheckpointStatsTracker::report_failed(CheckpointId id, int64_t now_monotonic_ms, CheckpointFailureReason reason,
                                           std::string message) {
  auto it = in_progress_.find(id);
  if (it == in_progress_.end()) return;
  InProgress p = std::move(it->second);
  in_progress_.erase(it);
  p.entry.status = CheckpointStatus::kFailed;
  p.entry.end_to_end_duration_ms = now_monotonic_ms - p.trigger_monotonic_ms;
  p.entry.failure_reason = reason;
  p.entry.failure_message = std::move(message);
  ++num_failed_;
  latest_failed_ = p.entry;
  finish(std::move(p));
}

void CheckpointStatsTracker::report_abandoned(CheckpointId id, int64_t now_monotonic_ms, std::string message) {
  auto it = in_progress_.find(id);
  if (it == in_progress_.end()) return;
  InProgress p = std::move(it->second);
  in_progress_.erase(it);
  p.entry.status = CheckpointStatus::kAbandoned;
  p.entry.end_to_end_duration_ms = now_monotonic_ms - p.trigger_monotonic_ms;
  p.entry.failure_reason = CheckpointFailureReason::kCoordinatorShutdown;
  p.entry.failure_message = std::move(message);
  finish(std::move(p));  // in the history, but neither num_failed nor latest_failed
}

void CheckpointStatsTracker::finish(InProgress&& p) {
  // History is ordered by id, newest first; a late finisher (lower id) goes behind newer ones.
  auto pos = std::find_if(history_.begin(), history_.end(),
                          [&](const CheckpointStatsEntry& e) { return e.id < p.entry.id; });
  history_.insert(pos, std::move(p.entry));
  if (history_.size() > kHistorySize) history_.pop_back();
}

CheckpointStatsSnapshot CheckpointStatsTracker::snapshot(int64_t now_monotonic_ms, int32_t consecutive_failures) const {
  CheckpointStatsSnapshot s;
  s.num_triggered = num_triggered_;
  s.num_in_progress = static_cast<int64_t>(in_progress_.size());
  s.num_completed = num_completed_;
  s.num_failed = num_failed_;
  s.consecutive_failures = consecutive_failures;
  auto summary = [this](Figure f) { return summarize(std::vector<int64_t>(window_[f].begin(), window_[f].end())); };
  s.end_to_end_duration_ms = summary(kDuration);
  s.state_size_bytes = summary(kSize);
  s.checkpointed_size_bytes = summary(kCheckpointed);
  s.sync_duration_ms = summary(kSync);
  s.async_duration_ms = summary(kAsync);
  s.alignment_duration_ms = summary(kAlignment);
  s.start_delay_ms = summary(kStartDelay);
  s.persisted_data_bytes = summary(kPersisted);
  s.latest_completed = latest_completed_;
  s.latest_failed = latest_failed_;
  for (const auto& [id, p] : in_progress_) {
    CheckpointStatsEntry e = p.entry;
    e.end_to_end_duration_ms = now_monotonic_ms - p.trigger_monotonic_ms;
    s.in_progress.push_back(std::move(e));
  }
  s.history.assign(history_.begin(), history_.end());
  return s;
}

}  // namespace sluice::coordinator
