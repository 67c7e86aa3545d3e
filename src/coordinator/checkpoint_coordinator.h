// CheckpointCoordinator: triggers checkpoints and savepoints, collects acknowledgements, completes a
// checkpoint once every task acknowledged and its _metadata is durable, aborts on decline, timeout, storage
// failure or subsumption, and fails the job after too many consecutive failures (Flink's CheckpointCoordinator,
// PendingCheckpoint, CheckpointFailureManager; DESIGN.md section 3; docs/checkpoints.md).
//
// Decisions live in pure pieces tested on their own: decide_trigger / is_expired / subsumed_by
// (checkpoint_decisions.h), PendingCheckpoint, CheckpointFailureManager, CheckpointStatsTracker. This class
// keeps their state under one mutex and turns decisions into actions on the storage and the target.
//
// Ids: strictly increasing, the first is restored_checkpoint_id + 1 (1 for a fresh job); savepoints take ids
// from the same counter. A refused trigger consumes no id.
//
// Completion of checkpoint n: every task acknowledged -> metadata built (operators in plan order, subtasks
// sorted) -> storage->write_metadata -> stats, failure count reset, min pause measured from now ->
// on_completed(metadata, location) -> target->notify_checkpoint_complete(n) (checkpoints only) -> pending
// checkpoints older than n are aborted as subsumed. Checkpoints complete in strictly increasing id order:
// they finalize one at a time in the order they became fully acknowledged, and one that became fully
// acknowledged after a newer one completed is subsumed instead.
// Abort of n (decline, timeout, storage failure, subsumed, abort_pending, shutdown): stats -> failure manager
// (may decide fail_job) -> storage->discard(n) -> target->notify_checkpoint_aborted(n) -> on_aborted ->
// target->fail_job(cause) if decided. Every triggered id ends exactly once, completed or aborted.
// Late or duplicate messages are ignored (logged); a late acknowledgement or decline of a recently aborted
// checkpoint discards it again, so files its task wrote after the abort are removed.
//
// Threads. Every public method may be called from any thread. State changes happen under one mutex and
// produce actions (calls to the storage, the target and the callbacks), queued FIFO. Actions run outside
// the mutex, one at a time, in queue order (an action's follow-ups run right after it): by the coordinator's
// timer thread while it runs (start()), otherwise by the calling thread, which then returns only when the
// queue is empty (if another thread is already running actions, it runs ours too and we return at once).
// So a task thread calling acknowledge() never blocks on storage I/O while the timer thread runs, and the
// target and storage are never called under the mutex: a target may call back into the coordinator.
// Guarantees: trigger(n) reaches the target before any notification for n; notify_checkpoint_complete(n)
// only after write_metadata(n) returned success; notifications follow completion order.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "checkpoint/checkpoint_metadata.h"
#include "checkpoint/checkpoint_storage.h"
#include "coordinator/checkpoint_coordinator_config.h"
#include "coordinator/checkpoint_decisions.h"
#include "coordinator/checkpoint_failure_manager.h"
#include "coordinator/checkpoint_plan.h"
#include "coordinator/checkpoint_stats.h"
#include "coordinator/checkpoint_trigger_target.h"
#include "coordinator/pending_checkpoint.h"
#include "coordinator/shared_state_registry.h"
#include "sluice/core/clock.h"
#include "sluice/core/ids.h"
#include "sluice/core/status.h"
#include "sluice/metrics/metric_group.h"

