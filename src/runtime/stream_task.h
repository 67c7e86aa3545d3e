// StreamTask: one parallel subtask of a JobVertex (an operator chain), on its own thread, running a
// mailbox loop (Flink's StreamTask + MailboxProcessor).
//
// The loop: run pending mails; if asked, flush partial output buffers (buffer timeout); if every output
// can take a buffer, run the default action - poll the source reader (source tasks) or take one buffer from
// the input gate and push its records through the chain; otherwise sleep on the task's notifier until input,
// output space or a mail arrives. Under back-pressure the task therefore keeps running mails (later:
// checkpoint barriers) instead of blocking inside an emit. Events (end of partition; later barriers and
// watermarks) come in-band from the gate. A bounded input ends when every input channel delivered end of
// partition (or the source reader says end of input): the task calls end_input() on the chain head-first,
// closes the operators, and sends end of partition downstream.
//
// Unaligned checkpoints (d_.unaligned; checkpointing/unaligned_checkpoint_config.h): barriers of an unaligned
// checkpoint overtake the data queued in the task's outputs on the edges that hold channel state (hash,
// rebalance, rescale, shuffle, global, custom: holds_channel_state) - the
// overtaken output buffers are copied into the checkpoint's output channel state - and the task takes its
// snapshot on the first barrier instead of aligning (UnalignedBarrierHandler), persisting as input channel
// state the data that arrives on each channel before that channel's barrier (and what a priority barrier
// overtook), while processing it as usual. A task with a mix of inputs: forward and broadcast inputs stay
// aligned - the snapshot waits for their barriers (blocking them as they come), never persists their data,
// and barriers on forward and broadcast outputs are sent in order behind the data. With an alignment timeout
// the checkpoint starts aligned; once the timeout has passed since its trigger, an aligning task snapshots at
// once, and barriers still queued in its input channels are promoted to overtake the data ahead of them
// (InputGate::promote_due_events; that data becomes this task's input channel state). Restore: the cluster gives
// every in-flight record, whichever side persisted it, to a consuming subtask (at any parallelism), which
// processes it before the first buffer of its input gate.
//
// Failure: any exception (OperatorFailure names operator and subtask) ends the task as failed through
// TaskListener::on_task_failed; cancel() ends it as cancelled. Operators are closed in both cases.
// Failures armed in the job's FaultInjector are thrown here, on the task thread, at their named points.
// Thread-safety: run() on the task thread; cancel(), request_flush(), mailbox() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_storage.h"
#include "graph/job_graph.h"
#include "runtime/checkpointing/async_snapshot_executor.h"
#include "runtime/checkpointing/checkpoint_barrier.h"
#include "runtime/checkpointing/checkpoint_barrier_handler.h"
#include "runtime/checkpointing/subtask_checkpoint_coordinator.h"
#include "runtime/checkpointing/unaligned_checkpoint_config.h"
#include "runtime/fault_injection.h"
#include "runtime/mailbox.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "runtime/network/task_notifier.h"
#include "runtime/task_metrics.h"
#include "runtime/watermark_valve.h"
#include "sluice/api/stream_graph.h"
#include "sluice/metrics/metric_group.h"
#include "sluice/operators/processing_time_service.h"
#include "sluice/operators/source_operator.h"
#include "sluice/operators/two_input_stream_operator.h"
#include "sluice/state/state_backend.h"

