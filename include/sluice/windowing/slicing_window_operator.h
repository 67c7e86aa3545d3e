// SlicingWindowOperator: sliding event-time windows with incremental aggregation that share partial results
// across panes (the idea of Flink's slicing window operators and of "No Pane, No Gain", Li et al. 2005).
//
// A sliding window of size S every slide D is made of panes of length P = gcd(S, D), aligned like the windows
// (start = offset + k * P). Each element updates the one partial result of its pane (ValueState "window-panes",
// namespace the pane) instead of S / D window accumulators; when a window fires, its S / P panes are combined. It
// gives the same results as WindowOperator with EventTimeTrigger (the test slicing_window_test.cc checks it on
// random input with late elements), for reduce with an associative function, and aggregate:
// - a window fires when the watermark passes its max_timestamp (a timer per window, namespace the window), and
//   again at once for each element added within the allowed lateness after that;
// - an element whose windows are all late goes to the late side output, or is counted in numLateRecordsDropped;
// - timers are chained, as in Flink's slice-shared window aggregation (nextTriggerWindow): the first element of a
//   pane (per key) registers the timer of the earliest of the pane's windows that is not late yet, and a window
//   that fires registers the next window (one slide later) when one of its panes that the next window shares held
//   data. So a key has about one pending timer instead of size / slide, and later elements of a pane register
//   nothing: the timer store is touched once per (key, pane) and per fired window;
// - a pane is dropped once the last window that holds it is cleaned up: without allowed lateness when that window
//   fires; otherwise by a timer (namespace the pane, which is shorter than a window) at that window's cleanup
//   time + 1, so it runs after the window's last firing.
// Differences from the per-window path: ProcessWindowFunction::clear() is not called (windows have no state of
// their own here); a reduce function is applied per pane and then across panes in time order; and if the
// watermark goes back (the operator restarts at no watermark after a restore, until watermarks are restored too),
// a window already cleaned up that gets a new element fires with its panes' earlier elements as well, where the
// per-window path would start it afresh.
//
// Record timestamps and result timestamps: as WindowOperator. Thread-safety: task thread.
#pragma once

#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sluice/metrics/counter.h"
#include "sluice/metrics/metric_group.h"
#include "sluice/metrics/metric_names.h"
#include "sluice/operators/builtin_operators.h"
#include "sluice/windowing/time_window.h"
#include "sluice/windowing/window_assigners.h"
#include "sluice/windowing/window_function.h"
#include "sluice/windowing/window_operator.h"

namespace sluice {

// Pane policies: the partial result of a pane and how panes combine.
// One reduced T per pane; R: (const T&, const T&) -> T; F: PassThrough or ProcessWindowFunction<T, OUT, K, W>.
template <class T, class OUT, class R, class F>
class ReducingPanes {
 public:
  using pane_type = T;
  using input_type = T;
  using output_type = OUT;
  ReducingPanes(R reducer, F fn) : reducer_(std::move(reducer)), fn_(std::move(fn)) {}
  void add(std::optional<T>& pane, const T& value) { pane = pane ? reducer_(*pane, value) : value; }
  void combine(std::optional<T>& into, const T& pane) { into = into ? reducer_(*into, pane) : pane; }
  template <class K, class W>
  void emit(T&& value, ProcessWindowContext<K, W>& ctx, Collector<OUT>& out) {
    detail::emit_single(fn_, std::move(value), ctx, out);
  }
  void open(RuntimeContext& ctx) { detail::open_window_fn(fn_, ctx); }
  void close() { detail::close_window_fn(fn_); }

 private:
  R reducer_;
  F fn_;
};

// One accumulator per pane; F: PassThrough or ProcessWindowFunction<RES, OUT, K, W>.
template <class IN, class ACC, class RES, class OUT, class F>
class AggregatingPanes {
 public:
  using pane_type = ACC;
  using input_type = IN;
  using output_type = OUT;
  AggregatingPanes(std::shared_ptr<const AggregateFunction<IN, ACC, RES>> agg, F fn)
      : agg_(std::move(agg)), fn_(std::move(fn)) {}
  void add(std::optional<ACC>& pane, const IN& value) {
    if (!pane) pane = agg_->create_accumulator();
    agg_->add(value, *pane);
  }
  void combine(std::optional<ACC>& into, const ACC& pane) {
    if (!into) {
      into = pane;
    } else {
      agg_->merge(*into, pane);
    }
  }
  template <class K, class W>
  void emit(ACC&& acc, ProcessWindowContext<K, W>& ctx, Collector<OUT>& out) {
    detail::emit_single(fn_, agg_->get_result(acc), ctx, out);
  }
  void open(RuntimeContext& ctx) { detail::open_window_fn(fn_, ctx); }
  void close() { detail::close_window_fn(fn_); }

