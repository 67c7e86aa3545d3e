#include "coordinator/checkpoint_coordinator.h"

#include <atomic>
#include <exception>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "coordinator/checkpoint_stats_json.h"

namespace sluice::coordinator {

using checkpoint::CheckpointMetadata;
using checkpoint::SnapshotType;

namespace {

constexpr size_t kRecentlyEndedCapacity = 256;

const char* type_name(SnapshotType type) { return type == SnapshotType::kSavepoint ? "savepoint" : "checkpoint"; }

std::string id_str(CheckpointId id) { return std::to_string(id.value()); }

// The shared files the incremental handles of one acknowledgement refer to.
std::vector<std::string> shared_files_of(const std::map<std::string, checkpoint::OperatorSubtaskState>& state) {
  std::vector<std::string> files;
  for (const auto& [op, s] : state) {
    if (!s.incremental_keyed_state) continue;
    for (const auto& f : s.incremental_keyed_state->shared_files) files.push_back(f.file.relative_path);
  }
  return files;
}

}  // namespace

struct CheckpointCoordinator::Action {
  enum class Kind : uint8_t { kTrigger, kWriteMetadata, kCompleted, kAbort, kDiscard, kFailJob };
  Kind kind = Kind::kTrigger;
  CheckpointId id{0};
  SnapshotType type = SnapshotType::kCheckpoint;
  int64_t timestamp_ms = 0;           // kTrigger
  checkpoint::SavepointFormatType savepoint_format = checkpoint::SavepointFormatType::kCanonical;  // kTrigger
  CheckpointMetadata metadata;        // kWriteMetadata, kCompleted
  std::string location;               // kCompleted; kTrigger: the savepoint's folder (trigger_savepoint)
  std::optional<CheckpointStatsEntry> stats;  // kCompleted: persisted next to the _metadata
  CheckpointFailureReason reason = CheckpointFailureReason::kDeclined;  // kAbort
  Status cause;                       // kAbort, kFailJob
};

struct CheckpointCoordinator::Gauges {
  std::atomic<int64_t> in_progress{0}, completed{0}, failed{0}, total{0};
  std::atomic<int64_t> last_duration_ms{0}, last_size_bytes{0}, last_full_size_bytes{0}, last_completed_id{-1};
};

Result<std::unique_ptr<CheckpointCoordinator>> CheckpointCoordinator::create(CheckpointCoordinatorSetup setup) {
  SLUICE_RETURN_IF_ERROR(setup.config.validate());
  if (!setup.storage) return Status::invalid_argument("checkpoint coordinator: expected a checkpoint storage, got none");
  if (setup.target == nullptr) {
    return Status::invalid_argument("checkpoint coordinator: expected a trigger target, got none");
  }
  if (setup.restored_checkpoint_id.value() < 0) {
    return Status::invalid_argument("checkpoint coordinator: restored checkpoint id must be >= 0, got " +
                                    id_str(setup.restored_checkpoint_id));
  }
  if (setup.timer_period.count() <= 0) {
    return Status::invalid_argument("checkpoint coordinator: timer period must be > 0 ms, got " +
                                    std::to_string(setup.timer_period.count()) + " ms");
  }
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<const CheckpointPlan> plan, CheckpointPlan::create(std::move(setup.tasks)));
  if (!setup.clock) setup.clock = SystemClock::shared();
  if (setup.config.min_pause.count() > 0 && setup.config.max_concurrent > 1) {
    spdlog::warn("execution.checkpointing.max-concurrent-checkpoints = {} is ignored: min-pause {} ms means one "
                 "checkpoint at a time",
                 setup.config.max_concurrent, setup.config.min_pause.count());
  }
  std::unique_ptr<CheckpointCoordinator> c(new CheckpointCoordinator(std::move(setup), std::move(plan)));
  c->register_metrics();
  return c;
}