namespace sluice::runtime {

// BATCH: what one sink of a task pre-committed at the end of its input (TaskDeployment::batch_commit_after_stage):
// its snapshot's operator state - the committables, as a checkpoint would keep them. Restoring a fresh instance of
// the sink from it commits exactly those committables again (batch/sink_commit_retry.h).
struct BatchPrecommit {
  int32_t node_id = -1;  // the sink's StreamNode
  std::vector<uint8_t> operator_state;
};

class TaskListener {
 public:
  virtual ~TaskListener() = default;
  // BATCH (TaskDeployment::batch_commit_after_stage): the task's sinks pre-committed; called before
  // on_task_end_of_data, from the task thread. Default: ignored.
  virtual void on_task_precommitted(int32_t vertex, int32_t subtask, std::vector<BatchPrecommit> sinks) {
    (void)vertex;
    (void)subtask;
    (void)sinks;
  }
  // With checkpointing on, a task whose input ended reports it and waits: it finishes only after a final
  // checkpoint completed (so two-phase-commit sinks commit their last data), when told to by finish().
  virtual void on_task_end_of_data(int32_t vertex, int32_t subtask) = 0;
  virtual void on_task_finished(int32_t vertex, int32_t subtask) = 0;
  virtual void on_task_failed(int32_t vertex, int32_t subtask, const Status& cause) = 0;
  virtual void on_task_cancelled(int32_t vertex, int32_t subtask) = 0;
};

using RecordsAfterBarrierHook =
    std::function<void(int32_t vertex, int32_t subtask, int32_t channel, CheckpointId pending, int64_t records)>;

struct TaskOutput {
  const graph::JobEdge* edge = nullptr;
  std::shared_ptr<ResultPartition> partition;
  // BATCH (docs/batch.md): the partition feeds a blocking exchange - records go out framed with their key
  // (blocking_record_framing.h), watermarks are dropped. sorted_by_key: the consumer sorts its input by key, so
  // records routed by key carry their serialized key.
  bool blocking = false;
  bool sorted_by_key = false;
};

// Everything a task needs, prepared by the cluster when it deploys the job.
struct TaskDeployment {
  const StreamGraph* stream_graph = nullptr;
  const graph::JobGraph* job_graph = nullptr;
  int32_t vertex = -1;
  int32_t subtask_index = 0;
  int32_t attempt_number = 0;
  KeyGroupRange key_group_range;
  std::vector<TaskOutput> outputs;        // one ResultPartition per outgoing JobEdge
  std::unique_ptr<InputGate> input_gate;  // all input channels of all incoming JobEdges; null for sources
  SourceReaderCoordinator* source_coordinator = nullptr;  // sources: their split enumerator's coordinator
  MetricGroup* job_metrics = nullptr;     // the task adds operator/subtask groups below it
  const Clock* clock = nullptr;
  std::string state_backend_type = "HASHMAP";
  RocksDBStateBackendOptions rocksdb;
  bool incremental_checkpoints = false;  // execution.checkpointing.incremental (RocksDB keyed state)
  std::string job_id;  // the run's JobId (hex)
  std::vector<std::string> lineage_job_ids;  // the runs it descends from (OperatorSetup::lineage_job_ids)
  // The job's filesystems (OperatorSetup::file_systems); null: the local disk only.
  std::shared_ptr<const fs::FileSystemRegistry> file_systems;
  std::shared_ptr<TaskNotifier> notifier;  // the notifier the partitions and gate were built with
  FaultInjector* fault_injector = nullptr;  // the job's armed failures (fault_injection.h); null: none
  int64_t auto_watermark_interval_ms = 200;  // pipeline.auto-watermark-interval (0: no periodic emission)
  // BATCH: the input arrives sorted by key; the chain's head (a keyed operator) keeps one key's state at a time
  // (OperatorSetup::batch_sorted_input). A two-input head gets both inputs merged in one key order as tagged
  // entries (blocking_record_framing.h: each names its input) on any channel, and ends its inputs
  // (end_input_of 1, then 2) only when every channel ended.
  bool batch_sorted_input = false;
  // BATCH, a chain with a sink that commits on checkpoint completion (StreamNode::commits_on_checkpoint_complete:
  // two-phase-commit and write-ahead-log sinks): its commit waits for the whole stage. At the end of its input
  // the task pre-commits (the sinks' snapshot_state for kBatchCommitCheckpoint; its operators see
  // OperatorSetup::checkpointing, so they keep what they would commit), hands the snapshots over
  // (on_task_precommitted), ends its output partitions (its exchange files commit: its data is complete), reports
  // on_task_end_of_data and waits; notify_checkpoint_complete(kBatchCommitCheckpoint) then commits, finish() ends
  // it. A stage that fails before that leaves nothing committed, so its re-run writes the output once; a failure
  // after it retries the commit from the snapshots (docs/batch.md).
  bool batch_commit_after_stage = false;

