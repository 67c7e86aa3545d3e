#include "cluster/job_master.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "checkpoint/savepoint_files.h"
#include "cluster/attempt_network.h"
#include "cluster/channel_state_assignment.h"
#include "cluster/generated_id_check.h"
#include "cluster/injectable_tasks.h"
#include "cluster/job_checkpoints.h"
#include "cluster/job_status_metrics.h"
#include "cluster/job_tasks.h"
#include "cluster/state_assignment.h"
#include "cluster/stop_with_savepoint.h"
#include "cluster/task_deployer.h"
#include "coordinator/checkpoint_coordinator.h"
#include "coordinator/job_lifecycle.h"
#include "core/log_context.h"
#include "graph/pipelined_regions.h"
#include "runtime/stream_task.h"
#include "sluice/metrics/metric_registry.h"
#include "sluice/operators/source_operator.h"

namespace sluice::cluster {
namespace {

// A restored run descends from the run that took the snapshot and from that run's lineage (newest first).
std::vector<JobId> restored_lineage(const std::optional<RestoreFrom>& restore, const JobId& self) {
  std::vector<JobId> lineage;
  if (!restore) return lineage;
  auto add = [&](const JobId& id) {
    if (id != self && std::find(lineage.begin(), lineage.end(), id) == lineage.end()) lineage.push_back(id);
  };
  add(restore->metadata.job_id);
  for (const JobId& id : restore->metadata.lineage) add(id);
  return lineage;
}

class JobMaster final : public CheckpointingJobClient,
                       public JobPlacementView,
                       public runtime::TaskListener,
                       public coordinator::CheckpointTriggerTarget,
                       public StopWithSavepoint::Tasks {
 public:
  JobMaster(std::shared_ptr<const StreamGraph> sg, graph::JobGraph jg, MiniClusterConfig cfg,
            std::vector<std::unique_ptr<HeldClaim>> claims, TaskDeployerFactory deployers)
      : deployers_(std::move(deployers)), sg_(std::move(sg)), jg_(std::move(jg)), cfg_(std::move(cfg)), names_(name_source_or_random(cfg_.names)),
        job_id_(cfg_.job_id ? *cfg_.job_id : names_->job_id()),
        lineage_(restored_lineage(cfg_.restore, job_id_)), claims_(std::move(claims)),
        eg_(graph::build_execution_graph(jg_)), savepoints_(names_),
        lifecycle_(job_id_, jg_.job_name, cfg_.clock ? cfg_.clock : SystemClock::shared()) {
    complete_task_settings(cfg_, names_);
    injector_ = std::make_unique<runtime::FaultInjector>(injectable_tasks(*sg_, jg_, cfg_.checkpointing));
  }

  ~JobMaster() override {
    cancel();
    if (control_.joinable()) control_.join();
    // First of the members: a deployer may still report into this JobMaster from its own threads (a TaskManager's
    // loss) until it is gone, and those reports use the members below.
    tasks_.stop_all();
    deployer_.reset();
  }

  Status init() {
    job_metrics_ = &registry_.add_job_group(jg_.job_name.empty() ? "job" : jg_.job_name);
    status_metrics_ = std::make_unique<JobStatusMetrics>(job_metrics_, cfg_.clock.get());
    if (!cfg_.has_coordinator()) return Status::ok();
    if (!cfg_.storage) return Status::invalid_argument("the job has a checkpoint coordinator but no checkpoint storage");
    // Without periodic checkpoints the storage serves savepoints only: no checkpoint folder of this job exists.
    SLUICE_RETURN_IF_ERROR((cfg_.checkpointing ? cfg_.storage->initialize(job_id_)
                                               : cfg_.storage->initialize_for_savepoints(job_id_))
                               .with_context("initializing checkpoint storage " + cfg_.storage->describe()));
    checkpoints_ = std::make_unique<JobCheckpoints>(jg_.job_name, cfg_.storage, cfg_.num_retained, cfg_.retention);
    SLUICE_ASSIGN_OR_RETURN(restart_, create_restart_strategy(cfg_.restart, cfg_.jitter_seed));

    std::vector<std::string> all_ids;
    std::vector<std::string> generated_ids;  // operators without a uid
    coordinator::CheckpointCoordinatorSetup setup;
    setup.config = cfg_.checkpoint_config;
    if (!cfg_.checkpointing) setup.config.interval = std::chrono::milliseconds(0);  // nothing periodic
    setup.job_id = job_id_;
    setup.lineage = lineage_;
    setup.storage = cfg_.storage;
    setup.target = this;
    setup.clock = cfg_.clock;
    setup.properties = cfg_.properties;
    if (auto kind = parse_state_backend_type(cfg_.state_backend_type); kind.is_ok()) {
      setup.state_backend = std::string(state_backend_kind_name(*kind));
    }
    setup.metrics = job_metrics_;
    for (const auto& ev : eg_.subtasks) {
      const auto& v = jg_.vertices[static_cast<size_t>(ev.vertex)];
      coordinator::TaskToAck t{v.id, ev.subtask_index, {}};
      for (int32_t node_id : v.nodes) {
        const StreamNode& n = sg_->node(node_id);
        t.operators.push_back(
            {graph::operator_id(n), n.name, v.parallelism, jg_.max_parallelism, graph_position(*sg_, node_id)});
        if (ev.subtask_index == 0) all_ids.push_back(graph::operator_id(n));
        if (ev.subtask_index == 0 && n.uid.empty()) generated_ids.push_back("'" + n.name + "' as " + graph::operator_id(n));
      }
      setup.tasks.push_back(std::move(t));
    }
    if (!generated_ids.empty()) {
      // Flink's advice: a generated id follows the operator's position, so a changed program cannot restore the
      // state of these operators from a savepoint (or checkpoint) of this one.
      std::string list;
      for (const std::string& g : generated_ids) list += (list.empty() ? "" : ", ") + g;
      spdlog::warn("job {}: {} operator(s) without a uid get a generated id, which changes when the program changes "
                   "(their state then no longer restores): {}; set .uid(\"...\") on every stateful operator",
                   jg_.job_name, generated_ids.size(), list);
    }
    if (cfg_.incremental_checkpoints && !cfg_.storage->supports_incremental()) {
      spdlog::warn("incremental checkpoints are off: checkpoint storage {} cannot hold shared files",
                   cfg_.storage->describe());
      cfg_.incremental_checkpoints = false;
    }
    if (cfg_.checkpointing && !cfg_.checkpoints_after_tasks_finish) {
      // Documented Flink behaviour, but it silently drops the tail of a bounded job's output: say so once.
      spdlog::warn("execution.checkpointing.checkpoints-after-tasks-finish is false: once a task finishes no "
                   "checkpoint completes, so what sinks wrote after the last completed checkpoint is never "
                   "committed (exactly-once sinks drop the tail of a bounded input)");
    }
    setup.shared_state_registry = checkpoints_->shared_state_registry();
    if (cfg_.restore) {
      SLUICE_RETURN_IF_ERROR(check_restored_state_matched(all_ids));
      SLUICE_RETURN_IF_ERROR(check_generated_id_positions(cfg_.restore->metadata, cfg_.restore->location, *sg_,
                                                          cfg_.restore->ignore_generated_id_changes));
      SLUICE_RETURN_IF_ERROR(
          check_restore_backend(cfg_.restore->metadata, cfg_.restore->location, cfg_.state_backend_type));
      std::vector<std::string> heads;
      for (const auto& v : jg_.vertices) heads.push_back(graph::operator_id(sg_->node(v.head_node)));
      SLUICE_RETURN_IF_ERROR(check_channel_state_heads(cfg_.restore->metadata, heads));
      // Damaged checkpoint files fail the submission here (a stat per file) instead of failing every restore.
      if (cfg_.storage) {
        SLUICE_RETURN_IF_ERROR(cfg_.storage
                                   ->check_restore_files(cfg_.restore->location, cfg_.restore->metadata,
                                                         checkpoint::RestoreFileCheck::kSizes)
                                   .with_context("restoring " + cfg_.restore->location));
      }
      setup.restored_checkpoint_id = cfg_.restore->metadata.checkpoint_id;
      // A savepoint belongs to the user: never claimed, so never deleted by this job. Without periodic checkpoints
      // nothing would ever subsume a claimed checkpoint either: it stays the user's (NO_CLAIM).
      const bool claim = cfg_.restore->claim && cfg_.restore->metadata.type != checkpoint::SnapshotType::kSavepoint &&
                         cfg_.checkpointing;
      spdlog::info("job {} ({}): restoring checkpoint {} from {} (execution.state-recovery.path, {}); checkpoint "
                   "ids continue at {}", jg_.job_name, job_id_.to_hex(), cfg_.restore->metadata.checkpoint_id.value(),
                   cfg_.restore->location, claim ? "CLAIM" : "NO_CLAIM", cfg_.restore->metadata.checkpoint_id.value() + 1);
      SLUICE_ASSIGN_OR_RETURN(restore_point_,
                              checkpoints_->add_restored(cfg_.restore->metadata, cfg_.restore->location, claim));
    }
    setup.on_completed = [this](const checkpoint::CheckpointMetadata& md, const std::string& location) {
      if (md.type == checkpoint::SnapshotType::kSavepoint) {
        // Never used for failover and never deleted: not in the completed checkpoint store.
        spdlog::info("job {}: savepoint {} completed at {}", jg_.job_name, md.checkpoint_id.value(), location);
        savepoints_.savepoint_completed(md.checkpoint_id, location);
        Event e = Event::of(Event::Kind::kSavepointComplete);
        e.id = md.checkpoint_id;
        post(std::move(e));
        return;
      }
      checkpoints_->on_checkpoint_completed(md, location);
    };
    setup.on_aborted = [this](CheckpointId id, coordinator::CheckpointFailureReason, const Status& cause) {
      savepoints_.savepoint_aborted(id, cause);  // ignored unless a savepoint request waits for `id`
      Event e = Event::of(Event::Kind::kSavepointAborted);
      e.id = id;
      e.cause = cause;
      post(std::move(e));
    };
    SLUICE_ASSIGN_OR_RETURN(coordinator_, coordinator::CheckpointCoordinator::create(std::move(setup)));
    checkpoints_->bind_coordinator(coordinator_.get());
    stop_ = std::make_unique<StopWithSavepoint>(jg_.job_name, *coordinator_, savepoints_, *this,
                                                cfg_.storage.get());
    return Status::ok();
  }

  // State of operators (by uid) the job does not have: fails the submission with the list of them, or with
  // allow_non_restored_state is dropped and reported (Flink's --allowNonRestoredState).
  Status check_restored_state_matched(const std::vector<std::string>& job_operator_ids) {
    std::vector<UnmatchedOperatorState> unmatched = unmatched_operator_state(cfg_.restore->metadata, job_operator_ids);
    if (unmatched.empty()) return Status::ok();
    if (!cfg_.restore->allow_non_restored_state) {
      return Status::invalid_argument(describe_unmatched_state(cfg_.restore->metadata, cfg_.restore->location, unmatched) +
                                      "; give those operators their old uid, or restore with "
                                      "--allow-non-restored-state (execution.state-recovery.ignore-unclaimed-state) "
                                      "to drop their state");
    }
    for (const UnmatchedOperatorState& u : unmatched) {
      spdlog::warn("job {}: --allow-non-restored-state: dropping the state of operator '{}' (uid {}) from {}: {}",
                   jg_.job_name, u.operator_name, u.operator_id, cfg_.restore->location, u.describe());
    }
    dropped_state_ = std::move(unmatched);
    return Status::ok();
  }

  Status start() {
    JobTaskContext context;
    context.stream_graph = sg_.get();
    context.job_graph = &jg_;
    context.config = &cfg_;
    context.listener = this;
    context.checkpoint_responder = checkpoints_.get();
    context.fault_injector = injector_.get();
    context.job_metrics = job_metrics_;
    context.job_id = job_id_.to_hex();
    for (const JobId& id : lineage_) context.lineage_job_ids.push_back(id.to_hex());
    deployer_ = deployers_(std::move(context));
    tasks_.bind(deployer_.get());
    // RUNNING while the tasks are scheduled, as in Flink. The first deployment, which in cluster mode waits for
    // TaskManagers' slots, is the control thread's first step: the caller gets the client at once, so a cancel, a
    // signal and the REST endpoint reach the job while it waits.
    SLUICE_RETURN_IF_ERROR(lifecycle_.start());
    status_metrics_->on_status(JobStatus::kRunning);
    control_ = std::thread([this] {
      log::ScopedLogContext log_context(job_id_.to_hex(), "");  // the job's id on the control thread's lines
      if (first_deployment()) control_loop();
    });
    return Status::ok();
  }

  // Deploys the first attempt. One that fails is a failure of the job and goes through the restart strategy, as
  // Flink treats a first scheduling that finds no slots or a restore that fails; a cancel that interrupted it
  // cancels the job. False when the job reached a terminal state.
  bool first_deployment() {
    const Status deployed = deploy_attempt();
    if (deployed.is_ok()) {
      if (coordinator_) coordinator_->start();
    } else if (cancel_requested()) {
      finish_job(JobStatus::kCanceled, Status::ok());
      return false;
    } else if (!handle_failure(deployed.with_context("deploying the job's tasks"))) {
      return false;
    }
    std::lock_guard trigger(trigger_mu_);
    deployed_ = true;
    return true;
  }

  // Why a user's checkpoint or savepoint (`what`) cannot be triggered now; ok when it can. Called with trigger_mu_
  // held, so a failover cannot start between the check and the trigger: a snapshot triggered is either refused
  // or pending when the failover aborts the pending ones (an orphan would block max-concurrent-checkpoints until
  // its timeout).
  Status trigger_refusal(const std::string& what) const {
    const JobStatus st = status();
    const std::string of = what + " of job " + job_id_.to_hex();
    if (st != JobStatus::kRunning) {
      return Status::failed_precondition(of + ": the job is " + job_status_name(st) + ", not RUNNING");
    }
    // Flink refuses with "not all required tasks are currently running" as well.
    if (!deployed_) return Status::failed_precondition(of + ": the job's tasks are being deployed");
    if (region_restarting_) return Status::failed_precondition(of + ": a pipelined region of the job is restarting");
    return Status::ok();
  }

  // A submission refused after the checkpoint storage made the job's folder: the folder goes if it is empty.
  void discard_empty_job_folder() {
    if (checkpoints_) checkpoints_->remove_job_folder_if_empty();
  }

  // ---- JobClient ----
  JobId job_id() const override { return job_id_; }
  JobStatus status() const override { return lifecycle_.status(); }
  // A deployment waiting for slots holds the control thread: it is interrupted, so the cancel takes effect at once
  // (Flink cancels a job whose tasks wait for slots without waiting for slot.request.timeout).
  void cancel() override {
    post(Event::of(Event::Kind::kCancel));
    if (deployer_) deployer_->interrupt_deploy();
  }
  JobExecutionResult wait() override { return lifecycle_.wait(); }
  const MetricRegistry& metrics() const override { return registry_; }
  coordinator::CheckpointStatsSnapshot checkpoint_stats() const override {
    return coordinator_ ? coordinator_->stats() : coordinator::CheckpointStatsSnapshot{};
  }
  int32_t restarts() const override {
    std::lock_guard lock(mu_);
    return attempt_;
  }
  std::vector<std::pair<int64_t, int64_t>> recoveries() const override {
    std::lock_guard lock(mu_);
    return recoveries_;
  }
  std::vector<JobException> exception_history() const override { return exceptions_.entries(); }
  int64_t num_exceptions() const override { return exceptions_.total(); }
  std::optional<std::pair<int64_t, std::string>> initial_restore() const override {
    if (!cfg_.restore) return std::nullopt;
    return std::make_pair(cfg_.restore->metadata.checkpoint_id.value(), cfg_.restore->location);
  }
  Status arm_failure(runtime::FailurePoint point, int32_t vertex, int32_t subtask, const std::string& cause,
                     int64_t from_checkpoint_id = 0) override {
    SLUICE_RETURN_IF_ERROR(injector_->arm(point, vertex, subtask, cause, from_checkpoint_id));
    // Wake the tasks, so an idle one reaches its next mailbox turn now.
    tasks_.with_tasks([](DeployedTasks& tasks) { tasks.wake(); });
    return Status::ok();
  }
  std::vector<runtime::InjectedFailure> injected_failures() const override { return injector_->injected(); }
  std::vector<UnmatchedOperatorState> dropped_state() const override { return dropped_state_; }

  // ---- JobPlacementView (any thread; the deployer is set before the client is handed out) ----
  std::vector<TaskManagerInfo> task_managers() const override { return deployer_->task_managers(); }
  std::vector<SubtaskLocation> subtask_locations() const override { return tasks_.locations(); }

  Result<CheckpointId> trigger_checkpoint() override {
    if (!cfg_.checkpointing) {
      return Status::failed_precondition("checkpoint of job " + job_id_.to_hex() + ": checkpointing is off (" +
                                         "execution.checkpointing.interval is 0; savepoints can still be taken)");
    }
    std::lock_guard trigger(trigger_mu_);
    SLUICE_RETURN_IF_ERROR(trigger_refusal("checkpoint"));
    return coordinator_->trigger_checkpoint(checkpoint::SnapshotType::kCheckpoint);
  }

  // ---- savepoints ----
  Result<std::string> trigger_savepoint(const std::string& target_dir, checkpoint::SavepointFormatType format) override {
    SLUICE_ASSIGN_OR_RETURN(std::string folder, new_savepoint_folder(target_dir, /*stop=*/false));
    const std::string trigger_id = savepoints_.add(/*stop=*/false);
    std::lock_guard trigger(trigger_mu_);
    const Status refused = trigger_refusal("savepoint");
    auto id = refused.is_ok() ? coordinator_->trigger_savepoint(folder, format) : Result<CheckpointId>(refused);
    if (!id.is_ok()) {
      remove_unused_savepoint_folder(cfg_.storage.get(), folder);
      savepoints_.fail(trigger_id, id.status());
      return id.status();
    }
    savepoints_.bind(trigger_id, *id);
    return trigger_id;
  }
  Result<std::string> stop_with_savepoint(const std::string& target_dir, bool drain,
                                          checkpoint::SavepointFormatType format) override {
    if (!cfg_.checkpoints_after_tasks_finish) {
      return Status::failed_precondition(
          "stop-with-savepoint needs execution.checkpointing.checkpoints-after-tasks-finish (the sinks commit on the "
          "final savepoint, which finished tasks cannot take)");
    }
    SLUICE_ASSIGN_OR_RETURN(std::string folder, new_savepoint_folder(target_dir, /*stop=*/true));
    const std::string trigger_id = savepoints_.add(/*stop=*/true);
    Event e = Event::of(Event::Kind::kStop);
    e.stop = StopWithSavepoint::Request{trigger_id, folder, drain, format, CheckpointId(0)};
    post(std::move(e));
    return trigger_id;
  }
  std::optional<SavepointRequestStatus> savepoint_status(const std::string& trigger_id) const override {
    return savepoints_.get(trigger_id);
  }
  std::optional<SavepointRequestStatus> wait_savepoint(const std::string& trigger_id, int64_t timeout_ms) const override {
    return savepoints_.wait(trigger_id, timeout_ms);
  }

  // ---- TaskListener (task threads) ----
  void on_task_end_of_data(int32_t vertex, int32_t subtask) override {
    post(Event::of(Event::Kind::kEndOfData, vertex, subtask));
  }
  void on_task_finished(int32_t vertex, int32_t subtask) override {
    if (coordinator_ && tasks_finish_with_input()) {
      const int32_t attempt = current_attempt();
      {
        std::lock_guard lock(finished_mu_);
        if (finished_.attempt != attempt) finished_ = FinishedTask{vertex, subtask, attempt};
      }
      // A checkpoint triggered before the task finished waits for an acknowledgement that never comes: end it
      // now (not counted against tolerable failures) instead of at its timeout. (A stop's savepoint completed
      // before its tasks were told to finish: nothing of it is pending here.)
      coordinator_->abort_pending(coordinator::CheckpointFailureReason::kTaskNotReady,
                                  Status::failed_precondition(finished_task_reason(vertex, subtask)));
    }
    post(Event::of(Event::Kind::kTaskFinished, vertex, subtask));
  }
  void on_task_cancelled(int32_t vertex, int32_t subtask) override {
    post(Event::of(Event::Kind::kTaskCancelled, vertex, subtask));
  }
  void on_task_failed(int32_t vertex, int32_t subtask, const Status& cause) override {
    Event e = Event::of(Event::Kind::kTaskFailed, vertex, subtask);
    e.cause = cause;
    post(std::move(e));
  }

  // ---- CheckpointTriggerTarget (coordinator threads) ----
  void trigger_checkpoint(CheckpointId id, int64_t timestamp_ms, checkpoint::SnapshotType type,
                          checkpoint::SavepointFormatType format, const std::string& savepoint_location) override {
    if (tasks_finish_with_input()) {
      const int32_t attempt = current_attempt();
      FinishedTask f;
      {
        std::lock_guard lock(finished_mu_);
        f = finished_;
      }
      if (f.attempt == attempt) {
        // Flink without checkpoints after tasks finish: a finished task cannot take part any more.
        coordinator_->decline(id, JobVertexId(f.vertex), SubtaskIndex(f.subtask),
                              Status::failed_precondition(finished_task_reason(f.vertex, f.subtask) +
                                                          ": no checkpoint or savepoint can complete any more"),
                              coordinator::CheckpointFailureReason::kTaskNotReady);
        return;
      }
    }
    tasks_.trigger_checkpoint(runtime::CheckpointBarrier{id, timestamp_ms, type, format}, savepoint_location);
  }
  void notify_checkpoint_complete(CheckpointId id) override {
    tasks_.notify_checkpoint_complete(id);
    Event e = Event::of(Event::Kind::kCheckpointComplete);
    e.id = id;
    post(std::move(e));
  }
  void notify_checkpoint_aborted(CheckpointId id) override {
    tasks_.notify_checkpoint_aborted(id);
    Event e = Event::of(Event::Kind::kCheckpointAborted);
    e.id = id;
    e.attempt = current_attempt();
    post(std::move(e));
  }
  void fail_job(const Status& cause) override {
    Event e = Event::of(Event::Kind::kTaskFailed);
    e.cause = cause;
    post(std::move(e));
  }

 private:
  struct Event {
    enum class Kind { kTaskFinished, kTaskFailed, kTaskCancelled, kEndOfData, kCancel, kCheckpointComplete,
                      kCheckpointAborted, kStop, kSavepointComplete, kSavepointAborted };
    Kind kind = Kind::kCancel;
    Status cause = Status::ok();
    CheckpointId id{0};
    int32_t attempt = 0;  // kCheckpointAborted: the attempt it was posted in
    // The task's, for the events a task posts (kTaskFinished, kTaskFailed, kTaskCancelled, kEndOfData); -1: none
    // (a failure of the job rather than of one task).
    int32_t vertex = -1, subtask = -1;
    std::optional<StopWithSavepoint::Request> stop;  // kStop
    static Event of(Kind k, int32_t vertex = -1, int32_t subtask = -1) {
      Event e;
      e.kind = k;
      e.vertex = vertex;
      e.subtask = subtask;
      return e;
    }
  };
  void post(Event e) {
    {
      std::lock_guard lock(events_mu_);
      events_.push_back(std::move(e));
    }
    events_cv_.notify_all();
  }

  // Moves the job's status (job_lifecycle.h). A refusal is a bug of this class; it is logged, and the run still
  // ends through finish_job.
  void move_to(JobStatus next) {
    Status moved = lifecycle_.transition(next);
    if (!moved.is_ok()) spdlog::error("{}", moved.to_string());
    if (status_metrics_) status_metrics_->on_status(lifecycle_.status());
  }

  // The checkpoint a (re)deployment restores from: restore_point_, when set.
  std::optional<AttemptRestore> attempt_restore() const {
    if (!restore_point_) return std::nullopt;
    return AttemptRestore{*restore_point_, cfg_.restore ? cfg_.restore->rehash_key_groups : KeyGroupRehash::kRefuse};
  }

  // Builds and starts one attempt's tasks, region by region, restoring from restore_point_ when set.
  Status deploy_attempt() {
    // Before the tasks start: their first reports reach the control loop only after this function returns.
    running_tasks_ = static_cast<int32_t>(eg_.subtasks.size());
    end_of_data_tasks_ = 0;
    ended_input_.assign(eg_.subtasks.size(), false);
    finished_task_.assign(eg_.subtasks.size(), false);
    final_checkpoint_floor_ = CheckpointId(-1);
    final_checkpoint_deferred_ = false;
    finishing_ = false;
    return tasks_.deploy_all(current_attempt(), attempt_restore());
  }

  // Triggers the final checkpoint if the end of data asked for it while the coordinator refused one (a
  // checkpoint was in flight); without this the job would wait for the next periodic trigger, up to an interval.
  void trigger_deferred_final_checkpoint() {
    if (!final_checkpoint_deferred_ || !coordinator_) return;
    if (coordinator_->trigger_checkpoint(checkpoint::SnapshotType::kCheckpoint).is_ok()) {
      final_checkpoint_deferred_ = false;
      coordinator_->stop_periodic_scheduling();
    }
  }

  void control_loop() {
    while (true) {
      Event e;
      {
        std::unique_lock lock(events_mu_);
        events_cv_.wait(lock, [&] { return !events_.empty(); });
        e = std::move(events_.front());
        events_.pop_front();
      }
      JobStatus st = status();
      if (is_globally_terminal(st)) return;
      switch (e.kind) {
        case Event::Kind::kEndOfData:
          if (!mark(ended_input_, e, +1, &end_of_data_tasks_)) break;
          if (end_of_data_tasks_ == running_tasks_ && coordinator_) {
            final_checkpoint_floor_ = coordinator_->next_checkpoint_id();
            // Drained for a stop: the final snapshot is the stop's savepoint.
            if (stop_->on_end_of_data(st == JobStatus::kRunning)) break;
            if (!cfg_.checkpointing) {  // no final checkpoint without periodic ones: the tasks end now
              tasks_.with_tasks([](DeployedTasks& tasks) { tasks.finish(); });
              break;
            }
            // The final checkpoint is in flight: no periodic one after it (it would be aborted when the job
            // ends). Refused (max concurrent, min pause): it is triggered when the checkpoint in flight ends, or
            // the next periodic one is the final one.
            final_checkpoint_deferred_ = true;
            trigger_deferred_final_checkpoint();
          }
          break;
        case Event::Kind::kCheckpointAborted:
          // The final checkpoint failed: periodic checkpoints take over again (the next one is the final one).
          if (final_checkpoint_floor_.value() >= 0 && e.id >= final_checkpoint_floor_ && st == JobStatus::kRunning &&
              e.attempt == current_attempt()) {
            coordinator_->start_periodic_scheduling();
          } else if (st == JobStatus::kRunning && e.attempt == current_attempt()) {
            trigger_deferred_final_checkpoint();
          }
          break;
        case Event::Kind::kCheckpointComplete:
          if (final_checkpoint_floor_.value() < 0 || e.id < final_checkpoint_floor_) {
            // One that was in flight at the end of data: the final checkpoint may go now.
            if (st == JobStatus::kRunning) trigger_deferred_final_checkpoint();
            break;
          }
          if (st == JobStatus::kRunning) {
            coordinator_->stop_periodic_scheduling();  // the final checkpoint is done: nothing more to trigger
            finishing_ = true;
            tasks_.with_tasks([](DeployedTasks& tasks) { tasks.finish(); });
          }
          break;
        case Event::Kind::kStop:
          stop_->start(std::move(*e.stop), st);
          break;
        case Event::Kind::kSavepointComplete:
          stop_->on_savepoint_complete(e.id, st == JobStatus::kRunning);
          break;
        case Event::Kind::kSavepointAborted:
          stop_->on_savepoint_aborted(e.id, e.cause, st == JobStatus::kRunning);
          break;
        case Event::Kind::kTaskFinished:
          if (!mark(finished_task_, e, -1, &running_tasks_)) break;
          if (running_tasks_ == 0 && st == JobStatus::kRunning) {
            finish_job(JobStatus::kFinished, Status::ok());
            return;
          }
          break;
        case Event::Kind::kTaskCancelled:
          break;
        case Event::Kind::kCancel:
          if (st == JobStatus::kRunning || st == JobStatus::kRestarting) {
            move_to(JobStatus::kCancelling);
            finish_job(JobStatus::kCanceled, Status::ok());
            return;
          }
          break;
        case Event::Kind::kTaskFailed:
          if (st != JobStatus::kRunning) break;  // a failure while failing over or cancelling: already handled
          record_exception(e.cause, e.vertex, e.subtask);
          if (const int32_t region = region_of(e); region >= 0) {
            if (!handle_region_failure(e.cause, static_cast<size_t>(region))) return;
          } else if (!handle_failure(e.cause)) {
            return;
          }
          break;
      }
    }
  }

  Result<std::string> new_savepoint_folder(const std::string& target_dir, bool stop) {
    return create_savepoint_folder(target_dir.empty() ? cfg_.savepoint_dir : target_dir, stop, job_id_, status(),
                                   coordinator_ ? cfg_.storage.get() : nullptr, *names_);
  }

  // A task ends as soon as its input ended (no final checkpoint waits for it): without periodic checkpoints, or
  // with execution.checkpointing.checkpoints-after-tasks-finish false. From then on no snapshot can complete.
  bool tasks_finish_with_input() const { return !cfg_.checkpointing || !cfg_.checkpoints_after_tasks_finish; }

  // Why a snapshot cannot include the finished task (vertex, subtask).
  std::string finished_task_reason(int32_t vertex, int32_t subtask) const {
    return "task " + jg_.vertices[static_cast<size_t>(vertex)].name + " (" + std::to_string(subtask + 1) +
           ") finished" +
           (cfg_.checkpointing ? " and execution.checkpointing.checkpoints-after-tasks-finish is false"
                               : " (checkpointing is off, so a task ends with its input)");
  }

  // ---- StopWithSavepoint::Tasks ----
  void with_tasks(const std::function<void(DeployedTasks&)>& fn) override { tasks_.with_tasks(fn); }

  // Sets the flag of the event's task in `flags` once; `count` moves by `step` when it does. False for a task
  // outside the job or already marked (a report repeated).
  bool mark(std::vector<bool>& flags, const Event& e, int32_t step, int32_t* count) {
    const int32_t i = graph::execution_index(jg_, e.vertex, e.subtask);
    if (i < 0 || flags[static_cast<size_t>(i)]) return false;
    flags[static_cast<size_t>(i)] = true;
    *count += step;
    return true;
  }

  // The region a task's failure restarts alone; -1 when the whole job restarts: one region, a failure that is not
  // a task's, or one during a stop-with-savepoint or after the final checkpoint (when other regions' sources have
  // stopped or their tasks end; Flink fails over globally then too).
  int32_t region_of(const Event& e) const {
    const graph::PipelinedRegions& regions = tasks_.regions();
    if (regions.regions.size() < 2 || (stop_ && stop_->in_progress()) || finishing_) return -1;
    const int32_t i = graph::execution_index(jg_, e.vertex, e.subtask);
    return i < 0 ? -1 : regions.region_of[static_cast<size_t>(i)];
  }

  bool in_region(size_t region, int32_t vertex, int32_t subtask) const {
    const int32_t i = graph::execution_index(jg_, vertex, subtask);
    return i >= 0 && tasks_.regions().region_of[static_cast<size_t>(i)] == static_cast<int32_t>(region);
  }

  // Region failover (Flink's RestartPipelinedRegionFailoverStrategy): the failed task's region is cancelled and,
  // when the restart strategy allows, deployed again from the latest completed checkpoint, while the other regions
  // keep running and the job stays RUNNING. Pending checkpoints are aborted (the region's tasks will not
  // acknowledge them); the region's source readers give back the splits assigned after that checkpoint. A
  // redeployment that fails is one more failure of the region, as in handle_failure. False when the job reached a
  // terminal state.
  bool handle_region_failure(const Status& first_cause, size_t region) {
    const int64_t failed_at_ns = cfg_.clock->monotonic_ns();
    if (!cfg_.checkpointing) return handle_failure(first_cause);  // checkpointing off: the job fails
    {
      std::lock_guard trigger(trigger_mu_);
      region_restarting_ = true;
    }
    stop_->on_failover(first_cause);
    coordinator_->stop();
    coordinator_->abort_pending(coordinator::CheckpointFailureReason::kJobFailover, first_cause);
    for (Status cause = first_cause;;) {
      spdlog::warn("job {}: {}; restarting pipelined region {} of {} ({} subtasks; "
                   "jobmanager.execution.failover-strategy region)",
                   jg_.job_name, cause.to_string(), region + 1, tasks_.regions().regions.size(),
                   tasks_.regions().regions[region].size());
      stop_region(region);
      int64_t backoff_ms = 0;
      if (!may_restart(cause, &backoff_ms)) return false;
      if (!wait_backoff(backoff_ms, &region)) {
        move_to(JobStatus::kCancelling);
        finish_job(JobStatus::kCanceled, Status::ok());
        return false;
      }
      if (auto latest = checkpoints_->latest()) restore_point_ = std::move(latest);
      Status deployed = deploy_region(region);
      if (deployed.is_ok()) break;
      if (cancel_requested()) {  // the deployment was interrupted by the cancel: not a failure of the job
        move_to(JobStatus::kCancelling);
        finish_job(JobStatus::kCanceled, Status::ok());
        return false;
      }
      cause = deployed.with_context("redeploying pipelined region " + std::to_string(region + 1) + " after a failure");
    }
    {
      std::lock_guard trigger(trigger_mu_);
      region_restarting_ = false;
    }
    {
      std::lock_guard lock(mu_);
      recoveries_.push_back({restore_point_ ? restore_point_->metadata.checkpoint_id.value() : 0,
                             (cfg_.clock->monotonic_ns() - failed_at_ns) / 1'000'000});
    }
    coordinator_->start();
    return true;
  }

  // Cancels region `region`'s tasks and waits until they and their snapshots are gone; the other regions run on.
  void stop_region(size_t region) {
    tasks_.stop_region(region);
    // Its tasks' state in this attempt is gone with them.
    for (int32_t i : tasks_.regions().regions[region]) {
      const auto k = static_cast<size_t>(i);
      if (ended_input_[k]) --end_of_data_tasks_;
      if (finished_task_[k]) ++running_tasks_;
      ended_input_[k] = false;
      finished_task_[k] = false;
    }
    // The final checkpoint, if triggered, was aborted: it is triggered again once every input ended again.
    final_checkpoint_floor_ = CheckpointId(-1);
    final_checkpoint_deferred_ = false;
  }

  // A new attempt of region `region` from restore_point_ (job_tasks.h).
  Status deploy_region(size_t region) {
    const int32_t old_attempt = current_attempt();
    {
      std::lock_guard lock(mu_);
      ++attempt_;
    }
    status_metrics_->on_restart();
    {
      // A task of another region that finished (checkpoints-after-tasks-finish false) stays finished.
      std::lock_guard lock(finished_mu_);
      if (finished_.attempt == old_attempt && !in_region(region, finished_.vertex, finished_.subtask)) {
        finished_.attempt = old_attempt + 1;
      }
    }
    return tasks_.deploy_region(region, current_attempt(), attempt_restore());
  }

  // Asks the restart strategy about `cause`: true with the backoff to wait, or false once the job failed with the
  // strategy's reason (or a failure no restart heals: restart/failure_classifier.h).
  bool may_restart(const Status& cause, int64_t* backoff_ms) {
    RestartDecision d = decide_restart(*restart_, cause, cfg_.clock->now_ms(),
                                       checkpoints_->check_restore_point(restore_point_, cause), &identical_failures_,
                                       checkpoints_->latest_checkpoint_id());
    if (!d.restart) {
      error_ = job_failure(d, cause);
      spdlog::error("job {} fails for good: {}", jg_.job_name, error_.to_string());
      restore_point_unusable_ = !d.unusable_restore_point.is_ok();
      move_to(JobStatus::kFailing);
      finish_job(JobStatus::kFailed, error_);
      return false;
    }
    *backoff_ms = d.backoff_ms;
    return true;
  }

  // True when a cancel request is queued (it ends the job at the control loop's next turn).
  bool cancel_requested() {
    std::lock_guard lock(events_mu_);
    for (const auto& ev : events_)
      if (ev.kind == Event::Kind::kCancel) return true;
    return false;
  }

  // Waits `backoff_ms` or until a cancel request comes. The events the stopped tasks posted are stale then: all of
  // them after a full stop (`region` null), those of `region`'s tasks after a region stop; a cancel and a
  // stop-with-savepoint request stay. False when a cancel came.
  bool wait_backoff(int64_t backoff_ms, const size_t* region) {
    std::unique_lock lock(events_mu_);
    events_cv_.wait_for(lock, std::chrono::milliseconds(backoff_ms), [&] {
      for (const auto& ev : events_)
        if (ev.kind == Event::Kind::kCancel) return true;
      return false;
    });
    std::deque<Event> keep;
    bool cancelled = false;
    for (auto& ev : events_) {
      if (ev.kind == Event::Kind::kCancel) {
        cancelled = true;
        keep.push_back(std::move(ev));
      } else if (ev.kind == Event::Kind::kStop) {
        keep.push_back(std::move(ev));  // a request of the user's, not of the stopped tasks: answered after the restart
      } else if (region != nullptr && !in_region(*region, ev.vertex, ev.subtask)) {
        keep.push_back(std::move(ev));
      }
    }
    events_ = std::move(keep);
    return !cancelled;
  }

  // Returns false when the job reached a terminal state. A redeploy that fails (e.g. the checkpoint storage is
  // unreachable while the restore reads it) is one more failure of the job: it goes through the restart strategy
  // like the first, so a passing outage heals within the strategy's attempts and a lasting one ends with its
  // reason (Flink treats a failed restore the same way).
  bool handle_failure(const Status& first_cause) {
    int64_t failed_at_ns = cfg_.clock->monotonic_ns();
    for (Status cause = first_cause;;) {
      Status deployed;
      if (!restart_after(cause, &deployed)) return false;
      if (deployed.is_ok()) break;
      if (cancel_requested()) {  // the deployment was interrupted by the cancel: not a failure of the job
        finish_job(JobStatus::kCanceled, Status::ok());
        return false;
      }
      cause = deployed.with_context("redeploying after a failure");
      record_exception(cause, -1, -1);
    }
    move_to(JobStatus::kRunning);
    {
      std::lock_guard lock(mu_);
      recoveries_.push_back({restore_point_ ? restore_point_->metadata.checkpoint_id.value() : 0,
                             (cfg_.clock->monotonic_ns() - failed_at_ns) / 1'000'000});
    }
    coordinator_->start();
    return true;
  }

  // One restart: consults the strategy, waits its backoff and deploys a new attempt, whose outcome goes to
  // `deployed`. False once the job reached a terminal state (failed for good, or cancelled during the wait).
  bool restart_after(const Status& cause, Status* deployed) {
    spdlog::warn("job {}: {}", jg_.job_name, cause.to_string());
    // Checkpointing off: no restarts (Flink's default without checkpointing), also with a coordinator for
    // savepoints (failover never restores a savepoint).
    if (!cfg_.checkpointing) {
      error_ = cause;
      move_to(JobStatus::kFailing);
      finish_job(JobStatus::kFailed, cause);
      return false;
    }
    {
      std::lock_guard trigger(trigger_mu_);
      // Already RESTARTING when the redeployment after the last failure failed too.
      if (status() != JobStatus::kRestarting) move_to(JobStatus::kRestarting);
    }
    stop_->on_failover(cause);
    coordinator_->stop();
    coordinator_->abort_pending(coordinator::CheckpointFailureReason::kJobFailover, cause);
    tasks_.stop_all();
    int64_t backoff_ms = 0;
    if (!may_restart(cause, &backoff_ms)) return false;
    // Wait the backoff; a cancel request ends the wait.
    if (!wait_backoff(backoff_ms, nullptr)) {
      finish_job(JobStatus::kCanceled, Status::ok());
      return false;
    }
    if (auto latest = checkpoints_->latest()) restore_point_ = std::move(latest);
    {
      std::lock_guard lock(mu_);
      ++attempt_;
    }
    status_metrics_->on_restart();
    spdlog::info("job {}: restarting, attempt {}, from {} (after {} ms of backoff, {})", jg_.job_name,
                 current_attempt(),
                 restore_point_ ? "checkpoint " + std::to_string(restore_point_->metadata.checkpoint_id.value()) +
                                      " at " + restore_point_->location
                                : std::string("the beginning: no checkpoint completed yet"),
                 backoff_ms, restart_->describe());
    *deployed = deploy_attempt();
    return true;
  }

  int32_t current_attempt() const {
    std::lock_guard lock(mu_);
    return attempt_;
  }

  // One failure for GET /jobs/:jobid/exceptions, with where its task ran (while that attempt is still placed).
  void record_exception(const Status& cause, int32_t vertex, int32_t subtask) {
    JobException x;
    x.timestamp_ms = cfg_.clock->now_ms();
    x.exception_name = exception_name_of(cause);
    x.message = cause.to_string();
    if (vertex >= 0 && static_cast<size_t>(vertex) < jg_.vertices.size() && subtask >= 0) {
      x.task_name = runtime::subtask_name(jg_, vertex, subtask);
      for (const SubtaskLocation& l : tasks_.locations()) {
        if (l.id.vertex.value() == vertex && l.id.subtask.value() == subtask) {
          x.location = l.host;
          x.task_manager_id = l.task_manager_id;
        }
      }
    }
    exceptions_.add(std::move(x));
  }

  void finish_job(JobStatus terminal, const Status& error) {
    // A checkpoint still pending when the job finished normally is not a failure of the job's checkpoints.
    if (coordinator_) coordinator_->shutdown(Status::cancelled("job ended"), terminal == JobStatus::kFinished);
    if (deployer_) deployer_->before_job_end();
    tasks_.stop_all();
    if (coordinator_ && checkpoints_) {
      using checkpoint::JobTerminalStatus;
      // Before the cleanup: the record keeps the job folder, and `--restore latest` from picking the restored
      // checkpoint again (its input is processed and committed now).
      if (terminal == JobStatus::kFinished && cfg_.restore) checkpoints_->record_finished_restore(cfg_.restore->location);
      checkpoints_->cleanup_on_job_end(terminal == JobStatus::kFinished   ? JobTerminalStatus::kFinished
                                       : terminal == JobStatus::kCanceled ? JobTerminalStatus::kCanceled
                                       : restore_point_unusable_ ? JobTerminalStatus::kFailedUnusableRestorePoint
                                                                 : JobTerminalStatus::kFailed);
    }
    if (stop_) stop_->on_job_end(terminal == JobStatus::kFinished);
    savepoints_.fail_all(Status::cancelled(std::string("the job ended (") + job_status_name(terminal) +
                                           ") before the savepoint completed"));
    claims_.clear();  // nothing of this job writes any more: the next job may take its folders and prefixes
    if (deployer_) deployer_->on_job_end(terminal);
    Status ended = lifecycle_.terminate(terminal, error);
    if (!ended.is_ok()) spdlog::error("{}", ended.to_string());
    if (status_metrics_) status_metrics_->on_status(terminal);
  }

  TaskDeployerFactory deployers_;
  std::shared_ptr<const StreamGraph> sg_;
  graph::JobGraph jg_;
  MiniClusterConfig cfg_;
  std::shared_ptr<NameSource> names_;  // cfg_.names, or a random source
  JobId job_id_;
  const std::vector<JobId> lineage_;  // the runs this one descends from (CheckpointMetadata::lineage)
  std::vector<std::unique_ptr<HeldClaim>> claims_;  // held until the job ends (finish_job)
  graph::ExecutionGraph eg_;
  MetricRegistry registry_;
  MetricGroup* job_metrics_ = nullptr;
  std::unique_ptr<JobStatusMetrics> status_metrics_;  // numRestarts, uptime
  ExceptionHistory exceptions_{16};  // Flink's web.exception-history-size default
  std::unique_ptr<RestartBackoffTimeStrategy> restart_;
  IdenticalFailureCounter identical_failures_{cfg_.restart.max_identical_failures};
  std::unique_ptr<JobCheckpoints> checkpoints_;  // with checkpointing
  std::unique_ptr<coordinator::CheckpointCoordinator> coordinator_;
  std::optional<RestorePoint> restore_point_;
  // The job failed because its restore point is missing a file or damaged: no checkpoint is deleted at job end.
  bool restore_point_unusable_ = false;
  std::unique_ptr<runtime::FaultInjector> injector_;  // outlives every attempt's tasks

  std::unique_ptr<TaskDeployer> deployer_;  // set by start()
  JobTasks tasks_{*sg_, jg_, eg_, cfg_};  // the running attempt's tasks and source enumerators
  // A user's checkpoint or savepoint trigger is refused until the first deployment succeeded and while a region
  // restarts (both guarded by trigger_mu_): the job is RUNNING meanwhile, as in Flink.
  bool deployed_ = false;
  bool region_restarting_ = false;
  // A task that finished in the current attempt (checkpoints-after-tasks-finish false); task threads write it.
  struct FinishedTask {
    int32_t vertex = 0, subtask = 0, attempt = -1;
  };
  std::mutex finished_mu_;
  FinishedTask finished_;  // the first task that finished in attempt `attempt`
  // Control-thread state. Indexed like eg_.subtasks: the tasks whose input ended, and those that finished, in
  // their current attempt (a region restart clears its own); the counts follow them.
  std::vector<bool> ended_input_;
  std::vector<bool> finished_task_;
  int32_t running_tasks_ = 0;
  int32_t end_of_data_tasks_ = 0;
  CheckpointId final_checkpoint_floor_{-1};
  bool final_checkpoint_deferred_ = false;
  bool finishing_ = false;  // the final checkpoint completed: every task was told to end
  std::mutex trigger_mu_;  // user triggers (checkpoint, savepoint) vs the failover's status change
  Status error_;
  SavepointRequests savepoints_;
  std::unique_ptr<StopWithSavepoint> stop_;  // with checkpointing
  std::vector<UnmatchedOperatorState> dropped_state_;  // --allow-non-restored-state

  std::mutex events_mu_;
  std::condition_variable events_cv_;
  std::deque<Event> events_;
  std::thread control_;

  coordinator::JobLifecycle lifecycle_;  // the job's status and, once terminal, its result
  mutable std::mutex mu_;  // attempt_, recoveries_
  int32_t attempt_ = 0;
  std::vector<std::pair<int64_t, int64_t>> recoveries_;
};

}  // namespace

Result<std::unique_ptr<JobClient>> start_job_master(std::shared_ptr<const StreamGraph> stream_graph,
                                                    graph::JobGraph job_graph, const MiniClusterConfig& config,
                                                    std::vector<std::unique_ptr<HeldClaim>> claims,
                                                    TaskDeployerFactory deployers) {
  auto job = std::make_unique<JobMaster>(std::move(stream_graph), std::move(job_graph), config, std::move(claims),
                                         std::move(deployers));
  Status started = job->init();
  if (started.is_ok()) started = job->start();
  if (!started.is_ok()) {
    job->discard_empty_job_folder();  // a refused restore leaves no empty job folder behind
    return started;
  }
  return std::unique_ptr<JobClient>(std::move(job));
}

}  // namespace sluice::cluster