CheckpointCoordinator::CheckpointCoordinator(CheckpointCoordinatorSetup setup,
                                             std::shared_ptr<const CheckpointPlan> plan)
    : config_(setup.config),
      job_id_(setup.job_id),
      lineage_(setup.lineage),
      plan_(std::move(plan)),
      storage_(std::move(setup.storage)),
      target_(setup.target),
      clock_(std::move(setup.clock)),
      on_completed_(std::move(setup.on_completed)),
      on_aborted_(std::move(setup.on_aborted)),
      properties_(std::move(setup.properties)),
      state_backend_(std::move(setup.state_backend)),
      metrics_(setup.metrics),
      timer_period_(setup.timer_period),
      registry_(setup.shared_state_registry ? std::move(setup.shared_state_registry)
                                            : std::make_shared<SharedStateRegistry>()),
      next_id_(setup.restored_checkpoint_id.value() + 1),
      failure_manager_(setup.config.tolerable_failures),
      gauges_(std::make_unique<Gauges>()) {}

CheckpointCoordinator::~CheckpointCoordinator() {
  stop();
  if (metrics_ != nullptr) {
    for (std::string_view name :
         {checkpoint_metric_names::kNumberOfInProgressCheckpoints, checkpoint_metric_names::kNumberOfCompletedCheckpoints,
          checkpoint_metric_names::kNumberOfFailedCheckpoints, checkpoint_metric_names::kTotalNumberOfCheckpoints,
          checkpoint_metric_names::kLastCheckpointDuration, checkpoint_metric_names::kLastCheckpointSize,
          checkpoint_metric_names::kLastCheckpointFullSize, checkpoint_metric_names::kLastCompletedCheckpointId}) {
      metrics_->remove_gauge(name);
    }
  }
}

void CheckpointCoordinator::register_metrics() {
  if (metrics_ == nullptr) return;
  Gauges* g = gauges_.get();
  auto reg = [&](std::string_view name, const std::atomic<int64_t>& v) {
    metrics_->gauge(name, [&v] { return static_cast<double>(v.load(std::memory_order_relaxed)); });
  };
  reg(checkpoint_metric_names::kNumberOfInProgressCheckpoints, g->in_progress);
  reg(checkpoint_metric_names::kNumberOfCompletedCheckpoints, g->completed);
  reg(checkpoint_metric_names::kNumberOfFailedCheckpoints, g->failed);
  reg(checkpoint_metric_names::kTotalNumberOfCheckpoints, g->total);
  reg(checkpoint_metric_names::kLastCheckpointDuration, g->last_duration_ms);
  reg(checkpoint_metric_names::kLastCheckpointSize, g->last_size_bytes);
  reg(checkpoint_metric_names::kLastCheckpointFullSize, g->last_full_size_bytes);
  reg(checkpoint_metric_names::kLastCompletedCheckpointId, g->last_completed_id);
}

void CheckpointCoordinator::update_gauges_locked() {
  if (metrics_ == nullptr) return;
  Gauges& g = *gauges_;
  g.in_progress.store(stats_.num_in_progress(), std::memory_order_relaxed);
  g.completed.store(stats_.num_completed(), std::memory_order_relaxed);
  g.failed.store(stats_.num_failed(), std::memory_order_relaxed);
  g.total.store(stats_.num_triggered(), std::memory_order_relaxed);
  if (const auto& last = stats_.latest_completed()) {
    g.last_duration_ms.store(last->end_to_end_duration_ms, std::memory_order_relaxed);
    g.last_size_bytes.store(static_cast<int64_t>(last->checkpointed_size_bytes), std::memory_order_relaxed);
    g.last_full_size_bytes.store(static_cast<int64_t>(last->state_size_bytes), std::memory_order_relaxed);
    g.last_completed_id.store(last->id.value(), std::memory_order_relaxed);
  }
}

int64_t CheckpointCoordinator::now_mono_ms() const { return clock_->monotonic_ns() / 1'000'000; }