  // Checkpoints and savepoints; neither when checkpoint_responder is null.
  CheckpointResponder* checkpoint_responder = nullptr;
  // With a checkpoint_responder: periodic checkpoints are on (execution.checkpointing.interval > 0). false: the
  // responder serves savepoints only (cluster/mini_cluster.h, savepoints_without_checkpointing) - the operators see
  // OperatorSetup::checkpointing false (sinks commit at the end of input) and the task finishes as soon as its
  // input ended (no final checkpoint will come), exactly as without a responder.
  bool periodic_checkpoints = true;
  // execution.checkpointing.mode AT_LEAST_ONCE: barriers are tracked (CheckpointBarrierTracker), never
  // aligned; false: EXACTLY_ONCE (AlignedBarrierHandler, or UnalignedBarrierHandler with `unaligned` enabled).
  bool at_least_once = false;
  // execution.checkpointing.checkpoints-after-tasks-finish: true, a task whose input ended waits for the final
  // checkpoint (taking part in every checkpoint until then); false, it finishes at once.
  bool checkpoints_after_tasks_finish = true;
  // Test hook (AT_LEAST_ONCE only; null: off): called on the task thread after a buffer was processed that
  // arrived on `channel` after that channel's barrier of the pending checkpoint `pending` - before `pending`
  // is taken. `records`: the records the buffer held.
  const RecordsAfterBarrierHook* records_after_barrier_hook = nullptr;
  std::shared_ptr<checkpoint::CheckpointStorage> checkpoint_storage;
  AsyncSnapshotExecutor* async_executor = nullptr;
  // Restored state by operator id; `restored` is true when the job restarts from a checkpoint (operators
  // without an entry then start empty but see is_restored()).
  bool restored = false;
  std::map<std::string, OperatorRestoreState> restore;
  // execution.checkpointing.unaligned.* (off by default).
  UnalignedCheckpointConfig unaligned;
  // The in-flight data of the unaligned checkpoint restored from that this subtask processes before new input:
  // input channel state only, entries in processing order, each channel naming the input it feeds
  // (cluster/channel_state_assignment.h); none: nothing.
  std::optional<checkpoint::SubtaskChannelState> restored_channel_state;
};

// Test hook (tests/integration/unaligned_checkpoint_it.cc): the tasks of job vertex `vertex` (-1: none) read no
// data from their input gates; their mailboxes keep running and they still take priority events (unaligned
// barriers). Process-wide; any thread.
void set_input_suspended_for_testing(int32_t vertex);
bool input_suspended_for_testing(int32_t vertex);

// The name of subtask `subtask` of job vertex `vertex` ("<chain name> (2/4)"), and what an operator `node` of it is
// told about itself (OperatorSetup::info).
std::string subtask_name(const graph::JobGraph& job_graph, int32_t vertex, int32_t subtask);
TaskInfo operator_task_info(const graph::JobGraph& job_graph, const StreamNode& node, int32_t vertex, int32_t subtask,
                            int32_t attempt_number);

// The checkpoint id a BATCH sink pre-commits and commits under (TaskDeployment::batch_commit_after_stage).
inline constexpr int64_t kBatchCommitCheckpoint = 1;

class StreamTask {
 public:
  StreamTask(TaskDeployment deployment, TaskListener* listener);
  ~StreamTask();
  StreamTask(const StreamTask&) = delete;
  StreamTask& operator=(const StreamTask&) = delete;

  void run();
  void cancel();
  // Flushes partially filled output buffers at the next loop iteration (the buffer-timeout flusher).
  void request_flush();
  Mailbox& mailbox() { return mailbox_; }
  const std::string& name() const { return name_; }

