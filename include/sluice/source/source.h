// The source API (Flink's FLIP-27 model), the one every built-in source uses, so users write their own.
//
//  - A Source<T, SplitT> describes where data comes from and creates the two halves below.
//  - Splits (SplitT) are units of work (a file, a Kafka partition, a Nexmark split). A split carries its
//    position: the reader's snapshot_state() returns its splits with their current offsets, which the
//    checkpoint stores and a restore seeks back to. SplitT needs `std::string split_id() const` and a
//    TypeSerializer (SLUICE_FIELDS), because splits travel between coordinator and readers as bytes.
//  - The SplitEnumerator runs once per source on the coordinator side: it discovers splits and assigns
//    them to reader subtasks (on registration, or when a reader asks with send_split_request()).
//  - A SourceReader runs in each parallel source subtask; the task calls poll_next() repeatedly.
//
// Threading: enumerator methods are called one at a time (under the coordinator's lock) from any thread;
// reader methods are called only by the reader's task thread. poll_next must not block for long: return
// kNothingAvailable and the task waits idle_wait_hint() (or until a split arrives).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/ids.h"
#include "sluice/functions/output.h"
#include "sluice/source/source_watermarks.h"

namespace sluice {

class MetricGroup;
class Clock;

enum class Boundedness { kBounded, kContinuousUnbounded };
enum class InputStatus { kMoreAvailable, kNothingAvailable, kEndOfInput };

template <class T>
class ReaderOutput;

// Where a reader emits records. collect(T&&) passes the record down the chain by move; a reader that refills
// one scratch record per call may pass std::move(scratch) and refill it next time (a moved-from record is
// valid; operators that do not keep the record leave its capacity for reuse). collect(record, timestamp_ms)
// attaches the source's own event time (e.g. a Kafka record timestamp), which the WatermarkStrategy's
// timestamp assigner receives; without a strategy, timestamps are ignored.
template <class T>
class SourceOutput {
 public:
  explicit SourceOutput(Output<T>* out) : out_(out) {}
  void collect(T&& record) { collect(std::move(record), kNoRecordTimestamp); }
  void collect(const T& record) { collect(T(record)); }
  void collect(T&& record, int64_t timestamp_ms) {
    if (watermarks_ == nullptr) {
      out_->collect(std::move(record));
      return;
    }
    if (split_ == nullptr) split_ = &watermarks_->default_split();
    watermarks_->collect(*split_, std::move(record), timestamp_ms);
  }

 protected:
  template <class, class>
  friend class SourceOperator;
  template <class>
  friend class ReaderOutput;
  Output<T>* out_;
  SourceWatermarks<T>* watermarks_ = nullptr;             // null: the source has no WatermarkStrategy
  typename SourceWatermarks<T>::Split* split_ = nullptr;  // null: the default split, resolved at first use
};

// The reader's output. A reader that reads several splits should emit each split's records through
// create_output_for_split(id), so that each split gets its own watermark generator (per-split watermarks,
// combined per subtask) and its own checkpointed event-time state; release_output_for_split(id) when the split
// is finished (it then holds the subtask's watermark back no longer). Records collected here directly belong
// to one default split. Without a WatermarkStrategy, split outputs are this output (no cost).
template <class T>
class ReaderOutput : public SourceOutput<T> {
 public:
  explicit ReaderOutput(Output<T>* out) : SourceOutput<T>(out) {}
  SourceOutput<T>& create_output_for_split(const std::string& split_id) {
    if (this->watermarks_ == nullptr) return *this;
    auto& out = split_outputs_[split_id];
    if (!out) {
      out = std::make_unique<SourceOutput<T>>(this->out_);
      out->watermarks_ = this->watermarks_;
      out->split_ = &this->watermarks_->split(split_id);
    }
    return *out;
  }
  void release_output_for_split(const std::string& split_id) {
    if (this->watermarks_ == nullptr) return;
    split_outputs_.erase(split_id);
    this->watermarks_->release(split_id);
  }