TriggerState CheckpointCoordinator::trigger_state_locked() const {
  TriggerState s;
  s.shut_down = shut_down_;
  s.periodic_scheduling = periodic_scheduling_;
  s.next_periodic_due_ms = next_periodic_due_ms_;
  s.num_pending = static_cast<int32_t>(pending_.size());
  s.last_completion_ms = last_completion_ms_;
  return s;
}

// ---- triggering ----

Result<CheckpointId> CheckpointCoordinator::trigger_savepoint(const std::string& savepoint_dir,
                                                             checkpoint::SavepointFormatType format) {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t now = now_mono_ms();
  const TriggerState state = trigger_state_locked();
  const TriggerDecision decision = decide_trigger(TriggerRequestKind::kSavepoint, state, now, config_);
  if (!decision.trigger()) {
    return Status::failed_precondition("savepoint not triggered: " + describe_wait(decision, state, now, config_));
  }
  const CheckpointId id = start_checkpoint_locked(SnapshotType::kSavepoint, now, savepoint_dir, format).id();
  dispatch_locked(lock);
  return id;
}

Result<CheckpointId> CheckpointCoordinator::trigger_checkpoint(SnapshotType type) {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t now = now_mono_ms();
  const TriggerState state = trigger_state_locked();
  const TriggerRequestKind kind =
      type == SnapshotType::kSavepoint ? TriggerRequestKind::kSavepoint : TriggerRequestKind::kManualCheckpoint;
  const TriggerDecision decision = decide_trigger(kind, state, now, config_);
  if (!decision.trigger()) {
    return Status::failed_precondition(std::string(type_name(type)) + " not triggered: " +
                                       describe_wait(decision, state, now, config_));
  }
  const CheckpointId id = start_checkpoint_locked(type, now).id();
  dispatch_locked(lock);
  return id;
}

PendingCheckpoint& CheckpointCoordinator::start_checkpoint_locked(SnapshotType type, int64_t now_ms,
                                                                  const std::string& savepoint_dir,
                                                                  checkpoint::SavepointFormatType format) {
  const CheckpointId id(next_id_++);
  const int64_t timestamp_ms = clock_->now_ms();
  auto [it, inserted] = pending_.emplace(id, PendingCheckpoint(id, type, timestamp_ms, now_ms, plan_));
  it->second.set_savepoint_format(format);
  registry_->checkpoint_pending(id);
  stats_.report_triggered(id, type, timestamp_ms, now_ms, plan_->num_tasks());
  spdlog::info("Triggering {} {} for job {} ({} tasks to acknowledge)", type_name(type), id.value(),
               job_id_.to_hex(), plan_->num_tasks());
  auto action = std::make_unique<Action>();
  action->kind = Action::Kind::kTrigger;
  action->id = id;
  action->type = type;
  action->timestamp_ms = timestamp_ms;
  action->location = savepoint_dir;
  action->savepoint_format = format;
  actions_.push_back(std::move(action));
  return it->second;
}

void CheckpointCoordinator::tick() {
  std::unique_lock<std::mutex> lock(mu_);
  tick_locked();
  dispatch_locked(lock);
}

void CheckpointCoordinator::tick_locked() {
  const int64_t now = now_mono_ms();
  std::vector<CheckpointId> expired;
  for (const auto& [id, p] : pending_) {
    if (!p.is_finalizing() && is_expired(p.trigger_monotonic_ms(), now, config_)) expired.push_back(id);
  }
  ActionList out;
  for (CheckpointId id : expired) {
    const PendingCheckpoint& p = pending_.at(id);
    Status cause = Status::timeout(std::string(type_name(p.type())) + " " + id_str(id) + " expired after " +
                                   std::to_string(now - p.trigger_monotonic_ms()) + " ms (execution.checkpointing." +
                                   "timeout is " + std::to_string(config_.timeout.count()) + " ms) with " +
                                   std::to_string(p.num_acknowledged()) + " of " + std::to_string(p.num_tasks()) +
                                   " tasks acknowledged");
    abort_locked(id, CheckpointFailureReason::kTimeout, cause, out);
  }
  enqueue_back_locked(std::move(out));
  if (periodic_scheduling_ &&
      decide_trigger(TriggerRequestKind::kPeriodic, trigger_state_locked(), now, config_).trigger()) {
    start_checkpoint_locked(SnapshotType::kCheckpoint, now);
    next_periodic_due_ms_ = now + config_.interval.count();
  }
}