  // Checkpoint control, each run on the task thread (the cluster posts them as mails).
  // Source tasks; subtask 0 also stores the split enumerator's state taken at this trigger.
  void trigger_checkpoint(const CheckpointBarrier& barrier, std::vector<uint8_t> enumerator_state);
  void notify_checkpoint_complete(CheckpointId id);
  void notify_checkpoint_aborted(CheckpointId id);
  void finish();  // after the final checkpoint: end the task
  // Stop-with-savepoint (Flink's stopWithSavepoint; run on the task thread as mails). Source tasks only.
  // drain: the input ends as a bounded input does (final watermark MAX, so event-time timers and windows fire,
  // end of input, end of data to the next tasks), then the task waits for the final savepoint and finish().
  // No drain: the source emits nothing more and the task idles (mails only) until finish() or resume_source()
  // (the stop's savepoint failed: the job goes on).
  void stop_source(bool drain);
  void resume_source();
  // Stop without drain: when the task finishes, its operators' end_input() is not called (no windows fire, as
  // in Flink). Any thread; set on every task before any is told to finish.
  void skip_end_input_on_finish() { skip_end_input_.store(true); }
  void keep_end_input_on_finish() { skip_end_input_.store(false); }

 private:
  class EventSink;
  struct OperatorSlot;

  void build_chain();
  void open_chain();
  void end_chain();
  void close_chain() noexcept;
  void close_chain_or_throw();
  void loop();
  bool outputs_available() const;
  bool process_input();  // false when the input has ended
  void handle_event(int32_t channel, const RuntimeEvent& event, int32_t overtaken_buffers);
  void apply_barrier_actions(const std::vector<BarrierAction>& actions);
  void perform_checkpoint(const CheckpointBarrier& barrier, int64_t alignment_ms, bool unaligned = false);
  void emit_barrier(const CheckpointBarrier& barrier, bool unaligned);
  void persist_overtaken(int32_t channel, CheckpointId checkpoint, int32_t buffers);
  void complete_channel_state();
  // The checkpoint being collected was aborted or declined: forget its channel state (collecting_ becomes 0).
  void drop_channel_state();
  bool take_priority_events();  // true if it took any
  void check_alignment_deadlines();
  void restore_input_channel_state();
  bool process_recovered_input();  // true if it processed a recovered buffer
  void reach_end_of_data();
  // The task takes part in snapshots (checkpoints or savepoints): it has a responder.
  bool takes_snapshots() const { return d_.checkpoint_responder != nullptr; }
  // Periodic checkpoints are on (TaskDeployment::periodic_checkpoints): sinks commit on them, a final one ends the job.
  bool periodic_checkpoints() const { return takes_snapshots() && d_.periodic_checkpoints; }
  void flush_outputs();
  // How long the loop may sleep: `max`, or less when a processing-time timer comes due earlier.
  std::chrono::nanoseconds timer_wait_bound(std::chrono::nanoseconds max) const;
  // notifier_->wait(timer_wait_bound(max)), its time counted as idle (waiting for input) or back-pressured
  // (waiting for an output to take a buffer) in times_.
  void wait_idle(std::chrono::nanoseconds max);
  void wait_back_pressured(std::chrono::nanoseconds max);
  void publish_state_sizes();
  void fail(const Status& cause);
  // Fault injection: one relaxed load of this task's armed-points mask; the rare slow path claims and throws.
  bool failure_armed(FailurePoint p) const {
    return (armed_failures_->load(std::memory_order_relaxed) & failure_point_bit(p)) != 0;
  }
  void inject_failure(FailurePoint point, const StreamOperator* op, int64_t checkpoint_id);
  void build_inputs(OutputBase* head_input1, OutputBase* head_input2);
  void on_channel_ended(int32_t channel);
  // A buffer of tagged entries (TaskDeployment::batch_sorted_input, two inputs): each record to its input.
  Result<int64_t> deserialize_tagged(const uint8_t* data, size_t size);
  void apply_valve_output(int32_t channel, const StatusWatermarkValve::Output& out);
  StatusWatermarkValve& input_valve(int32_t channel) {
    return *inputs_[channel_input_[static_cast<size_t>(channel)]].valve;
  }
  int32_t local_channel(int32_t channel) const { return channel_local_[static_cast<size_t>(channel)]; }

  TaskDeployment d_;
  TaskListener* listener_;
  std::string name_;
  std::shared_ptr<TaskNotifier> notifier_;
  Mailbox mailbox_;
  // Processing-time timers of the chain's operators (keyed timers, periodic watermark emission): due ones run
  // in the loop between records, and the loop sleeps no longer than until the next one is due.
  std::unique_ptr<QueuedProcessingTimeService> processing_time_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> flush_requested_{false};

