// Sinks for the Nexmark runner: an exactly-once in-memory collector (what --verify compares with the reference)
// and a counting blackhole (benchmarks and unverified runs).
//
// ExactlyOnceCollectSink is a two-phase-commit sink (sink/two_phase_commit_sink.h) whose transactions live in
// memory: a writer buffers its rows; at a checkpoint's barrier the buffer becomes a committable (an id naming the
// job, subtask, attempt and checkpoint, plus the rows) kept in the checkpoint; when the checkpoint completes the
// committer moves it into the shared CommittedRows, once per id (a committable committed again after a restore is
// ignored). Rows of a failed attempt that no completed checkpoint covers are never committed, so after any number
// of failures and restores the committed rows are exactly those of one failure-free run. The committables hold the
// rows, so checkpoints grow with the output between two checkpoints: meant for verification runs.
// Thread-safety: CommittedRows and the row counter are shared by all subtasks (a lock per commit, not per row).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "sluice/sluice.h"

namespace sluice::nexmark::queries {

template <class Row>
struct RowTransaction {
  std::string id;  // "<job>/<subtask>/<attempt>/<checkpoint>"
  std::vector<Row> rows;
  SLUICE_FIELDS(RowTransaction, id, rows)
};

template <class Row>
class CommittedRows {
 public:
  // Idempotent per transaction id.
  void commit(const RowTransaction<Row>& t) {
    std::lock_guard lock(mu_);
    if (committed_.emplace(t.id, t.rows.size()).second) rows_.insert(rows_.end(), t.rows.begin(), t.rows.end());
  }
  std::vector<Row> rows() const {
    std::lock_guard lock(mu_);
    return rows_;
  }
  int64_t size() const {
    std::lock_guard lock(mu_);
    return static_cast<int64_t>(rows_.size());
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, size_t> committed_;
  std::vector<Row> rows_;
};

template <class Row>
class ExactlyOnceCollectSink final : public TwoPhaseCommittingSink<Row, RowTransaction<Row>> {
 public:
  using Txn = RowTransaction<Row>;
  explicit ExactlyOnceCollectSink(std::shared_ptr<CommittedRows<Row>> target) : target_(std::move(target)) {}

  std::unique_ptr<PrecommittingSinkWriter<Row, Txn>> create_writer(TwoPhaseCommitContext& ctx) const override {
    return std::make_unique<Writer>(ctx);
  }
  std::unique_ptr<Committer<Txn>> create_committer() const override { return std::make_unique<Commit>(target_); }

 private:
  class Writer final : public PrecommittingSinkWriter<Row, Txn> {
   public:
    explicit Writer(TwoPhaseCommitContext& ctx) : ctx_(ctx) {}
    void write(Row&& row) override { buffer_.push_back(std::move(row)); }
    void flush(bool) override {}
    std::vector<Txn> prepare_commit() override {
      if (buffer_.empty()) return {};
      Txn t;
      t.id = ctx_.job_id() + "/" + std::to_string(ctx_.subtask_index()) + "/" + std::to_string(ctx_.attempt_number()) +
             "/" + std::to_string(ctx_.next_checkpoint_id());
      t.rows = std::move(buffer_);
      buffer_.clear();
      return {std::move(t)};
    }

   private:
    TwoPhaseCommitContext& ctx_;
    std::vector<Row> buffer_;
  };
  class Commit final : public Committer<Txn> {
   public:
    explicit Commit(std::shared_ptr<CommittedRows<Row>> target) : target_(std::move(target)) {}
    void commit(const std::vector<Txn>& txns) override {
      for (const Txn& t : txns) target_->commit(t);
    }

   private:
    std::shared_ptr<CommittedRows<Row>> target_;
  };
  std::shared_ptr<CommittedRows<Row>> target_;
};

// Drops every row, counting them (added to the shared counter when a writer flushes or closes).
template <class Row>
class CountingDiscardSink final : public Sink<Row> {
 public:
  explicit CountingDiscardSink(std::shared_ptr<std::atomic<int64_t>> count) : count_(std::move(count)) {}
  std::unique_ptr<SinkWriter<Row>> create_writer(SinkInitContext&) const override {
    return std::make_unique<Writer>(count_);
  }

 private:
  class Writer final : public SinkWriter<Row> {
   public:
    explicit Writer(std::shared_ptr<std::atomic<int64_t>> c) : count_(std::move(c)) {}
    void write(Row&&) override { ++local_; }
    void flush(bool) override { publish(); }
    void close() override { publish(); }

   private:
    void publish() {
      count_->fetch_add(local_);
      local_ = 0;
    }
    std::shared_ptr<std::atomic<int64_t>> count_;
    int64_t local_ = 0;
  };
  std::shared_ptr<std::atomic<int64_t>> count_;
};

}  // namespace sluice::nexmark::queries