void CheckpointCoordinator::start_periodic_scheduling() {
  std::lock_guard<std::mutex> lock(mu_);
  if (periodic_scheduling_ || shut_down_ || !config_.periodic()) return;
  periodic_scheduling_ = true;
  next_periodic_due_ms_ = now_mono_ms() + config_.interval.count();
}

void CheckpointCoordinator::stop_periodic_scheduling() {
  std::lock_guard<std::mutex> lock(mu_);
  periodic_scheduling_ = false;
}

// ---- acknowledgements and declines ----

MessageOutcome CheckpointCoordinator::acknowledge(CheckpointId id, JobVertexId vertex_id, SubtaskIndex subtask_index,
                                                  std::map<std::string, checkpoint::OperatorSubtaskState> state,
                                                  const SubtaskCheckpointStats& stats) {
  const int32_t vertex = vertex_id.value();
  const int32_t subtask = subtask_index.value();
  std::unique_lock<std::mutex> lock(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    if (id.value() >= next_id_) {
      spdlog::warn("Ignoring acknowledgement of checkpoint {} (never triggered) from task (vertex {}, subtask {})",
                   id.value(), vertex, subtask);
      return MessageOutcome::kUnknownCheckpoint;
    }
    // The task may have written files after the abort discarded the checkpoint: discard again.
    discard_again_if_aborted_locked(id, lock);
    spdlog::debug("Ignoring late acknowledgement of checkpoint {} from task (vertex {}, subtask {})", id.value(),
                  vertex, subtask);
    return MessageOutcome::kCheckpointEnded;
  }
  PendingCheckpoint& p = it->second;
  uint64_t handle_bytes = 0, checkpointed_bytes = 0;
  for (const auto& [op, s] : state) {
    handle_bytes += state_handle_bytes(s);
    checkpointed_bytes += checkpointed_handle_bytes(s);
  }
  // A savepoint's files are its own (a native one keeps its RocksDB files in its folder): nothing to count.
  const std::vector<std::string> shared_files =
      it->second.type() == SnapshotType::kCheckpoint ? shared_files_of(state) : std::vector<std::string>{};
  std::string error;
  switch (p.acknowledge(vertex_id, subtask_index, state, &error)) {
    case PendingCheckpoint::AckResult::kUnknownTask:
      spdlog::warn("Ignoring acknowledgement of checkpoint {} from task (vertex {}, subtask {}), which is not part "
                   "of the checkpoint",
                   id.value(), vertex, subtask);
      return MessageOutcome::kUnknownTask;
    case PendingCheckpoint::AckResult::kDuplicate:
      spdlog::debug("Ignoring duplicate acknowledgement of checkpoint {} from task (vertex {}, subtask {})",
                    id.value(), vertex, subtask);
      return MessageOutcome::kDuplicate;
    case PendingCheckpoint::AckResult::kUnexpectedOperator: {
      ActionList out;
      abort_locked(id, CheckpointFailureReason::kDeclined, Status::internal(error), out);
      enqueue_back_locked(std::move(out));
      dispatch_locked(lock);
      return MessageOutcome::kRejected;
    }
    case PendingCheckpoint::AckResult::kAccepted:
      break;
  }
  stats_.report_acknowledged(id, vertex, subtask, now_mono_ms(), stats, handle_bytes, checkpointed_bytes);
  spdlog::debug("{} {} acknowledged by task (vertex {}, subtask {}): {} bytes of state{}", type_name(p.type()),
                id.value(), vertex, subtask, handle_bytes, p.is_complete() ? "; every task acknowledged" : "");
  registry_->register_files(id, shared_files);
  if (p.is_complete()) {
    auto action = std::make_unique<Action>();
    action->kind = Action::Kind::kWriteMetadata;
    action->id = id;
    action->type = p.type();
    action->metadata = p.finalize(job_id_, properties_);
    action->metadata.lineage = lineage_;
    action->metadata.state_backend = state_backend_;
    actions_.push_back(std::move(action));
  }
  dispatch_locked(lock);
  return MessageOutcome::kAccepted;
}

