// The sink API (Flink's sink2 model): a Sink creates one SinkWriter per parallel subtask.
//
// write() is called for every record on the task thread; flush(end_of_input=false) at every checkpoint
// barrier, before the snapshot (Flink's SinkWriter#flush at prepareSnapshotPreBarrier: an at-least-once or
// idempotent sink writes out what it buffered, so a completed checkpoint covers it); flush(end_of_input=true)
// once when a bounded input ends; close() at the end (also after a failure: release resources, don't throw). Exactly-once sinks
// (writers that produce committables, and a committer) come with checkpointing. Exceptions thrown by a
// writer fail the task like any user function.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/exclusive_claim.h"
#include "sluice/operators/stream_operator.h"

namespace sluice {

class SinkInitContext {
 public:
  virtual ~SinkInitContext() = default;
  virtual int32_t subtask_index() const = 0;
  virtual int32_t parallelism() const = 0;
  virtual int32_t attempt_number() const = 0;
  virtual MetricGroup& metric_group() = 0;
  virtual const Clock& clock() const = 0;
  // The job's name (execute("name")) and the sink operator's uid ("" when none was set): stable across runs,
  // unlike the job id, so sinks build transaction ids and markers a restored run recognises from them.
  virtual std::string job_name() const = 0;
  virtual std::string operator_uid() const = 0;
  // The job's filesystems by URI scheme (plain paths and file://, and s3:// configured from the job's s3.*
  // keys; docs/storage.md), for sinks that write files. Null: the local disk only (a context outside a job).
  virtual std::shared_ptr<const fs::FileSystemRegistry> file_systems() const { return nullptr; }
};

template <class T>
class SinkWriter {
 public:
  virtual ~SinkWriter() = default;
  virtual void write(T&& record) = 0;
  virtual void flush(bool end_of_input) = 0;
  virtual void close() {}
};

template <class T>
class Sink {
 public:
  using element_type = T;
  virtual ~Sink() = default;
  virtual std::unique_ptr<SinkWriter<T>> create_writer(SinkInitContext& ctx) const = 0;
  // What this sink must be the only running job to write to (an output folder), taken at submission and held
  // until the job ends (sluice/core/exclusive_claim.h). Default: nothing.
  virtual std::vector<ExclusiveClaim> exclusive_claims(const ClaimContext& ctx) const {
    (void)ctx;
    return {};
  }
};

namespace detail {
// A sink context (SinkInitContext or an extension of it) answered from the sink operator's task info and setup:
// the part every sink operator shares. `op` is the operator itself.
template <class Ctx>
class OperatorSinkContext : public Ctx {
 public:
  explicit OperatorSinkContext(StreamOperator* op) : op_(op) {}
  int32_t subtask_index() const override { return op_->info().subtask_index; }
  int32_t parallelism() const override { return op_->info().parallelism; }
  int32_t attempt_number() const override { return op_->info().attempt_number; }
  MetricGroup& metric_group() override { return *op_->operator_setup().metrics; }
  const Clock& clock() const override { return *op_->operator_setup().clock; }
  std::string job_name() const override { return op_->info().job_name; }
  std::string operator_uid() const override { return op_->info().operator_uid; }
  std::shared_ptr<const fs::FileSystemRegistry> file_systems() const override {
    return op_->operator_setup().file_systems;
  }

 private:
  StreamOperator* op_;
};
}  // namespace detail

// Runs a sink's writer in the task (the end of a chain).
template <class T>
class SinkWriterOperator final : public OneInputStreamOperator<T, T>, private detail::OperatorSinkContext<SinkInitContext> {
 public:
  explicit SinkWriterOperator(std::shared_ptr<const Sink<T>> sink)
      : detail::OperatorSinkContext<SinkInitContext>(this), sink_(std::move(sink)) {}
  void open() override {
    writer_ = call_user(this->info(), [&] { return sink_->create_writer(*this); });
  }
  void collect(T&& record) override {
    call_user(this->info(), [&] { writer_->write(std::move(record)); });
  }
  void end_input() override {
    call_user(this->info(), [&] { writer_->flush(true); });
  }
  OperatorSnapshot snapshot_state(CheckpointId id, int64_t ts) override {
    call_user(this->info(), [&] { writer_->flush(false); });
    return OneInputStreamOperator<T, T>::snapshot_state(id, ts);
  }
  void close() override {
    if (writer_) writer_->close();
  }

 private:
  std::shared_ptr<const Sink<T>> sink_;
  std::unique_ptr<SinkWriter<T>> writer_;
};

}  // namespace sluice
