// Two-phase-commit sinks (Flink's sink2 TwoPhaseCommittingSink: a writer that turns its data into
// committables at the barrier, and a committer), for end-to-end exactly-once output.
//
// Protocol (Flink's two-phase commit, DESIGN.md section 3 "Sinks"):
//  1. write() records into the current transaction (a file, a database transaction, ...);
//  2. at checkpoint n's barrier: prepare_commit() pre-commits the transaction (flush, fsync, keep it
//     invisible) and returns committables; they are kept in the operator's state as part of checkpoint n;
//  3. notify_checkpoint_complete(n): commit every committable of checkpoints <= n (notifications are
//     best-effort, so a later one commits what an earlier missed one would have);
//  4. restore from checkpoint n: the committables recorded in it are committed again (commit is
//     idempotent), and the writer is created with recover = true so it aborts lingering transactions the
//     state does not know (pre-committed after checkpoint n, or never pre-committed).
// Writer state (optional; Flink's SupportsWriterState / StatefulSinkWriter): a sink whose has_writer_state() is
// true gets snapshot_writer_state() called at every barrier, right after prepare_commit(); the entries are kept in
// the checkpoint as operator list state "writer-state" next to "pending-committables" (split-distributed on a
// rescaled restore: each entry goes to one subtask, a subtask may get none or several) and handed back to the
// restored writer through TwoPhaseCommitContext::restored_writer_state_bytes(). The file sink keeps its open part
// files there. Sinks without writer state register no such state (their checkpoints are unchanged).
// With checkpointing off, everything is committed when the input ends, as Flink's committer does - also what a
// savepoint's barrier pre-committed meanwhile (a savepoint commits nothing by itself, and no checkpoint will come):
// the run that goes on to the end commits it then, a run restored from the savepoint commits it when it opens.
// Threading: task thread only. Committers must be idempotent: committing something already committed is not
// an error.
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/serializer.h"
#include "sluice/detail/sink/committable_collector.h"
#include "sluice/sink/sink.h"

