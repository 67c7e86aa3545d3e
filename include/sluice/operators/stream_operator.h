// StreamOperator: one step of a pipeline, run by a task thread (Flink's StreamOperator).
//
// Lifecycle, driven by the task: setup() once with the subtask's identity and wiring; open() before the
// first record (rich user functions get open(ctx) here); records through the Output<IN> interface (a
// OneInputStreamOperator *is* the Output of its predecessor in the chain); end_input() when a bounded input
// is exhausted; close() at the end, also after a failure (must not throw then). Operators of a chain are
// opened tail-first and ended/closed head-first, so downstream operators are ready before records arrive.
//
// A user-function exception escapes as OperatorFailure, which names the operator and subtask; the task
// fails and the job reports it. Thread-safety: an operator instance belongs to one task thread.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <typeindex>
#include <utility>
#include <vector>

#include "sluice/core/ids.h"
#include "sluice/core/status.h"
#include "sluice/functions/output.h"
#include "sluice/functions/runtime_context.h"
#include "sluice/operators/processing_time_service.h"
#include "sluice/state/incremental_snapshot.h"
#include "sluice/state/key_group.h"
#include "sluice/state/operator_state_store.h"
#include "sluice/state/state_backend.h"

namespace sluice::fs {
class FileSystemRegistry;  // src/fs/file_system_registry.h
}  // namespace sluice::fs

namespace sluice {

class SourceCoordinatorGateway;  // operators/source_operator.h

// What a snapshot is for; keyed operators pick their keyed state's format by it.
enum class OperatorSnapshotKind : uint8_t {
  kCheckpoint,          // execution.checkpointing.incremental decides (RocksDB: incremental files; else full)
  kCanonicalSavepoint,  // the canonical full format (portable across backends), whatever incremental says
  kNativeSavepoint,     // the backend's own format: RocksDB's files, all uploaded (self-contained); heap: full
};

// Everything the runtime hands an operator before open().
struct OperatorSetup {
  TaskInfo info;
  MetricGroup* metrics = nullptr;
  const Clock* clock = nullptr;
  KeyGroupRange key_group_range;       // this subtask's key groups (keyed operators)
  std::string state_backend_type = "HASHMAP";  // state.backend.type
  RocksDBStateBackendOptions rocksdb;          // state.backend.rocksdb.* (ROCKSDB only)
  SourceCoordinatorGateway* source_gateway = nullptr;  // source operators only
  // The task's processing-time service (operators/processing_time_service.h): timers and periodic watermarks
  // fire as part of the task loop. Null (operator tests): the operator makes its own on `clock`, fired by hand
  // (StreamOperator::own_processing_time_service()).
  ProcessingTimeService* processing_time_service = nullptr;
  // Periodic checkpoints are on (execution.checkpointing.interval > 0): a checkpoint will come after the end of input.
  // False also when the operator takes part in savepoints only (checkpointing off): none of them commits anything.
  bool checkpointing = false;
  // execution.checkpointing.incremental: keyed state on RocksDB snapshots incrementally (checkpoints only).
  bool incremental_checkpoints = false;
  std::string job_id;          // this run's JobId, 32 hex digits
  // Restored: the runs the restored snapshot descends from, as 32-hex-digit JobIds (CheckpointMetadata::lineage
  // and the run that took it); empty without a restore.
  std::vector<std::string> lineage_job_ids;
  // The task's current record timestamp (output.h), shared by the chain. Null (operator tests): the operator
  // keeps its own.
  RecordTimestamp* record_timestamp = nullptr;
  // pipeline.auto-watermark-interval: how often operators with periodic watermark generators emit (0: never).
  int64_t auto_watermark_interval_ms = 200;
  // execution.runtime-mode BATCH, for a keyed operator heading a task whose input arrives sorted (grouped) by
  // key (docs/batch.md; a two-input head gets both inputs in one key order): the keyed state holds one key at a
  // time. When the key changes, and at the end of input (of both inputs), the previous key's timers fire as if
  // time had reached the end (event and processing time jump to +inf for that key, as Flink's
  // BatchExecutionInternalTimeService) and its state is dropped.
  bool batch_sorted_input = false;
  // The job's filesystems by URI scheme (the local disk, s3:// from the job's s3.* keys), for operators that
  // read or write files (file sinks). Null (operator tests): the local disk only.
  std::shared_ptr<const fs::FileSystemRegistry> file_systems;
};

// A failure inside an operator: which operator, which subtask, and the cause's text.
class OperatorFailure : public std::runtime_error {
 public:
  OperatorFailure(const TaskInfo& info, const std::string& cause)
      : std::runtime_error("operator '" + info.operator_name + "' (subtask " +
                           std::to_string(info.subtask_index + 1) + "/" + std::to_string(info.parallelism) +
                           ") failed: " + cause),
        operator_name_(info.operator_name),
        subtask_index_(info.subtask_index),
        cause_(cause) {}
  const std::string& operator_name() const { return operator_name_; }
  int32_t subtask_index() const { return subtask_index_; }
  const std::string& cause() const { return cause_; }

