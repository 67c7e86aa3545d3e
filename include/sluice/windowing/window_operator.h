// WindowOperator: keyed windows (Flink's WindowOperator). For each element: set its key, let the assigner name
// its windows, add it to each window's contents, ask the trigger, emit / purge as the trigger says, and make sure
// the window is dropped once it can no longer change.
//
// State layout (all keyed state of the operator's backend, so checkpointed, rescaled and restored like any):
//   "window-contents"            ListState / ReducingState / AggregatingState (window_function.h), namespace W
//   trigger states (e.g. "count") namespace W, the trigger's own descriptors
//   "_merging-window-set"        merging assigners: ValueState of (window, state window) pairs, VoidNamespace
//   timers "window-timers"       InternalTimerService<K, W>: the trigger's timers and the cleanup timers
// For merging windows the contents live in the namespace of the state window (merging_window_set.h), trigger
// state and timers in that of the actual window.
//
// Time and lateness (Flink's semantics): event-time windows use the element's timestamp and the operator's
// watermark (KeyedOperatorBase::advance_watermark). A window's cleanup time is max_timestamp + allowed lateness
// (INT64_MAX if that overflows) for event time, max_timestamp for processing time; a cleanup timer then drops its
// contents, trigger state and merging-set entry. A window is late when its cleanup time <= the watermark; an
// element that falls only into late windows is late: it goes to the late-data side output if one is set, else it
// is counted in the metric numLateRecordsDropped. Nothing is dropped uncounted. Within the allowed lateness the
// event-time trigger fires a window again for each element that arrives after it fired.
//
// Record timestamps: an element arriving through collect() has the task's current record timestamp (set by a
// timestamp assigner upstream, a source's WatermarkStrategy, or read from the wire); an element without one fails
// the task on an event-time window. Window results carry the window's max_timestamp() as their timestamp (Flink's
// WindowOperator does the same). Operator tests call process_element(record, timestamp_ms) directly.
//
// Errors: user exceptions and a record without timestamp on an event-time window escape as OperatorFailure.
// Thread-safety: the task thread.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sluice/detail/operators/network_io.h"
#include "sluice/metrics/counter.h"
#include "sluice/metrics/metric_group.h"
#include "sluice/metrics/metric_names.h"
#include "sluice/operators/builtin_operators.h"
#include "sluice/windowing/merging_window_set.h"
#include "sluice/windowing/time_window.h"
#include "sluice/windowing/trigger.h"
#include "sluice/windowing/window_function.h"