MessageOutcome CheckpointCoordinator::decline(CheckpointId id, JobVertexId vertex_id, SubtaskIndex subtask_index,
                                              const Status& reason, CheckpointFailureReason kind) {
  const int32_t vertex = vertex_id.value();
  const int32_t subtask = subtask_index.value();
  std::unique_lock<std::mutex> lock(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    spdlog::debug("Ignoring decline of checkpoint {} from task (vertex {}, subtask {}): {}", id.value(), vertex,
                  subtask, reason.to_string());
    if (id.value() >= next_id_) return MessageOutcome::kUnknownCheckpoint;
    // As for a late acknowledgement: the task may have written files after the abort discarded the checkpoint
    // (its snapshot started afterwards and failed part-way).
    discard_again_if_aborted_locked(id, lock);
    return MessageOutcome::kCheckpointEnded;
  }
  if (plan_->task_index(vertex, subtask) < 0) {
    spdlog::warn("Ignoring decline of checkpoint {} from task (vertex {}, subtask {}), which is not part of it",
                 id.value(), vertex, subtask);
    return MessageOutcome::kUnknownTask;
  }
  if (it->second.is_finalizing()) return MessageOutcome::kCheckpointFinalizing;
  ActionList out;
  abort_locked(id, kind,
               reason.with_context(std::string(type_name(it->second.type())) + " " + id_str(id) +
                                   " declined by task (vertex " + std::to_string(vertex) + ", subtask index " +
                                   std::to_string(subtask) + ")"),
               out);
  enqueue_back_locked(std::move(out));
  dispatch_locked(lock);
  return MessageOutcome::kAccepted;
}

// ---- completion and abort ----

void CheckpointCoordinator::on_metadata_written(CheckpointId id, Result<std::string> location,
                                                CheckpointMetadata metadata) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end()) {
    // Aborted while its metadata was written (abort_pending / shutdown): the queued abort discards it.
    spdlog::info("Checkpoint {} was aborted while its metadata was written; it will be discarded", id.value());
    return;
  }
  ActionList front;
  if (!location.is_ok()) {
    abort_locked(id, CheckpointFailureReason::kStorageFailure,
                 location.status().with_context("writing the metadata of " + std::string(type_name(it->second.type())) +
                                                " " + id_str(id)),
                 front);
  } else {
    const SnapshotType type = it->second.type();
    const int64_t now = now_mono_ms();
    pending_.erase(it);
    remember_ended_locked(id, Outcome::kCompleted);
    stats_.report_completed(id, now, location.value());
    failure_manager_.on_success(id);
    last_completion_ms_ = now;
    if (const auto& entry = stats_.latest_completed()) {
      spdlog::info("Completed {} {} for job {} ({} bytes in {} ms) at {}", type_name(type), id.value(),
                   job_id_.to_hex(), entry->state_size_bytes, entry->end_to_end_duration_ms, location.value());
    }
    auto done = std::make_unique<Action>();
    done->kind = Action::Kind::kCompleted;
    done->id = id;
    done->type = type;
    done->metadata = std::move(metadata);
    done->location = std::move(location).value();
    done->stats = stats_.latest_completed();  // the entry report_completed just made
    front.push_back(std::move(done));
    std::vector<PendingView> views;
    for (const auto& [pid, p] : pending_) views.push_back({pid, p.type()});
    for (CheckpointId old : subsumed_by(id, type, views)) {
      abort_locked(old, CheckpointFailureReason::kSubsumed,
                   Status::cancelled("checkpoint " + id_str(old) + " was subsumed by completed checkpoint " + id_str(id)),
                   front);
    }
  }
  // Follow-ups run right after this action, before anything queued meanwhile.
  for (auto rit = front.rbegin(); rit != front.rend(); ++rit) actions_.push_front(std::move(*rit));
  update_gauges_locked();
}

