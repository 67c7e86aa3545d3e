// WatermarkStrategy: how a stream gets event time (Flink's WatermarkStrategy, WatermarkGenerator and
// TimestampAssigner).
//
//  - The timestamp assigner gives each record its event time in ms: assigner(record, source_timestamp_ms),
//    where source_timestamp_ms is the timestamp the source reader attached (SourceOutput::collect(r, ts)), or
//    the record's current timestamp for assign_timestamps_and_watermarks; kNoRecordTimestamp when there is none.
//    Default: that timestamp unchanged.
//  - A WatermarkGenerator, one per source split (or one per subtask for assign_timestamps_and_watermarks),
//    sees every record (on_event, may emit: punctuated) and is asked every pipeline.auto-watermark-interval
//    (on_periodic_emit: periodic). It emits into a WatermarkOutput; watermarks that do not increase are ignored.
//  - Built-ins: for_bounded_out_of_orderness(d) emits max_timestamp - d - 1 periodically (Flink's formula);
//    for_monotonous_timestamps() is the same with d = 0; for_generator(factory) takes a custom generator.
//  - with_idleness(timeout): a split without records for `timeout` of processing time is marked idle (it no
//    longer holds the subtask's watermark back) until its next record.
//  - with_max_skew(s, reference) (off by default; beyond Flink): a record stamped more than `s` ahead of the
//    reference never reaches the generator, so one bad clock cannot push event time far ahead and make every
//    later record late. Counted in numSkewedRecords; with with_skewed_records_to(tag) it goes to that side output,
//    else it flows on. The reference is SkewReference::kSplitTimestamps (default): the highest timestamp the
//    split's generator accepted (restored with the split), so every record after the split's first is judged;
//    or SkewReference::kProcessingTime: the clock's now, which judges the first record too, and a restored split
//    whose checkpointed event time is more than `s` ahead of now starts afresh instead of restoring it.
//  - Late records: a record whose timestamp is at or below its split's current watermark is late; it is counted
//    in numLateRecords and flows on, or with with_late_records_to(tag) goes to that side output instead. Nothing
//    is dropped without being counted.
//  - Beyond Flink, which forgets watermarks on restore: a generator's state (snapshot_state / restore_state;
//    the built-ins keep their highest timestamp) and each split's last emitted watermark are checkpointed with
//    the split and restored, so a recovery never re-opens lateness that had already passed.
//
// Thread-safety: a strategy is a value copied into each subtask; generators belong to one task thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/core/clock.h"
#include "sluice/core/data_view.h"
#include "sluice/functions/output.h"