 private:
  std::map<std::string, std::unique_ptr<SourceOutput<T>>> split_outputs_;
};

class SourceReaderContext {
 public:
  virtual ~SourceReaderContext() = default;
  virtual int32_t subtask_index() const = 0;
  virtual int32_t parallelism() const = 0;
  // Asks the enumerator for a split (answered asynchronously with add_splits or notify_no_more_splits).
  virtual void send_split_request() = 0;
  virtual MetricGroup& metric_group() = 0;
  virtual const Clock& clock() const = 0;
};

template <class SplitT>
class SplitEnumeratorContext {
 public:
  virtual ~SplitEnumeratorContext() = default;
  virtual int32_t current_parallelism() const = 0;
  virtual void assign_split(SplitT split, int32_t subtask) = 0;
  // Tells a reader no split will come: once it has finished its splits, its input ends.
  virtual void signal_no_more_splits(int32_t subtask) = 0;
  // Periodic work off the enumerator's thread (Flink's callAsync, e.g. partition discovery): `work` runs on a worker
  // thread after initial_delay_ms and then every period_ms (0: once), without the enumerator's lock (it may block
  // on I/O; it must not touch the enumerator); the function it returns (may be empty) runs with the enumerator's
  // lock, like every other enumerator call, and may assign splits. Exceptions are logged; the schedule goes on.
  // Stops when the enumerator closes. See async_calls.h.
  virtual void call_async(std::function<std::function<void()>()> work, int64_t initial_delay_ms,
                          int64_t period_ms) = 0;
};

template <class SplitT>
class SplitEnumerator {
 public:
  virtual ~SplitEnumerator() = default;
  virtual void start() {}
  // A reader subtask registered (it is ready for assignments).
  virtual void add_reader(int32_t subtask) = 0;
  virtual void handle_split_request(int32_t subtask) = 0;
  // Splits assigned to a reader that failed before checkpointing them come back here.
  virtual void add_splits_back(std::vector<SplitT> splits, int32_t subtask) = 0;
  // The enumerator's own state at a checkpoint (e.g. splits not assigned yet), as bytes the source's
  // restore_enumerator() understands. Taken before the checkpoint's barriers leave the sources; split
  // assignments made after it reach readers only after they took their snapshot (no split is lost or
  // assigned twice on restore).
  virtual std::vector<uint8_t> snapshot_state(CheckpointId checkpoint_id) = 0;
  virtual void close() {}
};

template <class T, class SplitT>
class SourceReader {
 public:
  virtual ~SourceReader() = default;
  virtual void start() {}
  virtual InputStatus poll_next(ReaderOutput<T>& output) = 0;
  virtual void add_splits(std::vector<SplitT> splits) = 0;
  virtual void notify_no_more_splits() = 0;
  // The reader's splits with their current positions (for checkpoints).
  virtual std::vector<SplitT> snapshot_state() = 0;
  // Checkpoint `checkpoint_id` completed; `splits` is what snapshot_state() returned for it (Flink's
  // SourceReader#notifyCheckpointComplete: e.g. the Kafka source commits these offsets back to Kafka). Not called
  // for checkpoints that failed, nor again for one a later notification subsumed. Default: nothing.
  virtual void notify_checkpoint_complete(CheckpointId checkpoint_id, const std::vector<SplitT>& splits) {
    (void)checkpoint_id;
    (void)splits;
  }
  // How long the task may sleep after kNothingAvailable before polling again (it wakes earlier on a split
  // assignment or any other mail).
  virtual std::chrono::nanoseconds idle_wait_hint() const { return std::chrono::milliseconds(1); }
  virtual void close() {}
};

template <class T, class SplitT>
class Source {
 public:
  using element_type = T;
  using split_type = SplitT;
  virtual ~Source() = default;
  virtual Boundedness boundedness() const = 0;
  virtual std::unique_ptr<SplitEnumerator<SplitT>> create_enumerator(SplitEnumeratorContext<SplitT>& ctx) const = 0;
  // An enumerator continuing from `state` (a snapshot_state() of an earlier run). Errors (malformed state)
  // throw std::invalid_argument naming the source; the job then fails to restore, loudly.
  virtual std::unique_ptr<SplitEnumerator<SplitT>> restore_enumerator(SplitEnumeratorContext<SplitT>& ctx,
                                                                      const std::vector<uint8_t>& state) const = 0;
  virtual std::unique_ptr<SourceReader<T, SplitT>> create_reader(SourceReaderContext& ctx) const = 0;
};

}  // namespace sluice