void CheckpointCoordinator::abort_locked(CheckpointId id, CheckpointFailureReason reason, const Status& cause,
                                         ActionList& out) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  const SnapshotType type = it->second.type();
  pending_.erase(it);
  remember_ended_locked(id, Outcome::kAborted);
  const bool abandoned = reason == CheckpointFailureReason::kCoordinatorShutdown && job_finished_;
  if (abandoned) {
    stats_.report_abandoned(id, now_mono_ms(), cause.to_string());
  } else {
    stats_.report_failed(id, now_mono_ms(), reason, cause.to_string());
  }
  const bool fail_job = failure_manager_.on_failure(id, type, reason);
  if (abandoned) {
    spdlog::info("{} {} of job {} dropped: the job finished", type_name(type), id.value(), job_id_.to_hex());
  } else if (reason == CheckpointFailureReason::kSubsumed) {
    spdlog::info("Checkpoint {} of job {} subsumed: {}", id.value(), job_id_.to_hex(), cause.message());
  } else {
    // Which failures count: CheckpointFailureManager (Flink's rules); a task failure's aborts do not.
    const int32_t tolerable = failure_manager_.tolerable_failures();
    std::string count_note;
    if (fail_job) {
      count_note = fmt::format("{} consecutive failures, more than execution.checkpointing.tolerable-failed-checkpoints "
                               "= {}: the job fails",
                               tolerable + 1, tolerable);
    } else if (!counts_against_tolerable(reason)) {
      count_note = "not counted against execution.checkpointing.tolerable-failed-checkpoints";
    } else {
      count_note = fmt::format("{} consecutive counted failures, {} tolerated",
                               failure_manager_.consecutive_failures(), tolerable);
    }
    spdlog::warn("{} {} of job {} failed ({}): {} ({})", type_name(type), id.value(), job_id_.to_hex(),
                 failure_reason_name(reason), cause.to_string(), count_note);
  }
  auto abort = std::make_unique<Action>();
  abort->kind = Action::Kind::kAbort;
  abort->id = id;
  abort->type = type;
  abort->reason = reason;
  abort->cause = cause;
  out.push_back(std::move(abort));
  if (fail_job) {
    auto fail = std::make_unique<Action>();
    fail->kind = Action::Kind::kFailJob;
    fail->id = id;
    fail->cause = Status(cause.is_ok() ? StatusCode::kInternal : cause.code(),
                         "exceeded execution.checkpointing.tolerable-failed-checkpoints (" +
                             std::to_string(failure_manager_.tolerable_failures()) + "); the last failure: " +
                             type_name(type) + " " + id_str(id) + " (" + std::string(failure_reason_name(reason)) +
                             "): " + cause.message(),
                         /*retriable=*/true);
    out.push_back(std::move(fail));
  }
}

void CheckpointCoordinator::discard_again_if_aborted_locked(CheckpointId id, std::unique_lock<std::mutex>& lock) {
  auto ended = recently_ended_.find(id);
  if (ended == recently_ended_.end() || ended->second != Outcome::kAborted) return;
  auto action = std::make_unique<Action>();
  action->kind = Action::Kind::kDiscard;
  action->id = id;
  actions_.push_back(std::move(action));
  dispatch_locked(lock);
}