  std::vector<std::unique_ptr<OperatorSlot>> slots_;  // chain order, head first
  std::vector<std::unique_ptr<OutputBase>> owned_outputs_;
  std::vector<std::unique_ptr<RecordWriter>> writers_;
  SourceOperatorBase* source_ = nullptr;
  std::unique_ptr<EventSink> event_sink_;
  std::unique_ptr<SourceCoordinatorGateway> gateway_;
  bool opened_ = false;
  bool closed_ = false;
  // The input gate's byte count as last published (the numBytesIn gauge outlives the task).
  std::shared_ptr<std::atomic<int64_t>> bytes_in_published_ = std::make_shared<std::atomic<int64_t>>(0);
  // The task's idle and back-pressured time and its last checkpoint's figures, for its metrics (task_metrics.h).
  std::shared_ptr<TaskTimes> times_;

  // Checkpointing state (task thread).
  std::unique_ptr<SubtaskCheckpointCoordinator> subtask_checkpointing_;
  // With an input gate; its kind follows the checkpointing mode (make_checkpoint_barrier_handler).
  std::unique_ptr<CheckpointBarrierHandler> barrier_handler_;
  // barrier_handler_->barriers_overtake_data(), asked once: the loop checks it every turn.
  bool barriers_overtake_ = false;
  std::vector<ChainOperator> chain_ops_;
  std::vector<bool> end_of_data_;
  int32_t end_of_data_count_ = 0;
  bool at_end_of_data_ = false;  // input ended; waiting for the final checkpoint
  bool source_stopped_ = false;  // stop_source without drain: emit nothing until resume_source()
  std::atomic<bool> skip_end_input_{false};
  bool finish_requested_ = false;

  // Unaligned checkpoints (task thread).
  CheckpointId collecting_{0};  // the unaligned checkpoint whose channel state is being collected; 0: none
  checkpoint::SubtaskChannelState channel_state_;             // its output channel state
  std::vector<std::vector<checkpoint::ChannelStateBuffer>> input_state_;  // its input channel state, by channel
  // What priority barriers of the checkpoint being aligned overtook, by channel, until its snapshot.
  std::vector<std::vector<checkpoint::ChannelStateBuffer>> overtaken_stash_;
  CheckpointId stash_checkpoint_{0};  // the checkpoint overtaken_stash_ belongs to
  // Restored input channel state, in order, and each buffer's input channel (which input's deserializer reads it).
  std::vector<checkpoint::ChannelStateBuffer> recovered_input_;
  std::vector<int32_t> recovered_channel_;
  size_t recovered_next_ = 0;

  // Fault injection (task thread): the mask (never null) and the operators the points are attributed to.
  const std::atomic<uint32_t>* armed_failures_ = nullptr;
  StreamOperator* keyed_op_ = nullptr;  // the chain's first keyed operator
  StreamOperator* sink_op_ = nullptr;   // the chain's first sink

  // Event time (task thread): the chain's shared record timestamp. Periodic watermarks are processing-time
  // callbacks of the emitting operators (processing_time_).
  RecordTimestamp record_timestamp_;

  // The task's inputs (task thread): one, or two for a two-input head (Flink's StreamTwoInputProcessor). Each has
  // its deserializer, the head's input it feeds (where its valve's watermarks go too) and a watermark valve over
  // its channels; gate channel c belongs to input channel_input_[c] as its channel channel_local_[c].
  struct TaskInput {
    std::unique_ptr<RecordDeserializerBase> deserializer;
    std::unique_ptr<StatusWatermarkValve> valve;
    OutputBase* head = nullptr;
    int32_t num_channels = 0;
    int32_t ended_channels = 0;
  };
  std::vector<TaskInput> inputs_;
  std::vector<uint8_t> channel_input_;
  std::vector<int32_t> channel_local_;
  std::vector<bool> channel_aligned_;  // the channel's edge is forward or broadcast: never unaligned
  std::vector<bool> channel_ended_;
  TwoInputOperatorBase* two_input_head_ = nullptr;
  bool tagged_input_ = false;  // BATCH sorted two-input head: data buffers hold tagged entries
};

}  // namespace sluice::runtime
