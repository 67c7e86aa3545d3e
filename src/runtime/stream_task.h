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
// Failure: any exception (OperatorFailure names operator and subtask) ends the task as failed through
// TaskListener::on_task_failed; cancel() ends it as cancelled. Operators are closed in both cases.
// Failures armed in the job's FaultInjector are thrown here, on the task thread, at their named points.
// Thread-safety: run() on the task thread; cancel(), request_flush(), mailbox() from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_storage.h"
#include "graph/job_graph.h"
#include "runtime/checkpointing/aligned_barrier_handler.h"
#include "runtime/checkpointing/async_snapshot_executor.h"
#include "runtime/checkpointing/checkpoint_barrier.h"
#include "runtime/checkpointing/subtask_checkpoint_coordinator.h"
#include "runtime/fault_injection.h"
#include "runtime/mailbox.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/result_partition.h"
#include "runtime/network/task_notifier.h"
#include "runtime/watermark_valve.h"
#include "sluice/api/stream_graph.h"
#include "sluice/metrics/metric_group.h"
#include "sluice/source/source_operator.h"
#include "sluice/state/state_backend.h"

namespace sluice::runtime {

class TaskListener {
 public:
  virtual ~TaskListener() = default;
  // With checkpointing on, a task whose input ended reports it and waits: it finishes only after a final
  // checkpoint completed (so two-phase-commit sinks commit their last data), when told to by finish().
  virtual void on_task_end_of_data(int32_t vertex, int32_t subtask) = 0;
  virtual void on_task_finished(int32_t vertex, int32_t subtask) = 0;
  virtual void on_task_failed(int32_t vertex, int32_t subtask, const Status& cause) = 0;
  virtual void on_task_cancelled(int32_t vertex, int32_t subtask) = 0;
};

struct TaskOutput {
  const graph::JobEdge* edge = nullptr;
  std::shared_ptr<ResultPartition> partition;
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
  SourceCoordinatorBase* source_coordinator = nullptr;
  MetricGroup* job_metrics = nullptr;     // the task adds operator/subtask groups below it
  const Clock* clock = nullptr;
  std::string state_backend_type = "HASHMAP";
  RocksDBStateBackendOptions rocksdb;
  bool incremental_checkpoints = false;  // execution.checkpointing.incremental (RocksDB keyed state)
  std::string job_id;  // the run's JobId (hex)
  std::shared_ptr<TaskNotifier> notifier;  // the notifier the partitions and gate were built with
  FaultInjector* fault_injector = nullptr;  // the job's armed failures (fault_injection.h); null: none
  int64_t auto_watermark_interval_ms = 200;  // pipeline.auto-watermark-interval (0: no periodic emission)

  // Checkpointing; off when checkpoint_responder is null.
  CheckpointResponder* checkpoint_responder = nullptr;
  std::shared_ptr<checkpoint::CheckpointStorage> checkpoint_storage;
  AsyncSnapshotExecutor* async_executor = nullptr;
  // Restored state by operator id; `restored` is true when the job restarts from a checkpoint (operators
  // without an entry then start empty but see is_restored()).
  bool restored = false;
  std::map<std::string, OperatorRestoreState> restore;
};

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
  void handle_event(int32_t channel, const RuntimeEvent& event);
  void apply_barrier_actions(const std::vector<BarrierAction>& actions, const CheckpointBarrier* barrier);
  void perform_checkpoint(const CheckpointBarrier& barrier, int64_t alignment_ms);
  void reach_end_of_data();
  bool checkpointing() const { return d_.checkpoint_responder != nullptr; }
  void flush_outputs();
  void publish_state_sizes();
  void fail(const Status& cause);
  // Fault injection: one relaxed load of this task's armed-points mask; the rare slow path claims and throws.
  bool failure_armed(FailurePoint p) const {
    return (armed_failures_->load(std::memory_order_relaxed) & failure_point_bit(p)) != 0;
  }
  void inject_failure(FailurePoint point, const StreamOperator* op, int64_t checkpoint_id);
  void apply_valve_output(const StatusWatermarkValve::Output& out);
  void emit_periodic_watermarks_if_due();

  TaskDeployment d_;
  TaskListener* listener_;
  std::string name_;
  std::shared_ptr<TaskNotifier> notifier_;
  Mailbox mailbox_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> flush_requested_{false};

  std::vector<std::unique_ptr<OperatorSlot>> slots_;  // chain order, head first
  std::vector<std::unique_ptr<OutputBase>> owned_outputs_;
  std::vector<std::unique_ptr<RecordWriter>> writers_;
  std::unique_ptr<RecordDeserializerBase> deserializer_;
  SourceOperatorBase* source_ = nullptr;
  std::unique_ptr<EventSink> event_sink_;
  std::unique_ptr<SourceCoordinatorGateway> gateway_;
  bool opened_ = false;
  bool closed_ = false;
  // The input gate's byte count as last published (the numBytesIn gauge outlives the task).
  std::shared_ptr<std::atomic<int64_t>> bytes_in_published_ = std::make_shared<std::atomic<int64_t>>(0);

  // Checkpointing state (task thread).
  std::unique_ptr<SubtaskCheckpointCoordinator> subtask_checkpointing_;
  std::unique_ptr<AlignedBarrierHandler> barrier_handler_;
  std::vector<ChainOperator> chain_ops_;
  CheckpointBarrier pending_barrier_;
  int64_t alignment_start_ns_ = 0;
  std::vector<bool> end_of_data_;
  int32_t end_of_data_count_ = 0;
  bool at_end_of_data_ = false;  // input ended; waiting for the final checkpoint
  bool finish_requested_ = false;

  // Fault injection (task thread): the mask (never null) and the operators the points are attributed to.
  const std::atomic<uint32_t>* armed_failures_ = nullptr;
  StreamOperator* keyed_op_ = nullptr;  // the chain's first keyed operator
  StreamOperator* sink_op_ = nullptr;   // the chain's first sink

  // Event time (task thread): the chain's shared record timestamp, the input channels' watermark valve, the
  // head operator's input (where combined watermarks go), and the operators emitting periodic watermarks with
  // the next processing time they are due (a minimal local callback until the processing-time service).
  RecordTimestamp record_timestamp_;
  std::unique_ptr<StatusWatermarkValve> valve_;
  OutputBase* head_input_ = nullptr;
  std::vector<StreamOperator*> periodic_watermark_ops_;
  int64_t next_periodic_watermark_ms_ = 0;
};

}  // namespace sluice::runtime