void CheckpointCoordinator::remember_ended_locked(CheckpointId id, Outcome outcome) {
  recently_ended_[id] = outcome;
  while (recently_ended_.size() > kRecentlyEndedCapacity) recently_ended_.erase(recently_ended_.begin());
}

void CheckpointCoordinator::enqueue_back_locked(ActionList&& actions) {
  for (auto& a : actions) actions_.push_back(std::move(a));
  actions.clear();
}

void CheckpointCoordinator::abort_pending(CheckpointFailureReason reason, const Status& cause) {
  std::unique_lock<std::mutex> lock(mu_);
  ActionList out;
  std::vector<CheckpointId> ids;
  for (const auto& [id, p] : pending_) ids.push_back(id);
  for (CheckpointId id : ids) abort_locked(id, reason, cause, out);
  enqueue_back_locked(std::move(out));
  dispatch_locked(lock);
}

void CheckpointCoordinator::shutdown(const Status& cause, bool job_finished) {
  stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    shut_down_ = true;
    job_finished_ = job_finished;
  }
  abort_pending(CheckpointFailureReason::kCoordinatorShutdown, cause);
}

// ---- reads ----

CheckpointStatsSnapshot CheckpointCoordinator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_.snapshot(now_mono_ms(), failure_manager_.consecutive_failures());
}

int32_t CheckpointCoordinator::num_pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int32_t>(pending_.size());
}

CheckpointId CheckpointCoordinator::next_checkpoint_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return CheckpointId(next_id_);
}

// ---- running actions ----

void CheckpointCoordinator::dispatch_locked(std::unique_lock<std::mutex>& lock) {
  update_gauges_locked();
  if (actions_.empty()) return;
  if (thread_running_) {
    cv_.notify_all();
    return;
  }
  drain_locked(lock);
}

void CheckpointCoordinator::drain_locked(std::unique_lock<std::mutex>& lock) {
  if (draining_) return;  // the thread already running actions runs ours too
  draining_ = true;
  while (!actions_.empty()) {
    std::unique_ptr<Action> action = std::move(actions_.front());
    actions_.pop_front();
    lock.unlock();
    try {
      run_action(*action);
    } catch (const std::exception& e) {  // a target or callback threw: log, keep the coordinator alive
      spdlog::error("checkpoint coordinator: action for checkpoint {} threw: {}", action->id.value(), e.what());
    }
    lock.lock();
  }
  draining_ = false;
}

