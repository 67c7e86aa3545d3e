// IntervalJoinOperator: the keyed two-input operator behind KeyedStream::interval_join (Flink's
// IntervalJoinOperator). For left a and right b with equal keys, the pair joins when
//   a.timestamp + lower_ms <= b.timestamp <= a.timestamp + upper_ms
// (bounds inclusive unless made exclusive, which is the same as lower_ms + 1 / upper_ms - 1), and
// ProcessJoinFunction::process_element runs once for it, its output stamped max(a.timestamp, b.timestamp).
//
// Event time only: a record without a timestamp fails the task. State, per key and side: a MapState from
// timestamp to the elements with that timestamp ("_interval_join_left" / "_interval_join_right"). Each arriving
// element joins with what the other side buffered, then is buffered itself, so each pair is emitted once, when
// its later element arrives. Cleanup: an element is useless once the watermark passed the last timestamp an
// on-time element of the other side could join with it (left a: a.ts + upper; right b: b.ts - lower); an
// event-time timer one millisecond after that (timer services "interval-join-left" / "-right") removes its
// timestamp's entry. Late records (timestamp < the operator's watermark, as Flink) are not joined nor buffered:
// they go to the side output `late_data_tag` if set, else are counted in numLateRecordsDropped. Everything is
// keyed state: checkpointed, restored and redistributed by key group.
//
// BATCH with sorted input (docs/batch.md): both sides arrive in one key order with no watermark before the end, so
// nothing is late; when the key changes its cleanup timers fire and its buffers are dropped (one key at a time).
// Cost: each element scans the other side's buffered timestamps of its key (as Flink's MapState iteration).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sluice/functions/co_functions.h"
#include "sluice/metrics/counter.h"
#include "sluice/metrics/metric_group.h"
#include "sluice/operators/builtin_operators.h"
#include "sluice/operators/two_input_stream_operator.h"

namespace sluice {

inline constexpr const char* kIntervalJoinLateRecordsMetric = "numLateRecordsDropped";

struct IntervalJoinConfig {
  int64_t lower_ms = 0;  // b.ts - a.ts >= lower_ms (> when lower_exclusive)
  int64_t upper_ms = 0;  // b.ts - a.ts <= upper_ms (< when upper_exclusive); lower <= upper after exclusivity
  bool lower_exclusive = false;
  bool upper_exclusive = false;
  std::string left_late_data_tag;   // side output for late left records (element type IN1); empty: drop+count
  std::string right_late_data_tag;  // side output for late right records (element type IN2); empty: drop+count