 private:
  std::string operator_name_;
  int32_t subtask_index_;
  std::string cause_;
};

// Runs fn(); an exception other than an OperatorFailure from further down the chain is attributed to
// this operator. A StatusError (e.g. RocksDBError: a full disk under the state backend is kIOError, not a user
// function failure) keeps its code, with the operator named. try/catch costs nothing on the non-throwing path.
template <class Fn>
inline decltype(auto) call_user(const TaskInfo& info, Fn&& fn) {
  try {
    return fn();
  } catch (const OperatorFailure&) {
    throw;
  } catch (const StatusError& e) {
    throw StatusError(e.status().with_context("operator '" + info.operator_name + "' (subtask " +
                                              std::to_string(info.subtask_index + 1) + "/" +
                                              std::to_string(info.parallelism) + ")"));
  } catch (const std::exception& e) {
    throw OperatorFailure(info, e.what());
  } catch (...) {
    throw OperatorFailure(info, "unknown exception");
  }
}

// What a restored operator subtask gets back (prepared by the runtime from a completed checkpoint).
struct OperatorRestoreState {
  CheckpointId checkpoint_id{0};
  // Canonical key-group snapshots (state/key_group_snapshot.h) of the key groups in this subtask's range.
  std::vector<std::vector<uint8_t>> key_groups;
  // Incremental RocksDB snapshots of the old subtasks whose key-group range meets this subtask's
  // (state/incremental_snapshot.h), restored before key_groups.
  std::vector<IncrementalRestoreHandle> incremental_handles;
  // Operator state already redistributed for this subtask (OperatorStateStore format); may be empty.
  std::vector<uint8_t> operator_state;
};

// The synchronous part of an operator's snapshot. `write_keyed`, if set, is the asynchronous part of the
// keyed state: it may run on another thread while the task keeps processing, and appends the canonical
// key-group snapshots of the operator's range to *out, with offsets[i] the start of key group range.start()+i
// (num_key_groups()+1 entries). `operator_state` is taken synchronously (it is small).
// `incremental_keyed`, if set instead, is an incremental snapshot of the keyed state (RocksDB): the runtime
// uploads its files in the asynchronous part.
struct OperatorSnapshot {
  std::function<Status(std::vector<uint8_t>* out, std::vector<uint64_t>* offsets)> write_keyed;
  std::shared_ptr<IncrementalKeyedSnapshot> incremental_keyed;
  KeyGroupRange key_group_range;
  std::vector<uint8_t> operator_state;  // empty when the operator has none
};

class StreamOperator {
 public:
  virtual ~StreamOperator() = default;

  virtual void setup(const OperatorSetup& setup) {
    setup_ = setup;
    if (setup.record_timestamp != nullptr) record_timestamp_ = setup.record_timestamp;
    processing_time_ = setup.processing_time_service;
    if (processing_time_ == nullptr) {
      own_processing_time_ = std::make_unique<QueuedProcessingTimeService>(setup.clock);
      processing_time_ = own_processing_time_.get();
    }
    ctx_.emplace(setup.info, setup.metrics, setup.clock);
  }
  virtual void open() {}
  // Bounded input exhausted: flush buffered results (Flink's BoundedOneInput#endInput).
  virtual void end_input() {}
  virtual void close() {}
  // Approximate bytes of keyed state this operator holds (0 for stateless operators). Task thread only.
  virtual int64_t state_size_bytes() const { return 0; }
  // After open(): the restored keyed states that were migrated to the serializers the program registered them
  // with (state schema evolution; an incompatible one failed the registration, one compatible as is is not
  // listed), one line per state (StateSchemaReport::to_string). The task logs them.
  virtual std::vector<std::string> state_schema_reports() const { return {}; }