namespace sluice {

struct WindowOperatorConfig {
  int64_t allowed_lateness_ms = 0;  // event time only; >= 0
  std::string late_data_tag;        // side output for late elements; empty: count them as dropped
};

template <class K, class IN, class OUT, class KS, class Assigner, class Trig, class Contents>
class WindowOperator final : public KeyedOperatorBase<K, IN, OUT, KS>,
                             private Triggerable<K, typename Assigner::window_type> {
 public:
  using W = typename Assigner::window_type;
  using Base = KeyedOperatorBase<K, IN, OUT, KS>;
  using ContentsState = internal_state_t<W, typename Contents::descriptor_type>;
  using Mapping = typename MergingWindowSet<W>::Mapping;
  static constexpr bool kIsEventTime = Assigner::kIsEventTime;
  static constexpr bool kIsMerging = Assigner::kIsMerging;

  WindowOperator(KS ks, Assigner assigner, Trig trigger, Contents contents, WindowOperatorConfig config)
      : Base(std::move(ks)),
        assigner_(std::move(assigner)),
        trigger_(std::move(trigger)),
        contents_(std::move(contents)),
        config_(std::move(config)) {
    if (config_.allowed_lateness_ms < 0) {
      throw std::invalid_argument("window: expected allowed_lateness_ms >= 0, got " +
                                  std::to_string(config_.allowed_lateness_ms));
    }
    if (kIsMerging && !trigger_.can_merge()) {
      throw std::invalid_argument("window: a merging window assigner (sessions) needs a trigger that can merge");
    }
  }

  void open() override {
    collector_.set_output(this->output_);
    timers_ = &this->template get_internal_timer_service<W>("window-timers", this);
    contents_state_ = &this->backend_->template get_internal_state<W>(contents_.descriptor());
    if constexpr (kIsMerging) {
      merging_state_ = &this->backend_->get_state(ValueStateDescriptor<Mapping>("_merging-window-set"));
    }
    trigger_ctx_.emplace(this->backend_.get(), timers_);
    process_ctx_.emplace(&this->side_outputs_, this->backend_.get(), timers_);
    late_dropped_ = this->setup_.metrics != nullptr
                        ? &this->setup_.metrics->counter(metric_names::kNumLateRecordsDropped)
                        : &own_late_dropped_;
    call_user(this->info(), [&] { contents_.open(this->runtime_context()); });
    timers_->start();  // restored processing-time timers
  }
  void close() override { contents_.close(); }

  void collect(IN&& record) override { process_element(std::move(record), current_record_timestamp_ms()); }

  // One element with its event timestamp (kNoRecordTimestamp: none; fine for processing-time windows).
  void process_element(IN&& record, int64_t timestamp_ms) {
    call_user(this->info(), [&] {
      this->set_key_of(record);
      const int64_t now = kIsEventTime ? 0 : timers_->current_processing_time();  // no clock read on event time
      if constexpr (kIsEventTime) {
        if (timestamp_ms == kNoRecordTimestamp) {
          throw std::runtime_error(
              "an event-time window got a record without timestamp: assign timestamps and watermarks upstream, or "
              "use a processing-time window");
        }
      }
      const int64_t element_time = kIsEventTime ? timestamp_ms : now;
      windows_.clear();
      assigner_.assign_windows(timestamp_ms, now, windows_);
      bool added = false;
      if constexpr (kIsMerging) {
        added = add_to_merging_windows(record, element_time);
      } else {
        for (const W& window : windows_) {
          if (is_window_late(window)) continue;
          added = true;
          contents_state_->set_current_namespace(window);
          contents_.add(*contents_state_, record);
          trigger_ctx_->set_window(&window);
          act(trigger_.on_element(static_cast<const IN&>(record), element_time, window, *trigger_ctx_), window);
          register_cleanup_timer(window);
        }
      }
      // Only an element whose every window is late is not added, and then the element is late itself (its
      // timestamp + lateness <= a window's cleanup time <= the watermark).
      if (!added) {
        if (!config_.late_data_tag.empty()) {
          this->side_outputs_.emit(config_.late_data_tag, std::move(record));
        } else {
          late_dropped_->inc();
        }
      }
    });
  }

  // Tests and metrics.
  InternalTimerService<K, W>& window_timers() { return *timers_; }
  int64_t num_late_records_dropped() const { return late_dropped_->count(); }

 private:
  // The event timestamp of the record being collected (kNoRecordTimestamp: none).
  int64_t current_record_timestamp_ms() {
    const RecordTimestamp& ts = this->record_timestamp();
    return ts.has_timestamp ? ts.timestamp_ms : kNoRecordTimestamp;
  }

  bool add_to_merging_windows(const IN& record, int64_t element_time) {
    merging_set_.load(*merging_state_);
    bool added = false;
    for (const W& window : windows_) {
      const W actual = merging_set_.add_window(
          window, assigner_,
          [&](const W& merge_result, const std::vector<W>& merged, const W& state_window,
              const std::vector<W>& merged_state_windows) {
            if (is_window_late(merge_result)) {
              throw std::logic_error("window merge produced " + merge_result.to_string() +
                                     ", already late: merging must not move a window's end backwards");
            }
            trigger_ctx_->set_window(&merge_result);
            trigger_ctx_->set_merged_windows(&merged);
            trigger_.on_merge(merge_result, *trigger_ctx_);
            trigger_ctx_->set_merged_windows(nullptr);
            for (const W& m : merged) {
              trigger_ctx_->set_window(&m);
              trigger_.clear(m, *trigger_ctx_);
              delete_cleanup_timer(m);
            }
            if (!merged_state_windows.empty()) contents_state_->merge_namespaces(state_window, merged_state_windows);
          });
      if (is_window_late(actual)) {  // a new session entirely behind the watermark: never created
        merging_set_.retire_window(actual);
        continue;
      }
      added = true;
      contents_state_->set_current_namespace(*merging_set_.state_window(actual));
      contents_.add(*contents_state_, record);
      trigger_ctx_->set_window(&actual);
      act(trigger_.on_element(record, element_time, actual, *trigger_ctx_), actual);
      register_cleanup_timer(actual);
    }
    merging_set_.persist(*merging_state_);
    return added;
  }

  // The contents state's namespace is the window's (state) window.
  void act(TriggerResult r, const W& window) {
    if (is_fire(r)) {
      process_ctx_->set_window(&window);
      RecordTimestamp& ts = this->record_timestamp();
      const RecordTimestamp saved = ts;
      ts.set(window.max_timestamp());
      contents_.emit(*contents_state_, *process_ctx_, collector_);
      ts = saved;
    }
    if (is_purge(r)) contents_state_->clear();
  }

  void on_event_time(const InternalTimer<K, W>& timer) override { on_timer(timer, true); }
  void on_processing_time(const InternalTimer<K, W>& timer) override { on_timer(timer, false); }

  void on_timer(const InternalTimer<K, W>& timer, bool event_time) {
    const W& window = timer.ns;
    if constexpr (kIsMerging) {
      merging_set_.load(*merging_state_);
      const W* state_window = merging_set_.state_window(window);
      if (state_window == nullptr) return;  // merged away; its timers were deleted, this one is stale
      contents_state_->set_current_namespace(*state_window);
    } else {
      contents_state_->set_current_namespace(window);
    }
    trigger_ctx_->set_window(&window);
    act(event_time ? trigger_.on_event_time(timer.timestamp_ms, window, *trigger_ctx_)
                   : trigger_.on_processing_time(timer.timestamp_ms, window, *trigger_ctx_),
        window);
    if (event_time == kIsEventTime && timer.timestamp_ms == cleanup_time(window)) clear_all_state(window);
    if constexpr (kIsMerging) merging_set_.persist(*merging_state_);
  }

  // The window is dropped: contents (namespace already set), trigger state and timers, the window function's
  // per-window cleanup, the merging-set entry.
  void clear_all_state(const W& window) {
    contents_state_->clear();
    trigger_ctx_->set_window(&window);
    trigger_.clear(window, *trigger_ctx_);
    process_ctx_->set_window(&window);
    contents_.clear(*process_ctx_);
    if constexpr (kIsMerging) merging_set_.retire_window(window);
  }

  int64_t cleanup_time(const W& window) const {
    const int64_t max_ts = window.max_timestamp();
    if constexpr (kIsEventTime) {
      int64_t t = 0;
      if (__builtin_add_overflow(max_ts, config_.allowed_lateness_ms, &t)) return std::numeric_limits<int64_t>::max();
      return t;
    } else {
      return max_ts;
    }
  }
  bool is_window_late(const W& window) const {
    return kIsEventTime && cleanup_time(window) <= timers_->current_watermark();
  }
  void register_cleanup_timer(const W& window) {
    const int64_t t = cleanup_time(window);
    if (t == std::numeric_limits<int64_t>::max()) return;  // never cleaned up (global window)
    if constexpr (kIsEventTime) {
      timers_->register_event_time_timer(window, t);
    } else {
      timers_->register_processing_time_timer(window, t);
    }
  }
  void delete_cleanup_timer(const W& window) {
    const int64_t t = cleanup_time(window);
    if (t == std::numeric_limits<int64_t>::max()) return;
    if constexpr (kIsEventTime) {
      timers_->delete_event_time_timer(window, t);
    } else {
      timers_->delete_processing_time_timer(window, t);
    }
  }

  Assigner assigner_;
  Trig trigger_;
  Contents contents_;
  WindowOperatorConfig config_;
  Collector<OUT> collector_{nullptr};
  InternalTimerService<K, W>* timers_ = nullptr;
  ContentsState* contents_state_ = nullptr;
  ValueState<Mapping>* merging_state_ = nullptr;
  MergingWindowSet<W> merging_set_;
  std::optional<TriggerContext<K, W>> trigger_ctx_;
  std::optional<ProcessWindowContext<K, W>> process_ctx_;
  std::vector<W> windows_;  // reused per element
  Counter own_late_dropped_;  // without a metric group (operator tests)
  Counter* late_dropped_ = &own_late_dropped_;
};

}  // namespace sluice