  // Inclusive bounds; throws std::invalid_argument when they are empty (lower > upper).
  std::pair<int64_t, int64_t> inclusive_bounds() const {
    const int64_t lo = lower_exclusive ? saturating_add(lower_ms, 1) : lower_ms;
    const int64_t hi = upper_exclusive ? saturating_add(upper_ms, -1) : upper_ms;
    if (lo > hi) {
      throw std::invalid_argument("interval join: expected lower bound <= upper bound, got [" +
                                  std::to_string(lower_ms) + (lower_exclusive ? " exclusive" : "") + ", " +
                                  std::to_string(upper_ms) + (upper_exclusive ? " exclusive" : "") + "]");
    }
    return {lo, hi};
  }
  static int64_t saturating_add(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<int64_t>::max()
                                                       : std::numeric_limits<int64_t>::min();
    return r;
  }
};

// KS1: const IN1& -> K, KS2: const IN2& -> K; F derives from ProcessJoinFunction<IN1, IN2, OUT>.
template <class K, class IN1, class IN2, class OUT, class KS1, class KS2, class F>
class IntervalJoinOperator final : public AbstractKeyedOperator<K, TwoInputStreamOperator<IN1, IN2, OUT>>,
                                   private Triggerable<K, VoidNamespace> {
  using Base = AbstractKeyedOperator<K, TwoInputStreamOperator<IN1, IN2, OUT>>;
  template <class T>
  using Buffer = MapState<int64_t, std::vector<T>>;

 public:
  IntervalJoinOperator(KS1 ks1, KS2 ks2, F fn, IntervalJoinConfig config)
      : ks1_(std::move(ks1)), ks2_(std::move(ks2)), fn_(std::move(fn)), config_(std::move(config)) {
    std::tie(lower_, upper_) = config_.inclusive_bounds();
  }

  void open() override {
    collector_.set_output(this->output_);
    left_ = &this->backend_->get_map_state(MapStateDescriptor<int64_t, std::vector<IN1>>("_interval_join_left"));
    right_ = &this->backend_->get_map_state(MapStateDescriptor<int64_t, std::vector<IN2>>("_interval_join_right"));
    left_timers_ = &this->template get_internal_timer_service<VoidNamespace>("interval-join-left", this);
    right_timers_ = &this->template get_internal_timer_service<VoidNamespace>("interval-join-right", &right_target_);
    late_dropped_ = this->setup_.metrics != nullptr ? &this->setup_.metrics->counter(kIntervalJoinLateRecordsMetric)
                                                    : &own_late_dropped_;
    call_user(this->info(), [&] { open_if_rich(fn_, this->runtime_context()); });
  }
  void close() override { close_if_rich(fn_); }
  void initialize_state(const OperatorRestoreState* restored) override {
    Base::initialize_state(restored);
    call_user(this->info(), [&] { initialize_if_checkpointed(fn_, restored != nullptr, this->operator_state_); });
  }
  OperatorSnapshot snapshot_state(CheckpointId id, int64_t ts) override {
    call_user(this->info(), [&] { snapshot_if_checkpointed(fn_, id, ts); });
    return Base::snapshot_state(id, ts);
  }

  void process_element1(IN1&& a) override {
    call_user(this->info(), [&] {
      const int64_t ts = record_time("left");
      if (is_late(ts)) return late(std::move(a), config_.left_late_data_tag);
      this->set_record_key(ks1_(static_cast<const IN1&>(a)));
      // b joins when b.ts in [ts + lower, ts + upper].
      const int64_t lo = IntervalJoinConfig::saturating_add(ts, lower_);
      const int64_t hi = IntervalJoinConfig::saturating_add(ts, upper_);
      right_->for_each([&](const int64_t& bts, const std::vector<IN2>& bs) {
        if (bts < lo || bts > hi) return;
        for (const IN2& b : bs) emit(a, b, ts, bts);
      });
      add(*left_, ts, std::move(a));
      left_timers_->register_event_time_timer({}, cleanup_time(ts, upper_));
    });
  }
  void process_element2(IN2&& b) override {
    call_user(this->info(), [&] {
      const int64_t ts = record_time("right");
      if (is_late(ts)) return late(std::move(b), config_.right_late_data_tag);
      this->set_record_key(ks2_(static_cast<const IN2&>(b)));
      // a joins when a.ts in [ts - upper, ts - lower].
      const int64_t lo = IntervalJoinConfig::saturating_add(ts, negate(upper_));
      const int64_t hi = IntervalJoinConfig::saturating_add(ts, negate(lower_));
      left_->for_each([&](const int64_t& ats, const std::vector<IN1>& as) {
        if (ats < lo || ats > hi) return;
        for (const IN1& a : as) emit(a, b, ats, ts);
      });
      add(*right_, ts, std::move(b));
      right_timers_->register_event_time_timer({}, cleanup_time(ts, negate(lower_)));
    });
  }

  // Tests and metrics.
  int64_t num_late_records_dropped() const { return late_dropped_->count(); }
  std::pair<int64_t, int64_t> inclusive_bounds() const { return {lower_, upper_}; }
  // Timestamps buffered for `key` on both sides (sets the current key), and cleanup timers of all keys.
  int64_t num_buffered_timestamps(const K& key) {
    this->backend_->set_current_key(key);
    return static_cast<int64_t>(left_->keys().size() + right_->keys().size());
  }
  int64_t num_cleanup_timers() { return left_timers_->num_event_time_timers() + right_timers_->num_event_time_timers(); }

 private:
  static int64_t negate(int64_t v) { return v == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -v; }
  // The first watermark at which no on-time element of the other side can still join an element at `ts`:
  // past ts + reach (the latest other-side timestamp it joins with).
  static int64_t cleanup_time(int64_t ts, int64_t reach) {
    return IntervalJoinConfig::saturating_add(IntervalJoinConfig::saturating_add(ts, reach), 1);
  }
  int64_t record_time(const char* side) {
    const RecordTimestamp& rt = this->record_timestamp();
    if (!rt.has_timestamp) {
      throw std::invalid_argument(std::string("interval join: a ") + side +
                                  " record without an event-time timestamp; interval joins need timestamps (a "
                                  "WatermarkStrategy on the source or assign_timestamps_and_watermarks upstream)");
    }
    return rt.timestamp_ms;
  }
  bool is_late(int64_t ts) const {
    return this->current_watermark_ms_ != kMinWatermark && ts < this->current_watermark_ms_;
  }
  template <class T>
  void late(T&& record, const std::string& tag) {
    if (tag.empty()) {
      late_dropped_->inc();
    } else {
      this->side_outputs_.emit(tag, std::forward<T>(record));
    }
  }
  template <class T>
  static void add(Buffer<T>& buffer, int64_t ts, T&& record) {
    std::vector<T> list = buffer.get(ts).value_or(std::vector<T>{});
    list.push_back(std::move(record));
    buffer.put(ts, std::move(list));
  }
  void emit(const IN1& a, const IN2& b, int64_t ats, int64_t bts) {
    RecordTimestamp& rt = this->record_timestamp();
    const RecordTimestamp saved = rt;
    join_ctx_.set_timestamps(ats, bts);
    rt.set(join_ctx_.timestamp());
    fn_.process_element(a, b, join_ctx_, collector_);
    rt = saved;
  }
  // Left cleanup timers: the element's timestamp is the timer's minus (upper + 1).
  void on_event_time(const InternalTimer<K, VoidNamespace>& timer) override {
    left_->remove(timer.timestamp_ms - upper_ - 1);
  }
  void on_processing_time(const InternalTimer<K, VoidNamespace>&) override {}
  struct RightCleanup final : Triggerable<K, VoidNamespace> {
    explicit RightCleanup(IntervalJoinOperator* op) : op_(op) {}
    void on_event_time(const InternalTimer<K, VoidNamespace>& timer) override {
      op_->right_->remove(timer.timestamp_ms + op_->lower_ - 1);
    }
    void on_processing_time(const InternalTimer<K, VoidNamespace>&) override {}
    IntervalJoinOperator* op_;
  };

  KS1 ks1_;
  KS2 ks2_;
  F fn_;
  IntervalJoinConfig config_;
  int64_t lower_ = 0;
  int64_t upper_ = 0;
  Collector<OUT> collector_{nullptr};
  ProcessJoinContext join_ctx_{&this->side_outputs_};
  Buffer<IN1>* left_ = nullptr;
  Buffer<IN2>* right_ = nullptr;
  InternalTimerService<K, VoidNamespace>* left_timers_ = nullptr;
  InternalTimerService<K, VoidNamespace>* right_timers_ = nullptr;
  RightCleanup right_target_{this};
  Counter own_late_dropped_;  // without a metric group (operator tests)
  Counter* late_dropped_ = &own_late_dropped_;
};

}  // namespace sluice