  // ---- checkpointing (Flink's StreamOperatorStateHandler / CheckpointListener) ----
  // After setup(), before open(): installs restored state (`restored` is null on a fresh start), then lets
  // user functions initialize theirs. Throws on corrupt or incompatible state (the task fails loudly).
  virtual void initialize_state(const OperatorRestoreState* restored) {
    if (restored != nullptr) {
      Status s = operator_state_.restore(restored->operator_state,
                                         "operator '" + setup_.info.operator_name + "' operator state");
      if (!s.is_ok()) throw StatusError(s);
    }
  }
  // The synchronous part of a checkpoint, on the task thread at the barrier.
  virtual OperatorSnapshot snapshot_state(CheckpointId, int64_t /*timestamp_ms*/) {
    OperatorSnapshot snap;
    if (!operator_state_.empty()) snap.operator_state = operator_state_.snapshot();
    return snap;
  }
  virtual void notify_checkpoint_complete(CheckpointId) {}
  virtual void notify_checkpoint_aborted(CheckpointId) {}
  // Set by the runtime right before snapshot_state: what the snapshot is for, which decides the keyed state's
  // format (docs/savepoints.md).
  void set_snapshot_kind(OperatorSnapshotKind kind) { snapshot_kind_ = kind; }
  OperatorStateStore& operator_state_store() { return operator_state_; }

  const TaskInfo& info() const { return setup_.info; }
  RuntimeContext& runtime_context() { return *ctx_; }
  const OperatorSetup& operator_setup() const { return setup_; }

  // Routing for side outputs (process functions); filled by the runtime from the graph.
  SideOutputs& side_outputs() { return side_outputs_; }

  // ---- event time ----
  // A watermark reached this operator (from its input or, for a source, its own generators); task thread.
  // Watermarks reaching an operator never decrease (the task's valve ensures it). The default records it as the
  // current watermark and forwards it to every output; keyed operators fire their due event-time timers first
  // (in timestamp order, each with its time as the current record timestamp), then forward
  // (KeyedOperatorBase::process_watermark).
  virtual void process_watermark(int64_t watermark_ms) {
    current_watermark_ms_ = watermark_ms;
    forward_watermark(watermark_ms);
  }
  // The input became idle (true) or active again (false). Default: forwarded.
  virtual void process_watermark_status(bool idle) {
    if (watermark_output_ != nullptr) watermark_output_->emit_watermark_status(idle);
    side_outputs_.emit_watermark_status(idle);
  }
  int64_t current_watermark_ms() const { return current_watermark_ms_; }
  // Processing time and callbacks at processing times, on the task thread (after setup()): the task's service,
  // or without a task the operator's own (tests fire it with own_processing_time_service()->fire_due()).
  ProcessingTimeService& processing_time_service() { return *processing_time_; }
  QueuedProcessingTimeService* own_processing_time_service() { return own_processing_time_.get(); }
  // The record timestamp shared by the chain (see RecordTimestamp in output.h).
  RecordTimestamp& record_timestamp() { return *record_timestamp_; }

 protected:
  void forward_watermark(int64_t watermark_ms) {
    if (watermark_output_ != nullptr) watermark_output_->emit_watermark(watermark_ms);
    side_outputs_.emit_watermark(watermark_ms);
  }
  // Where process_watermark forwards to (the main output); set with the output.
  OutputBase* watermark_output_ = nullptr;
  int64_t current_watermark_ms_ = kMinWatermark;
  RecordTimestamp own_record_timestamp_;
  RecordTimestamp* record_timestamp_ = &own_record_timestamp_;
  // Periodic watermark emission (pipeline.auto-watermark-interval > 0): `emit` every interval on the
  // processing-time service, as Flink's watermark-emitting operators do. Call from open().
  void schedule_periodic_watermarks(std::function<void()> emit) {
    if (setup_.auto_watermark_interval_ms > 0) {
      processing_time_->schedule_with_fixed_delay(setup_.auto_watermark_interval_ms, std::move(emit));
    }
  }
  ProcessingTimeService* processing_time_ = nullptr;
  std::unique_ptr<QueuedProcessingTimeService> own_processing_time_;
  OperatorSetup setup_;
  std::optional<RuntimeContext> ctx_;
  SideOutputs side_outputs_;
  OperatorStateStore operator_state_;
  OperatorSnapshotKind snapshot_kind_ = OperatorSnapshotKind::kCheckpoint;
};

// An operator with one input of type IN and main output OUT. Its input interface is Output<IN>, so the
// upstream operator of a chain calls collect() on it directly.
template <class IN, class OUT>
class OneInputStreamOperator : public StreamOperator, public Output<IN> {
 public:
  using input_type = IN;
  using output_type = OUT;
  void set_output(Output<OUT>* out) {
    output_ = out;
    watermark_output_ = out;
  }
  Output<OUT>* output() const { return output_; }
  // The input side of event time: a watermark or status from upstream (the previous operator of the chain or
  // the task's valve) reaches process_watermark / process_watermark_status.
  void emit_watermark(int64_t watermark_ms) override { this->process_watermark(watermark_ms); }
  void emit_watermark_status(bool idle) override { this->process_watermark_status(idle); }

 protected:
  Output<OUT>* output_ = nullptr;
};

}  // namespace sluice