namespace sluice {

// Where a generator emits. Thread-safety: task thread.
class WatermarkOutput {
 public:
  virtual ~WatermarkOutput() = default;
  virtual void emit_watermark(int64_t watermark_ms) = 0;
  // No records for a while: this output holds no watermark back until it emits or marks itself active.
  virtual void mark_idle() = 0;
  virtual void mark_active() = 0;
};

template <class T>
class WatermarkGenerator {
 public:
  virtual ~WatermarkGenerator() = default;
  virtual void on_event(const T& event, int64_t timestamp_ms, WatermarkOutput& output) = 0;
  virtual void on_periodic_emit(WatermarkOutput& output) = 0;
  // Checkpointed with the split (see above). Default: no state.
  virtual std::vector<uint8_t> snapshot_state() const { return {}; }
  virtual void restore_state(const std::vector<uint8_t>& /*state*/) {}
};

// What a generator factory gets: processing time (for idleness).
struct WatermarkGeneratorContext {
  const Clock* clock = nullptr;
};

// What WatermarkStrategy::with_max_skew measures a record's timestamp against.
enum class SkewReference {
  kSplitTimestamps,  // the highest timestamp the split's generator accepted; the split's very first is not judged
  kProcessingTime,   // the task clock's now (processing time)
};

// max_timestamp - out_of_orderness - 1, emitted periodically (Flink's BoundedOutOfOrdernessWatermarks).
template <class T>
class BoundedOutOfOrdernessWatermarks : public WatermarkGenerator<T> {
 public:
  explicit BoundedOutOfOrdernessWatermarks(int64_t out_of_orderness_ms)
      : out_of_orderness_ms_(out_of_orderness_ms), max_timestamp_ms_(kMinWatermark + out_of_orderness_ms + 1) {
    if (out_of_orderness_ms < 0) {
      throw std::invalid_argument("bounded out-of-orderness: expected a bound >= 0 ms, got " +
                                  std::to_string(out_of_orderness_ms));
    }
  }
  void on_event(const T&, int64_t timestamp_ms, WatermarkOutput&) override {
    if (timestamp_ms > max_timestamp_ms_) max_timestamp_ms_ = timestamp_ms;
  }
  void on_periodic_emit(WatermarkOutput& output) override { output.emit_watermark(current_watermark_ms()); }
  int64_t current_watermark_ms() const { return max_timestamp_ms_ - out_of_orderness_ms_ - 1; }
  std::vector<uint8_t> snapshot_state() const override {
    std::vector<uint8_t> b;
    DataOutputView(&b).write_fixed<int64_t>(max_timestamp_ms_);
    return b;
  }
  void restore_state(const std::vector<uint8_t>& state) override {
    if (state.size() != 8) return;  // no or foreign state: start fresh
    DataInputView in(state.data(), state.size());
    max_timestamp_ms_ = std::max(max_timestamp_ms_, in.read_fixed<int64_t>());
  }

 private:
  int64_t out_of_orderness_ms_;
  int64_t max_timestamp_ms_;
};

// Marks its output idle when no record came for `timeout_ms` of processing time (checked at each periodic
// emit), active again at the next record; otherwise delegates (Flink's WatermarksWithIdleness).
// (g++ 12 speculatively devirtualizes inner_->on_event to this class and warns of a recursion that cannot happen:
// inner_ is never the wrapper itself.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winfinite-recursion"
template <class T>
class WatermarksWithIdleness final : public WatermarkGenerator<T> {
 public:
  WatermarksWithIdleness(std::unique_ptr<WatermarkGenerator<T>> inner, int64_t timeout_ms, const Clock* clock)
      : inner_(std::move(inner)), timeout_ms_(timeout_ms), clock_(clock != nullptr ? clock : SystemClock::shared().get()) {}
  void on_event(const T& e, int64_t ts, WatermarkOutput& out) override {
    ++events_;
    if (idle_) {
      idle_ = false;
      out.mark_active();
    }
    inner_->on_event(e, ts, out);
  }
  void on_periodic_emit(WatermarkOutput& out) override {
    const int64_t now = clock_->now_ms();
    if (events_ != events_at_check_ || !inactive_since_ms_.has_value()) {
      // Records since the last check (or the first check): inactivity starts counting now.
      events_at_check_ = events_;
      inactive_since_ms_ = now;
    } else if (!idle_ && now - *inactive_since_ms_ >= timeout_ms_) {
      idle_ = true;
      out.mark_idle();
    }
    if (!idle_) inner_->on_periodic_emit(out);
  }
  std::vector<uint8_t> snapshot_state() const override { return inner_->snapshot_state(); }
  void restore_state(const std::vector<uint8_t>& s) override { inner_->restore_state(s); }

 private:
  std::unique_ptr<WatermarkGenerator<T>> inner_;
  int64_t timeout_ms_;
  const Clock* clock_;
  uint64_t events_ = 0;
  uint64_t events_at_check_ = 0;
  std::optional<int64_t> inactive_since_ms_;
  bool idle_ = false;
};
#pragma GCC diagnostic pop

template <class T>
class WatermarkStrategy {
 public:
  using GeneratorFactory = std::function<std::unique_ptr<WatermarkGenerator<T>>(const WatermarkGeneratorContext&)>;
  using TimestampAssigner = std::function<int64_t(const T& record, int64_t source_timestamp_ms)>;

