// The keyed job every cell of `sluice guarantees` runs, and what a target (files + SQLite, PostgreSQL, Kafka)
// provides for it.
//
// The job: log source (parallelism 1; replayable or not, log_sources.h) -> key_by(v % keys) -> running count per
// key (keyed ValueState) -> sink (parallelism 2). Each record yields one result (key, n): the key's n-th record.
// A failure-free run's results are therefore known from the input alone: for every key k, (k, 1..c_k) appended,
// or (k, c_k) as the final value of an upserting sink.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "guarantees/guarantee_table.h"
#include "sluice/core/serializer.h"
#include "sluice/sink/write_ahead_sink.h"
#include "sluice/sluice.h"

namespace sluice::guarantees {

struct KeyCount {
  int64_t key = 0;
  int64_t count = 0;  // this is the key's count-th record
  bool operator==(const KeyCount&) const = default;
  SLUICE_FIELDS(KeyCount, key, count)
};

// What a target's sink holds after a run.
struct TargetContents {
  std::vector<KeyCount> rows;
  bool upserted = false;  // true: one row per key (the latest value); false: every result appended
};

class CellTarget {
 public:
  virtual ~CellTarget() = default;
  virtual std::string name() const = 0;  // "files + SQLite", "PostgreSQL", ...
  virtual bool supports(SinkKind kind) const = 0;
  // Makes the sink's target empty for a run whose scratch folder is `run_dir` (exists, empty) and unique `tag`.
  virtual Status prepare(SinkKind kind, const std::string& run_dir, const std::string& tag) = 0;
  // Adds the sink to the job. `marker_crash`, for the write-ahead-log sink: when set to n > 0, its next
  // committed-checkpoint marker write for a checkpoint >= n fails once, after the batch's data (CrashBeforeMarkerSink).
  virtual DataStreamSink<KeyCount> add_sink(const DataStream<KeyCount>& results, SinkKind kind,
                                            const std::string& run_dir, const std::string& tag,
                                            std::shared_ptr<std::atomic<int64_t>> marker_crash) = 0;
  virtual Result<TargetContents> read(SinkKind kind, const std::string& run_dir, const std::string& tag) = 0;
};

// A write-ahead-log sink whose target fails once, when armed (with the first checkpoint id it may fail at),
// between a batch's data and its committed-checkpoint marker: the write-ahead log's at-least-once window, hit on purpose. The failure is an exception
// from the sink (the task fails and the job recovers as from any failure); unarmed it only delegates.
template <class T>
class CrashBeforeMarkerSink final : public WriteAheadSink<T> {
 public:
  CrashBeforeMarkerSink(std::shared_ptr<const WriteAheadSink<T>> inner, std::shared_ptr<std::atomic<int64_t>> armed)
      : inner_(std::move(inner)), armed_(std::move(armed)) {}
  std::unique_ptr<WriteAheadTarget<T>> create_target(WriteAheadContext& ctx) const override {
    return std::make_unique<Target>(inner_->create_target(ctx), armed_);
  }

 private:
  class Target final : public WriteAheadTarget<T> {
   public:
    Target(std::unique_ptr<WriteAheadTarget<T>> inner, std::shared_ptr<std::atomic<int64_t>> armed)
        : inner_(std::move(inner)), armed_(std::move(armed)) {}
    bool is_checkpoint_committed(int32_t s, int64_t c) override { return inner_->is_checkpoint_committed(s, c); }
    void send_values(const std::vector<T>& v, int32_t s, int64_t c) override { inner_->send_values(v, s, c); }
    void commit_checkpoint(int32_t s, int64_t c) override {
      int64_t from = armed_ ? armed_->load() : 0;
      if (from > 0 && c >= from && armed_->compare_exchange_strong(from, 0)) {
        throw std::runtime_error("injected failure between a batch's data and its committed-checkpoint marker");
      }
      inner_->commit_checkpoint(s, c);
    }
    void close() override { inner_->close(); }

   private:
    std::unique_ptr<WriteAheadTarget<T>> inner_;
    std::shared_ptr<std::atomic<int64_t>> armed_;
  };
  std::shared_ptr<const WriteAheadSink<T>> inner_;
  std::shared_ptr<std::atomic<int64_t>> armed_;
};

// "<key>,<count>", the line format of file targets.
inline void encode_key_count(const KeyCount& r, std::string& out) {
  out += std::to_string(r.key) + "," + std::to_string(r.count);
}

}  // namespace sluice::guarantees
