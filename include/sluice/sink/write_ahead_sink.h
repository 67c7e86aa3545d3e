// Write-ahead-log sinks (Flink's GenericWriteAheadSink): results are kept in operator state until
// their checkpoint completes, then written to any target, and after the data a committed-checkpoint marker is
// stored in the target - not atomically with the data. A failure between the two writes the data again after the
// restore: at-least-once, never a loss. Use it for targets without transactions; with a target that has them,
// the two-phase-commit sinks are exactly-once.
//
// Protocol (WriteAheadSinkOperator):
//  - records are buffered on the task thread; at checkpoint n's barrier the buffer becomes checkpoint n's batch,
//    kept in operator state with every batch not written yet;
//  - notify_checkpoint_complete(n): for each batch of a checkpoint <= n, in order: unless
//    is_checkpoint_committed(subtask, checkpoint) says the target has it, send_values(batch) and then
//    commit_checkpoint(subtask, checkpoint) (a missed notification is caught up by the next);
//  - restore from checkpoint n: the batches in n's state are written the same way when the operator opens (n is
//    complete), so none waits for a notification that may never come;
//  - without checkpointing, each batch is written when the input ends (a batch a savepoint's barrier took first,
//    with its marker, as a restore of that savepoint would write it).
// A batch is identified by the subtask that took it and its checkpoint id, and is one element of the operator
// state (never split between subtasks on restore): after a restore a subtask may write another index's batch,
// under that batch's identity. Markers also carry the run's job id (write_ahead_batch_id):
// a failover restores within the run and recognises them; a new run never mistakes an earlier run's markers for
// its own (checkpoint ids start again at 1), and a new run restored from a retained checkpoint writes the
// restored batches again (at-least-once).
// Cost: each checkpoint holds the sink's output since the last completed checkpoint; output becomes visible when
// its checkpoint completes. Threading: task thread only. Target errors (exceptions) fail the task; the restore
// writes the batch again.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sluice/sink/sink.h"

namespace sluice {

// Where a write-ahead-log sink writes (Flink's GenericWriteAheadSink#sendValues and CheckpointCommitter).
template <class T>
class WriteAheadTarget {
 public:
  virtual ~WriteAheadTarget() = default;
  // Whether commit_checkpoint(subtask, checkpoint) happened (in this or an earlier run).
  virtual bool is_checkpoint_committed(int32_t subtask, int64_t checkpoint) = 0;
  // Writes a batch durably (may be called again for the same batch after a failure).
  virtual void send_values(const std::vector<T>& values, int32_t subtask, int64_t checkpoint) = 0;
  // Stores the committed-checkpoint marker durably, after send_values.
  virtual void commit_checkpoint(int32_t subtask, int64_t checkpoint) = 0;
  virtual void close() {}
};

class WriteAheadContext : public SinkInitContext {
 public:
  virtual std::string job_id() const = 0;  // this run's id (32 hex digits)
};

// The identity of a batch in markers: "<job id>:<sink uid or name>:<subtask>:<checkpoint>".
inline std::string write_ahead_batch_id(const WriteAheadContext& ctx, int32_t subtask, int64_t checkpoint) {
  return ctx.job_id() + ":" + ctx.operator_uid() + ":" + std::to_string(subtask) + ":" + std::to_string(checkpoint);
}

template <class T>
class WriteAheadSink {
 public:
  using element_type = T;
  virtual ~WriteAheadSink() = default;
  virtual std::unique_ptr<WriteAheadTarget<T>> create_target(WriteAheadContext& ctx) const = 0;
  // What this sink must be the only running job to write to, taken at submission and held until the job ends
  // (sluice/core/exclusive_claim.h). Default: nothing.
  virtual std::vector<ExclusiveClaim> exclusive_claims(const ClaimContext& ctx) const {
    (void)ctx;
    return {};
  }
};

// Runs a WriteAheadSink in the task (added by DataStream::sink_to).
template <class T>
class WriteAheadSinkOperator final : public OneInputStreamOperator<T, T>,
                                     private detail::OperatorSinkContext<WriteAheadContext> {
 public:
  explicit WriteAheadSinkOperator(std::shared_ptr<const WriteAheadSink<T>> sink)
      : detail::OperatorSinkContext<WriteAheadContext>(this), sink_(std::move(sink)) {}

  void initialize_state(const OperatorRestoreState* restored) override {
    OneInputStreamOperator<T, T>::initialize_state(restored);
    // One element per batch, (checkpoint, subtask that took it, records): operator state is split between
    // subtasks element by element on restore, and a batch split in two would have one marker for two halves.
    state_ = &this->operator_state_.get_list_state(
        ListStateDescriptor<std::tuple<int64_t, int32_t, std::vector<T>>>("write-ahead-log"));
    for (auto& [cp, subtask, values] : state_->get()) pending_[{cp, subtask}] = std::move(values);
  }
  void open() override {
    target_ = call_user(this->info(), [&] { return sink_->create_target(*this); });
    write_up_to(INT64_MAX);  // the restored checkpoint is complete
  }
  void collect(T&& record) override { buffer_.push_back(std::move(record)); }
  void end_input() override {
    if (this->operator_setup().checkpointing) return;  // the final checkpoint takes the buffer
    write_up_to(INT64_MAX);  // batches taken at savepoints' barriers: no checkpoint will write them
    // No checkpoint, no restore: nothing to recognise later, so no marker.
    if (!buffer_.empty()) call_user(this->info(), [&] { target_->send_values(buffer_, this->info().subtask_index, 0); });
    buffer_.clear();
  }
  OperatorSnapshot snapshot_state(CheckpointId id, int64_t ts) override {
    if (!buffer_.empty()) {
      auto& batch = pending_[{id.value(), this->info().subtask_index}];
      for (auto& v : buffer_) batch.push_back(std::move(v));
      buffer_.clear();
    }
    std::vector<std::tuple<int64_t, int32_t, std::vector<T>>> all;
    for (const auto& [key, values] : pending_) all.emplace_back(key.first, key.second, values);
    state_->update(std::move(all));
    return OneInputStreamOperator<T, T>::snapshot_state(id, ts);
  }
  void notify_checkpoint_complete(CheckpointId id) override { write_up_to(id.value()); }
  void close() override {
    if (target_) target_->close();
  }

 private:
  void write_up_to(int64_t id) {
    for (auto it = pending_.begin(); it != pending_.end() && it->first.first <= id;) {
      const auto [cp, subtask] = it->first;
      call_user(this->info(), [&] {
        if (!target_->is_checkpoint_committed(subtask, cp)) {
          target_->send_values(it->second, subtask, cp);
          target_->commit_checkpoint(subtask, cp);
        }
      });
      it = pending_.erase(it);
    }
  }

  std::string job_id() const override { return this->operator_setup().job_id; }
  std::string operator_uid() const override {  // in batch ids: the name stands in for a missing uid
    return this->info().operator_uid.empty() ? this->info().operator_name : this->info().operator_uid;
  }

  std::shared_ptr<const WriteAheadSink<T>> sink_;
  std::unique_ptr<WriteAheadTarget<T>> target_;
  ListState<std::tuple<int64_t, int32_t, std::vector<T>>>* state_ = nullptr;
  std::map<std::pair<int64_t, int32_t>, std::vector<T>> pending_;  // (checkpoint, subtask) -> batch not written
  std::vector<T> buffer_;                                         // since the last barrier
};

}  // namespace sluice