namespace sluice::coordinator {

// Job-level checkpoint gauges (Flink's names), registered when CheckpointCoordinatorSetup::metrics is set.
namespace checkpoint_metric_names {
inline constexpr std::string_view kNumberOfInProgressCheckpoints = "numberOfInProgressCheckpoints";
inline constexpr std::string_view kNumberOfCompletedCheckpoints = "numberOfCompletedCheckpoints";
inline constexpr std::string_view kNumberOfFailedCheckpoints = "numberOfFailedCheckpoints";
inline constexpr std::string_view kTotalNumberOfCheckpoints = "totalNumberOfCheckpoints";
inline constexpr std::string_view kLastCheckpointDuration = "lastCheckpointDuration";  // ms
// Bytes the last completed checkpoint wrote (its increment when incremental), and its whole state (Flink's names).
inline constexpr std::string_view kLastCheckpointSize = "lastCheckpointSize";
inline constexpr std::string_view kLastCheckpointFullSize = "lastCheckpointFullSize";
inline constexpr std::string_view kLastCompletedCheckpointId = "lastCompletedCheckpointId";
}  // namespace checkpoint_metric_names

struct CheckpointCoordinatorSetup {
  CheckpointCoordinatorConfig config;
  JobId job_id;                             // this run's id, recorded in every metadata
  std::vector<JobId> lineage;               // the runs it descends from (CheckpointMetadata::lineage)
  CheckpointId restored_checkpoint_id{0};   // the checkpoint this run restored from; 0 for a fresh job
  std::vector<TaskToAck> tasks;             // the tasks that acknowledge every checkpoint
  std::shared_ptr<checkpoint::CheckpointStorage> storage;  // required
  CheckpointTriggerTarget* target = nullptr;               // required; not owned, must outlive the coordinator
  std::shared_ptr<const Clock> clock;       // default: SystemClock::shared()
  // Called for every completed checkpoint and savepoint (metadata durable), in completion order, before
  // notify_checkpoint_complete: where the owner adds it to its CompletedCheckpointStore / retention.
  std::function<void(const checkpoint::CheckpointMetadata&, const std::string& location)> on_completed;
  // Called for every aborted checkpoint and savepoint, after notify_checkpoint_aborted (logs, tests).
  std::function<void(CheckpointId, CheckpointFailureReason, const Status& cause)> on_aborted;
  std::map<std::string, std::string> properties;  // copied into every metadata (e.g. "demo.seed")
  // state.backend.type of the job ("hashmap", "rocksdb"), recorded in every metadata: a native savepoint restores
  // only into the backend that took it.
  std::string state_backend;
  // Optional: registers Flink's job-level checkpoint gauges here (numberOfCompletedCheckpoints, ...). Must
  // outlive the coordinator.
  MetricGroup* metrics = nullptr;
  // How often start()'s thread calls tick() (real time); decisions use `clock`.
  std::chrono::milliseconds timer_period{5};
  // Reference counts of incremental checkpoints' shared files. Null: the coordinator makes one. The owner
  // shares it to release completed checkpoints it subsumes (CompletedCheckpointStore) and restored ones.
  std::shared_ptr<SharedStateRegistry> shared_state_registry;
};

// What became of an acknowledgement or a decline.
enum class MessageOutcome : uint8_t {
  kAccepted,            // recorded (an acknowledgement), or the checkpoint was aborted (a decline)
  kUnknownCheckpoint,   // never triggered (id >= next id): ignored
  kCheckpointEnded,     // already completed or aborted: ignored
  kCheckpointFinalizing,  // a decline after every task acknowledged: ignored (the metadata write decides)
  kUnknownTask,         // (vertex, subtask) is not in the plan: ignored
  kDuplicate,           // the task already acknowledged: ignored
  kRejected,            // the acknowledgement held state for an operator the task does not run: the
                        // checkpoint is aborted (declined)
};

class CheckpointCoordinator {
 public:
  // kInvalidArgument for an invalid config or plan, a missing storage or target, or a negative restored id.
  static Result<std::unique_ptr<CheckpointCoordinator>> create(CheckpointCoordinatorSetup setup);
  // Stops the timer thread. Does not call the target: call shutdown() first to abort pending checkpoints.
  // Must not be called from a target callback.
  ~CheckpointCoordinator();
  CheckpointCoordinator(const CheckpointCoordinator&) = delete;
  CheckpointCoordinator& operator=(const CheckpointCoordinator&) = delete;

  // Triggers a checkpoint or savepoint now. A checkpoint is refused (kFailedPrecondition naming the reason;
  // not a checkpoint failure) when max concurrent checkpoints are pending or the min pause has not passed;
  // savepoints are forced (Flink's rule). Both are refused after shutdown().
  Result<CheckpointId> trigger_checkpoint(checkpoint::SnapshotType type);
  // Triggers a savepoint written into `savepoint_dir` (an existing, empty folder): before the trigger reaches the
  // target, storage->begin_savepoint(id, savepoint_dir) routes its files there; if that fails the savepoint is
  // aborted (kStorageFailure, not counted) with the storage's error. Forced like every savepoint; refused after
  // shutdown(). `format`: what the tasks write (the barrier carries it) and the metadata records. Neither format
  // registers files in the SharedStateRegistry: a savepoint's files are its own.
  Result<CheckpointId> trigger_savepoint(const std::string& savepoint_dir,
                                         checkpoint::SavepointFormatType format = checkpoint::SavepointFormatType::kCanonical);

  // Task (vertex, subtask) acknowledges checkpoint `id` with its operators' state (by operator id; operators
  // without state may be left out) and its statistics.
  MessageOutcome acknowledge(CheckpointId id, JobVertexId vertex, SubtaskIndex subtask,
                             std::map<std::string, checkpoint::OperatorSubtaskState> state,
                             const SubtaskCheckpointStats& stats);
  // Task (vertex, subtask) cannot complete checkpoint `id`: aborts it. `kind` is kDeclined, kAsyncFailure
  // or kTaskNotReady (the latter is not counted as a failure).
  MessageOutcome decline(CheckpointId id, JobVertexId vertex, SubtaskIndex subtask, const Status& reason,
                         CheckpointFailureReason kind = CheckpointFailureReason::kDeclined);

  // Aborts pending checkpoints that passed the timeout, then triggers the periodic checkpoint if it is due
  // and allowed. The owner calls it (start()'s thread does, every timer_period).
  void tick();