 private:
  std::shared_ptr<const AggregateFunction<IN, ACC, RES>> agg_;
  F fn_;
};

template <class K, class IN, class OUT, class KS, class Panes>
class SlicingWindowOperator final : public KeyedOperatorBase<K, IN, OUT, KS>, private Triggerable<K, TimeWindow> {
 public:
  using P = typename Panes::pane_type;
  using Base = KeyedOperatorBase<K, IN, OUT, KS>;

  SlicingWindowOperator(KS ks, SlidingEventTimeWindows assigner, Panes panes, WindowOperatorConfig config)
      : Base(std::move(ks)),
        size_ms_(assigner.size_ms()),
        slide_ms_(assigner.slide_ms()),
        offset_ms_(assigner.offset_ms()),
        pane_ms_(std::gcd(assigner.size_ms(), assigner.slide_ms())),
        panes_(std::move(panes)),
        config_(std::move(config)) {
    if (config_.allowed_lateness_ms < 0) {
      throw std::invalid_argument("window: expected allowed_lateness_ms >= 0, got " +
                                  std::to_string(config_.allowed_lateness_ms));
    }
    if (pane_ms_ == size_ms_) {
      throw std::invalid_argument("SlicingWindowOperator: slide_ms must be smaller than size_ms (tumbling windows "
                                  "have nothing to share)");
    }
  }

  void open() override {
    collector_.set_output(this->output_);
    timers_ = &this->template get_internal_timer_service<TimeWindow>("window-timers", this);
    panes_state_ = &this->backend_->template get_internal_state<TimeWindow>(ValueStateDescriptor<P>("window-panes"));
    process_ctx_.emplace(&this->side_outputs_, this->backend_.get(), timers_);
    late_dropped_ = this->setup_.metrics != nullptr
                        ? &this->setup_.metrics->counter(metric_names::kNumLateRecordsDropped)
                        : &own_late_dropped_;
    call_user(this->info(), [&] { panes_.open(this->runtime_context()); });
    timers_->start();
  }
  void close() override { panes_.close(); }

  void collect(IN&& record) override { process_element(std::move(record), current_record_timestamp_ms()); }

  void process_element(IN&& record, int64_t timestamp_ms) {
    call_user(this->info(), [&] {
      this->set_key_of(record);
      if (timestamp_ms == kNoRecordTimestamp) {
        throw std::runtime_error(
            "an event-time window got a record without timestamp: assign timestamps and watermarks upstream, or use "
            "a processing-time window");
      }
      const int64_t watermark = timers_->current_watermark();
      // The windows of the element that are not late, latest start first.
      windows_.clear();
      for (int64_t start = window_start_ms(timestamp_ms, offset_ms_, slide_ms_); start > timestamp_ms - size_ms_;
           start -= slide_ms_) {
        const TimeWindow w{start, start + size_ms_};
        if (cleanup_time(w) > watermark) windows_.push_back(w);
      }
      if (windows_.empty()) {  // every window late: the element is late
        if (!config_.late_data_tag.empty()) {
          this->side_outputs_.emit(config_.late_data_tag, std::move(record));
        } else {
          late_dropped_->inc();
        }
        return;
      }
      const int64_t pane_start = window_start_ms(timestamp_ms, offset_ms_, pane_ms_);
      const TimeWindow pane{pane_start, pane_start + pane_ms_};
      panes_state_->set_current_namespace(pane);
      const bool fresh = panes_state_->transform([&](std::optional<P>& partial) { panes_.add(partial, record); });
      if (fresh && config_.allowed_lateness_ms > 0) {
        // The pane lives until the last window holding it is cleaned up (+1: after that window's firing).
        // Without lateness that window's firing drops it (on_event_time): no timer of its own.
        const int64_t last_start = window_start_ms(pane_start, offset_ms_, slide_ms_);
        const int64_t t = cleanup_time(TimeWindow{last_start, last_start + size_ms_});
        timers_->register_event_time_timer(pane, t == std::numeric_limits<int64_t>::max() ? t : t + 1);
      }
      // Latest start first: the last window not yet due is the earliest; the chain registers the later ones.
      const TimeWindow* earliest_due_later = nullptr;
      for (const TimeWindow& w : windows_) {
        if (w.max_timestamp() <= watermark) {
          fire(w, false);  // late within the allowed lateness: fires again at once
        } else {
          earliest_due_later = &w;
        }
      }
      // Later elements of the pane would only find the timer, or the chain that it started.
      if (fresh && earliest_due_later != nullptr) {
        timers_->register_event_time_timer(*earliest_due_later, earliest_due_later->max_timestamp());
      }
    });
  }