  static WatermarkStrategy for_bounded_out_of_orderness(std::chrono::milliseconds max_out_of_orderness) {
    const int64_t d = max_out_of_orderness.count();
    if (d < 0) throw std::invalid_argument("for_bounded_out_of_orderness: expected >= 0 ms, got " + std::to_string(d));
    return for_generator([d](const WatermarkGeneratorContext&) -> std::unique_ptr<WatermarkGenerator<T>> {
      return std::make_unique<BoundedOutOfOrdernessWatermarks<T>>(d);
    });
  }
  static WatermarkStrategy for_monotonous_timestamps() {
    return for_bounded_out_of_orderness(std::chrono::milliseconds(0));
  }
  static WatermarkStrategy for_generator(GeneratorFactory factory) {
    WatermarkStrategy s;
    s.factory_ = std::move(factory);
    return s;
  }

  WatermarkStrategy with_timestamp_assigner(TimestampAssigner assigner) const {
    WatermarkStrategy s = *this;
    s.assigner_ = std::move(assigner);
    return s;
  }
  // Convenience: fn(const T&) -> int64_t timestamp in ms.
  template <class F>
    requires std::is_invocable_r_v<int64_t, F&, const T&>
  WatermarkStrategy with_timestamp_assigner(F fn) const {
    return with_timestamp_assigner(TimestampAssigner([fn](const T& r, int64_t) mutable { return fn(r); }));
  }
  WatermarkStrategy with_idleness(std::chrono::milliseconds timeout) const {
    if (timeout.count() <= 0) throw std::invalid_argument("with_idleness: expected a timeout > 0 ms");
    WatermarkStrategy s = *this;
    s.idle_timeout_ms_ = timeout.count();
    return s;
  }
  WatermarkStrategy with_max_skew(std::chrono::milliseconds max_skew,
                                  SkewReference reference = SkewReference::kSplitTimestamps) const {
    if (max_skew.count() < 0) throw std::invalid_argument("with_max_skew: expected >= 0 ms");
    WatermarkStrategy s = *this;
    s.max_skew_ms_ = max_skew.count();
    s.skew_reference_ = reference;
    return s;
  }
  // Records the skew guard stops go to the side output `tag_id` instead of the main output.
  WatermarkStrategy with_skewed_records_to(std::string tag_id) const {
    WatermarkStrategy s = *this;
    s.skewed_tag_ = std::move(tag_id);
    return s;
  }
  // Late records go to the side output `tag_id` (read it with get_side_output(OutputTag<T>(tag_id))).
  WatermarkStrategy with_late_records_to(std::string tag_id) const {
    WatermarkStrategy s = *this;
    s.late_tag_ = std::move(tag_id);
    return s;
  }

  std::unique_ptr<WatermarkGenerator<T>> create_generator(const WatermarkGeneratorContext& ctx) const {
    auto g = factory_(ctx);
    if (idle_timeout_ms_ > 0) g = std::make_unique<WatermarksWithIdleness<T>>(std::move(g), idle_timeout_ms_, ctx.clock);
    return g;
  }
  int64_t assign(const T& record, int64_t source_timestamp_ms) const {
    return assigner_ ? assigner_(record, source_timestamp_ms) : source_timestamp_ms;
  }
  int64_t idle_timeout_ms() const { return idle_timeout_ms_; }
  std::optional<int64_t> max_skew_ms() const { return max_skew_ms_; }
  SkewReference skew_reference() const { return skew_reference_; }
  const std::string& late_records_tag() const { return late_tag_; }
  const std::string& skewed_records_tag() const { return skewed_tag_; }

 private:
  WatermarkStrategy() = default;
  GeneratorFactory factory_;
  TimestampAssigner assigner_;
  int64_t idle_timeout_ms_ = 0;
  std::optional<int64_t> max_skew_ms_;
  SkewReference skew_reference_ = SkewReference::kSplitTimestamps;
  std::string late_tag_;
  std::string skewed_tag_;
};

}  // namespace sluice