  // Periodic scheduling without a thread (tests tick by hand): the first periodic checkpoint is due one
  // interval from now; each next one an interval after the previous trigger. A due checkpoint that may not
  // start yet (max concurrent, min pause) triggers at the first tick where it may. Nothing when the config has no
  // interval (CheckpointCoordinatorConfig::periodic()): only triggers asked for (savepoints) are taken then.
  void start_periodic_scheduling();
  void stop_periodic_scheduling();
  // start_periodic_scheduling() plus the timer thread. stop() stops both (joins the thread, unless called
  // on it). Pending checkpoints are left as they are.
  void start();
  void stop();

  // Aborts every pending checkpoint and savepoint with `reason` (e.g. kJobFailover when a task failed).
  void abort_pending(CheckpointFailureReason reason, const Status& cause);
  // stop(), abort pending ones (kCoordinatorShutdown) and refuse triggers from now on. `job_finished`: the job
  // ended normally (all tasks finished); checkpoints still pending are aborted and discarded as usual but not
  // reported as failed in the stats (as Flink: not a failure of the job's checkpoints).
  void shutdown(const Status& cause, bool job_finished = false);

  CheckpointStatsSnapshot stats() const;
  int32_t num_pending() const;
  CheckpointId next_checkpoint_id() const;
  const CheckpointCoordinatorConfig& config() const { return config_; }
  // Pending checkpoints register their shared files here on every acknowledgement; an abort releases them,
  // and the coordinator deletes (storage->discard_shared_files) what the registry says nobody refers to.
  const std::shared_ptr<SharedStateRegistry>& shared_state_registry() const { return registry_; }

 private:
  struct Action;
  enum class Outcome : uint8_t { kCompleted, kAborted };

  explicit CheckpointCoordinator(CheckpointCoordinatorSetup setup, std::shared_ptr<const CheckpointPlan> plan);

  int64_t now_mono_ms() const;
  TriggerState trigger_state_locked() const;
  void tick_locked();
  using ActionList = std::vector<std::unique_ptr<Action>>;
  PendingCheckpoint& start_checkpoint_locked(
      checkpoint::SnapshotType type, int64_t now_ms, const std::string& savepoint_dir = "",
      checkpoint::SavepointFormatType format = checkpoint::SavepointFormatType::kCanonical);
  void abort_locked(CheckpointId id, CheckpointFailureReason reason, const Status& cause, ActionList& out);
  void enqueue_back_locked(ActionList&& actions);
  void remember_ended_locked(CheckpointId id, Outcome outcome);
  // Queues a discard of `id` if it was aborted recently (a late message: its task may have written files).
  void discard_again_if_aborted_locked(CheckpointId id, std::unique_lock<std::mutex>& lock);
  void on_metadata_written(CheckpointId id, Result<std::string> location, checkpoint::CheckpointMetadata metadata);
  void update_gauges_locked();
  void register_metrics();

  // Runs queued actions (see "Threads"). Called with `lock` held; returns with it held.
  void dispatch_locked(std::unique_lock<std::mutex>& lock);
  void drain_locked(std::unique_lock<std::mutex>& lock);
  void run_action(Action& action);
  void discard_shared_files(const std::vector<std::string>& files);
  void timer_loop();

  const CheckpointCoordinatorConfig config_;
  const JobId job_id_;
  const std::vector<JobId> lineage_;
  const std::shared_ptr<const CheckpointPlan> plan_;
  const std::shared_ptr<checkpoint::CheckpointStorage> storage_;
  CheckpointTriggerTarget* const target_;
  const std::shared_ptr<const Clock> clock_;
  const std::function<void(const checkpoint::CheckpointMetadata&, const std::string&)> on_completed_;
  const std::function<void(CheckpointId, CheckpointFailureReason, const Status&)> on_aborted_;
  const std::map<std::string, std::string> properties_;
  const std::string state_backend_;
  MetricGroup* const metrics_;
  const std::chrono::milliseconds timer_period_;
  const std::shared_ptr<SharedStateRegistry> registry_;

  mutable std::mutex mu_;
  // Guarded by mu_.
  int64_t next_id_;
  std::map<CheckpointId, PendingCheckpoint> pending_;
  std::map<CheckpointId, Outcome> recently_ended_;  // bounded; for late messages
  CheckpointFailureManager failure_manager_;
  CheckpointStatsTracker stats_;
  bool shut_down_ = false;
  bool job_finished_ = false;  // shutdown(..., job_finished = true)
  bool periodic_scheduling_ = false;
  int64_t next_periodic_due_ms_ = 0;
  std::optional<int64_t> last_completion_ms_;
  std::deque<std::unique_ptr<Action>> actions_;
  bool draining_ = false;
  bool thread_running_ = false;       // the timer thread runs actions
  bool thread_stop_requested_ = false;
  std::thread::id timer_thread_id_;
  std::condition_variable cv_;
  std::thread thread_;
  std::mutex thread_handle_mu_;  // serializes start()/stop() on the thread handle (never taken under mu_)

  struct Gauges;
  std::unique_ptr<Gauges> gauges_;
};

}  // namespace sluice::coordinator