namespace sluice {

template <class T, class CommT>
class PrecommittingSinkWriter {
 public:
  virtual ~PrecommittingSinkWriter() = default;
  virtual void write(T&& record) = 0;
  // The input ended: write out buffered data (committables follow from prepare_commit).
  virtual void flush(bool end_of_input) = 0;
  // Pre-commits the current transaction and opens the next; returns what the committer must commit.
  virtual std::vector<CommT> prepare_commit() = 0;
  // Writer state of the checkpoint `checkpoint_id` (called right after prepare_commit() when the sink's
  // has_writer_state() is true): opaque entries, each restored to exactly one subtask. Default: none.
  virtual std::vector<std::vector<uint8_t>> snapshot_writer_state(int64_t checkpoint_id) {
    (void)checkpoint_id;
    return {};
  }
  // The task ends (finished, cancelled or failed). What no checkpoint references may be cleaned up here; what a
  // checkpoint taken by this writer references must stay (a restore may need it).
  virtual void close() {}
};

template <class CommT>
class Committer {
 public:
  virtual ~Committer() = default;
  // Makes the committables visible. Idempotent. Throws on failure (the task fails and recovers).
  virtual void commit(const std::vector<CommT>& committables) = 0;
};

class TwoPhaseCommitContext : public SinkInitContext {
 public:
  // The id of this run (32 hex digits): part of transaction / file names, so no run mistakes another
  // run's artifacts for its own.
  virtual std::string job_id() const = 0;
  // Restored: the ids of the runs whose artifacts the restored state may own - the run that took the snapshot
  // and the runs it was restored from in turn (CheckpointMetadata::lineage). A restored writer cleans up only
  // artifacts of these runs and of its own. Empty without a restore.
  virtual std::vector<std::string> lineage_job_ids() const { return {}; }
  // True when the job restarts from a checkpoint: the writer must abort lingering transactions.
  virtual bool is_restored() const = 0;
  // Committables the restored checkpoint still owns (being committed now): the writer must keep them.
  virtual const std::vector<std::vector<uint8_t>>& restored_committables_bytes() const = 0;
  // The next checkpoint id this writer's data will belong to.
  virtual int64_t next_checkpoint_id() const = 0;
  // The writer state entries this subtask restored (snapshot_writer_state of some old subtasks); empty without a
  // restore or when the sink has no writer state.
  virtual const std::vector<std::vector<uint8_t>>& restored_writer_state_bytes() const {
    static const std::vector<std::vector<uint8_t>> none;
    return none;
  }
};

// What a sink may check when its job is submitted (milliseconds; 0 when checkpointing is off or the job does not
// restart).
struct SinkSubmissionContext {
  bool checkpointing = false;
  int64_t checkpoint_interval_ms = 0;  // execution.checkpointing.interval
  int64_t checkpoint_timeout_ms = 0;   // execution.checkpointing.timeout
  int64_t max_restart_delay_ms = 0;    // the restart strategy's longest backoff between a failure and the restart
};

template <class T, class CommT>
class TwoPhaseCommittingSink {
 public:
  using element_type = T;
  using committable_type = CommT;
  virtual ~TwoPhaseCommittingSink() = default;
  virtual std::unique_ptr<PrecommittingSinkWriter<T, CommT>> create_writer(TwoPhaseCommitContext& ctx) const = 0;
  virtual std::unique_ptr<Committer<CommT>> create_committer() const = 0;
  // True when the writer keeps state in checkpoints (snapshot_writer_state). Default: false.
  virtual bool has_writer_state() const { return false; }
  // Warnings about the job's settings, logged when the job is submitted (e.g. a transaction timeout shorter than
  // a checkpoint can take to commit). Default: none.
  virtual std::vector<std::string> submission_warnings(const SinkSubmissionContext& job) const {
    (void)job;
    return {};
  }
  // What this sink must be the only running job to write to (an output folder, a transaction-id prefix), taken
  // at submission and held until the job ends (sluice/core/exclusive_claim.h). Default: nothing.
  virtual std::vector<ExclusiveClaim> exclusive_claims(const ClaimContext& ctx) const {
    (void)ctx;
    return {};
  }
  // The committer of one subtask, told which subtask it serves and whether (and from which checkpoint) it
  // restores, before it commits the restored committables. Default: create_committer().
  virtual std::unique_ptr<Committer<CommT>> create_subtask_committer(TwoPhaseCommitContext& ctx) const {
    (void)ctx;
    return create_committer();
  }
};

// Runs a TwoPhaseCommittingSink in the task: writer + committables in state + committer on notify.
template <class T, class CommT>
class TwoPhaseCommitSinkOperator final : public OneInputStreamOperator<T, T>,
                                         private detail::OperatorSinkContext<TwoPhaseCommitContext> {
 public:
  explicit TwoPhaseCommitSinkOperator(std::shared_ptr<const TwoPhaseCommittingSink<T, CommT>> sink)
      : detail::OperatorSinkContext<TwoPhaseCommitContext>(this), sink_(std::move(sink)) {}

  void initialize_state(const OperatorRestoreState* restored) override {
    OneInputStreamOperator<T, T>::initialize_state(restored);
    committables_.initialize(this->operator_state_, restored != nullptr,
                             restored != nullptr ? restored->checkpoint_id.value() : 0);
    if (sink_->has_writer_state()) {
      writer_state_ = &this->operator_state_.get_list_state(ListStateDescriptor<std::vector<uint8_t>>("writer-state"));
      restored_writer_state_ = writer_state_->get();
    }
  }
  void open() override {
    committer_ = call_user(this->info(), [&] { return sink_->create_subtask_committer(*this); });
    // Recover-and-commit: what the restored checkpoint pre-committed is committed (again, idempotently).
    commit_up_to(std::numeric_limits<int64_t>::max());
    writer_ = call_user(this->info(), [&] { return sink_->create_writer(*this); });
  }
  void collect(T&& record) override {
    call_user(this->info(), [&] { writer_->write(std::move(record)); });
  }
  void end_input() override {
    call_user(this->info(), [&] { writer_->flush(true); });
    if (!this->operator_setup().checkpointing) {  // no checkpoint will come: commit now
      commit_up_to(std::numeric_limits<int64_t>::max());  // pre-committed at savepoints' barriers
      auto comms = call_user(this->info(), [&] { return writer_->prepare_commit(); });
      call_user(this->info(), [&] { committer_->commit(comms); });
    }
  }
  OperatorSnapshot snapshot_state(CheckpointId id, int64_t ts) override {
    auto comms = call_user(this->info(), [&] { return writer_->prepare_commit(); });
    if (writer_state_ != nullptr) {
      writer_state_->update(call_user(this->info(), [&] { return writer_->snapshot_writer_state(id.value()); }));
    }
    committables_.add_and_snapshot(id.value(), std::move(comms));
    return OneInputStreamOperator<T, T>::snapshot_state(id, ts);
  }
  void notify_checkpoint_complete(CheckpointId id) override { commit_up_to(id.value()); }
  void close() override {
    if (writer_) writer_->close();
  }

 private:
  void commit_up_to(int64_t id) {
    std::vector<CommT> batch = committables_.take_up_to(id);
    if (!batch.empty()) call_user(this->info(), [&] { committer_->commit(batch); });
  }

  std::string job_id() const override { return this->operator_setup().job_id; }
  std::vector<std::string> lineage_job_ids() const override { return this->operator_setup().lineage_job_ids; }
  bool is_restored() const override { return committables_.is_restored(); }
  const std::vector<std::vector<uint8_t>>& restored_committables_bytes() const override {
    return committables_.restored_bytes();
  }
  int64_t next_checkpoint_id() const override { return committables_.next_checkpoint_id(); }
  const std::vector<std::vector<uint8_t>>& restored_writer_state_bytes() const override {
    return restored_writer_state_;
  }

  std::shared_ptr<const TwoPhaseCommittingSink<T, CommT>> sink_;
  std::unique_ptr<PrecommittingSinkWriter<T, CommT>> writer_;
  std::unique_ptr<Committer<CommT>> committer_;
  detail::CommittableCollector<CommT> committables_;
  ListState<std::vector<uint8_t>>* writer_state_ = nullptr;  // only when the sink has writer state
  std::vector<std::vector<uint8_t>> restored_writer_state_;
};

}  // namespace sluice