  InternalTimerService<K, TimeWindow>& window_timers() { return *timers_; }
  int64_t num_late_records_dropped() const { return late_dropped_->count(); }

 private:
  // The event timestamp of the record being collected (kNoRecordTimestamp: none).
  int64_t current_record_timestamp_ms() {
    const RecordTimestamp& ts = this->record_timestamp();
    return ts.has_timestamp ? ts.timestamp_ms : kNoRecordTimestamp;
  }

  void on_event_time(const InternalTimer<K, TimeWindow>& timer) override {
    const TimeWindow& ns = timer.ns;
    if (ns.end_ms - ns.start_ms == size_ms_) {
      // Without allowed lateness this is the window's cleanup too: its panes that no later window holds go.
      if (fire(ns, config_.allowed_lateness_ms == 0)) {
        const TimeWindow next{ns.start_ms + slide_ms_, ns.end_ms + slide_ms_};
        timers_->register_event_time_timer(next, next.max_timestamp());
      }
    } else {  // a pane's cleanup
      panes_state_->set_current_namespace(ns);
      panes_state_->clear();
    }
  }
  void on_processing_time(const InternalTimer<K, TimeWindow>&) override {}

  // Combines the panes of `window` and emits the result (nothing if every pane is empty). `drop_leaving`: the
  // panes that no later window holds (those before the next window's start) are dropped as they are read. True
  // when a pane that the next window shares holds data (the next window must fire then).
  bool fire(const TimeWindow& window, bool drop_leaving) {
    std::optional<P> result;
    bool next_has_data = false;
    const int64_t next_start = window.start_ms + slide_ms_;
    for (int64_t start = window.start_ms; start < window.end_ms; start += pane_ms_) {
      panes_state_->set_current_namespace(TimeWindow{start, start + pane_ms_});
      if (start < next_start) {
        if (drop_leaving) {
          (void)panes_state_->transform([&](std::optional<P>& partial) {
            if (partial) panes_.combine(result, *partial);
            partial.reset();
          });
          continue;
        }
        std::optional<P> partial = panes_state_->value();
        if (partial) panes_.combine(result, *partial);
        continue;
      }
      std::optional<P> partial = panes_state_->value();
      if (partial) {
        panes_.combine(result, *partial);
        next_has_data = true;
      }
    }
    if (!result) return next_has_data;
    process_ctx_->set_window(&window);
    RecordTimestamp& ts = this->record_timestamp();
    const RecordTimestamp saved = ts;
    ts.set(window.max_timestamp());  // results carry the window's end (as Flink's)
    panes_.emit(std::move(*result), *process_ctx_, collector_);
    ts = saved;
    return next_has_data;
  }

  int64_t cleanup_time(const TimeWindow& window) const {
    int64_t t = 0;
    if (__builtin_add_overflow(window.max_timestamp(), config_.allowed_lateness_ms, &t)) {
      return std::numeric_limits<int64_t>::max();
    }
    return t;
  }

  int64_t size_ms_;
  int64_t slide_ms_;
  int64_t offset_ms_;
  int64_t pane_ms_;
  Panes panes_;
  WindowOperatorConfig config_;
  Collector<OUT> collector_{nullptr};
  InternalTimerService<K, TimeWindow>* timers_ = nullptr;
  InternalValueState<TimeWindow, P>* panes_state_ = nullptr;
  std::optional<ProcessWindowContext<K, TimeWindow>> process_ctx_;
  std::vector<TimeWindow> windows_;  // reused per element
  Counter own_late_dropped_;
  Counter* late_dropped_ = &own_late_dropped_;
};

}  // namespace sluice