void CheckpointCoordinator::run_action(Action& a) {
  switch (a.kind) {
    case Action::Kind::kTrigger: {
      if (!a.location.empty()) {
        Status routed = storage_->begin_savepoint(a.id, a.location);
        if (!routed.is_ok()) {
          std::unique_lock<std::mutex> lock(mu_);
          ActionList out;
          if (pending_.count(a.id)) abort_locked(a.id, CheckpointFailureReason::kStorageFailure, routed, out);
          enqueue_back_locked(std::move(out));
          break;
        }
      }
      target_->trigger_checkpoint(a.id, a.timestamp_ms, a.type, a.savepoint_format, a.location);
      break;
    }
    case Action::Kind::kWriteMetadata: {
      {
        // Aborted (subsumed, job failover, shutdown) while queued: write nothing. An abort during the write
        // is handled in on_metadata_written.
        std::lock_guard<std::mutex> lock(mu_);
        if (pending_.count(a.id) == 0) break;
      }
      Result<std::string> location = storage_->write_metadata(a.metadata);
      on_metadata_written(a.id, std::move(location), std::move(a.metadata));
      break;
    }
    case Action::Kind::kCompleted:
      if (a.stats && a.stats->id == a.id) {
        // Best effort, after the _metadata is durable and before retention may delete the folder.
        const std::string text = to_json(*a.stats).dump(2) + "\n";
        Status written = storage_->write_side_file(a.location, kCheckpointStatsFileName,
                                                   std::vector<uint8_t>(text.begin(), text.end()));
        if (!written.is_ok()) spdlog::warn("Could not persist the statistics of checkpoint {}: {}", a.id.value(), written.to_string());
      }
      if (on_completed_) on_completed_(a.metadata, a.location);
      discard_shared_files(registry_->checkpoint_ended(a.id, /*completed=*/true));
      if (a.type == SnapshotType::kCheckpoint) target_->notify_checkpoint_complete(a.id);
      break;
    case Action::Kind::kAbort: {
      Status discarded = storage_->discard(a.id);
      if (!discarded.is_ok()) {
        spdlog::warn("Could not discard aborted checkpoint {}: {}", a.id.value(), discarded.to_string());
      }
      discard_shared_files(registry_->checkpoint_ended(a.id, /*completed=*/false));
      target_->notify_checkpoint_aborted(a.id);
      if (on_aborted_) on_aborted_(a.id, a.reason, a.cause);
      break;
    }
    case Action::Kind::kDiscard: {
      Status discarded = storage_->discard(a.id);
      if (!discarded.is_ok()) {
        spdlog::warn("Could not discard aborted checkpoint {}: {}", a.id.value(), discarded.to_string());
      }
      break;
    }
    case Action::Kind::kFailJob:
      spdlog::error("Failing the job: {}", a.cause.to_string());
      target_->fail_job(a.cause);
      break;
  }
}

void CheckpointCoordinator::discard_shared_files(const std::vector<std::string>& files) {
  if (files.empty()) return;
  Status st = storage_->discard_shared_files(files);
  if (!st.is_ok()) spdlog::warn("Could not delete {} unreferenced shared state files: {}", files.size(), st.to_string());
}

// ---- the timer thread ----

void CheckpointCoordinator::start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (std::this_thread::get_id() == timer_thread_id_) {
      // Called from an action on the running timer thread: only (re)arm the periodic scheduler.
      if (!shut_down_ && !periodic_scheduling_ && config_.periodic()) {
        periodic_scheduling_ = true;
        next_periodic_due_ms_ = now_mono_ms() + config_.interval.count();
      }
      return;
    }
  }
  std::lock_guard<std::mutex> handle(thread_handle_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;
    if (!periodic_scheduling_ && config_.periodic()) {
      periodic_scheduling_ = true;
      next_periodic_due_ms_ = now_mono_ms() + config_.interval.count();
    }
    if (thread_running_ && !thread_stop_requested_) return;
  }
  if (thread_.joinable()) thread_.join();  // a thread that was asked to stop from inside one of its actions
  {
    std::lock_guard<std::mutex> lock(mu_);
    thread_stop_requested_ = false;
    thread_running_ = true;
  }
  thread_ = std::thread([this] { timer_loop(); });
}

void CheckpointCoordinator::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    periodic_scheduling_ = false;
    if (std::this_thread::get_id() == timer_thread_id_) {
      // Called from an action on the timer thread: it cannot join itself. It exits after its current drain.
      thread_stop_requested_ = true;
      return;
    }
  }
  std::lock_guard<std::mutex> handle(thread_handle_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    thread_stop_requested_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CheckpointCoordinator::timer_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  timer_thread_id_ = std::this_thread::get_id();
  while (true) {
    drain_locked(lock);
    // Leave only with nothing queued (or with another thread draining, which empties the queue itself).
    if (thread_stop_requested_ && (actions_.empty() || draining_)) break;
    tick_locked();
    update_gauges_locked();
    if (!actions_.empty() && !draining_) continue;
    cv_.wait_for(lock, timer_period_,
                 [this] { return thread_stop_requested_ || (!actions_.empty() && !draining_); });
  }
  thread_running_ = false;
  timer_thread_id_ = std::thread::id();
}

}  // namespace sluice::coordinator
