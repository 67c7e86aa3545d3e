// The built-in triggers (Flink's EventTimeTrigger, ProcessingTimeTrigger, CountTrigger, PurgingTrigger and
// GlobalWindows' NeverTrigger). Same calls as Trigger<K, T, W> (trigger.h), as templates over the key, element
// and window types, so one value works on any windowed stream.
//
// - EventTimeTrigger (default of event-time assigners): fires when the watermark passes the window's
//   max_timestamp; an element added when the watermark is already past it (a late element within the allowed
//   lateness) fires the window again at once.
// - ProcessingTimeTrigger (default of processing-time assigners): fires when the clock reaches max_timestamp.
// - CountTrigger::of(n): fires once the window holds n elements since the last firing (its count is partitioned
//   state "count", merged for session windows, reset when it fires).
// - purging(trigger): turns every FIRE of `trigger` into FIRE_AND_PURGE (the contents are dropped after each
//   firing, so the next firing sees only newer elements).
// - NeverTrigger (default of GlobalWindows): never fires.
// Thread-safety: the task thread.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "sluice/state/state_descriptor.h"
#include "sluice/windowing/trigger.h"

namespace sluice {

class EventTimeTrigger {
 public:
  template <class T, class K, class W>
  TriggerResult on_element(const T&, int64_t, const W& window, TriggerContext<K, W>& ctx) {
    if (window.max_timestamp() <= ctx.current_watermark()) return TriggerResult::kFire;
    ctx.register_event_time_timer(window.max_timestamp());
    return TriggerResult::kContinue;
  }
  template <class K, class W>
  TriggerResult on_event_time(int64_t time_ms, const W& window, TriggerContext<K, W>&) {
    return time_ms == window.max_timestamp() ? TriggerResult::kFire : TriggerResult::kContinue;
  }
  template <class K, class W>
  TriggerResult on_processing_time(int64_t, const W&, TriggerContext<K, W>&) {
    return TriggerResult::kContinue;
  }
  bool can_merge() const { return true; }
  template <class K, class W>
  void on_merge(const W& window, TriggerContext<K, W>& ctx) {
    // A merged window already behind the watermark fires through on_element of the element that merged it.
    if (window.max_timestamp() > ctx.current_watermark()) ctx.register_event_time_timer(window.max_timestamp());
  }
  template <class K, class W>
  void clear(const W& window, TriggerContext<K, W>& ctx) {
    ctx.delete_event_time_timer(window.max_timestamp());
  }
};

class ProcessingTimeTrigger {
 public:
  template <class T, class K, class W>
  TriggerResult on_element(const T&, int64_t, const W& window, TriggerContext<K, W>& ctx) {
    ctx.register_processing_time_timer(window.max_timestamp());
    return TriggerResult::kContinue;
  }
  template <class K, class W>
  TriggerResult on_event_time(int64_t, const W&, TriggerContext<K, W>&) {
    return TriggerResult::kContinue;
  }
  template <class K, class W>
  TriggerResult on_processing_time(int64_t, const W&, TriggerContext<K, W>&) {
    return TriggerResult::kFire;
  }
  bool can_merge() const { return true; }
  template <class K, class W>
  void on_merge(const W& window, TriggerContext<K, W>& ctx) {
    if (window.max_timestamp() > ctx.current_processing_time()) {
      ctx.register_processing_time_timer(window.max_timestamp());
    }
  }
  template <class K, class W>
  void clear(const W& window, TriggerContext<K, W>& ctx) {
    ctx.delete_processing_time_timer(window.max_timestamp());
  }
};

class CountTrigger {
 public:
  // Fires every `max_count` elements (>= 1; std::invalid_argument otherwise).
  static CountTrigger of(int64_t max_count) {
    if (max_count < 1) throw std::invalid_argument("CountTrigger::of: expected max_count >= 1, got " + std::to_string(max_count));
    return CountTrigger(max_count);
  }
  template <class T, class K, class W>
  TriggerResult on_element(const T&, int64_t, const W&, TriggerContext<K, W>& ctx) {
    auto& count = ctx.get_partitioned_state(count_);
    count.add(1);
    if (count.get().value_or(0) >= max_count_) {
      count.clear();
      return TriggerResult::kFire;
    }
    return TriggerResult::kContinue;
  }
  template <class K, class W>
  TriggerResult on_event_time(int64_t, const W&, TriggerContext<K, W>&) {
    return TriggerResult::kContinue;
  }
  template <class K, class W>
  TriggerResult on_processing_time(int64_t, const W&, TriggerContext<K, W>&) {
    return TriggerResult::kContinue;
  }
  bool can_merge() const { return true; }
  template <class K, class W>
  void on_merge(const W&, TriggerContext<K, W>& ctx) {
    ctx.merge_partitioned_state(count_);
  }
  template <class K, class W>
  void clear(const W&, TriggerContext<K, W>& ctx) {
    ctx.get_partitioned_state(count_).clear();
  }
  int64_t max_count() const { return max_count_; }

 private:
  explicit CountTrigger(int64_t max_count)
      : max_count_(max_count), count_("count", [](const int64_t& a, const int64_t& b) { return a + b; }) {}
  int64_t max_count_;
  ReducingStateDescriptor<int64_t> count_;
};

// FIRE becomes FIRE_AND_PURGE; everything else is the inner trigger's.
template <class Inner>
class PurgingTrigger {
 public:
  explicit PurgingTrigger(Inner inner) : inner_(std::move(inner)) {}
  template <class T, class K, class W>
  TriggerResult on_element(const T& element, int64_t ts, const W& window, TriggerContext<K, W>& ctx) {
    return purge(inner_.on_element(element, ts, window, ctx));
  }
  template <class K, class W>
  TriggerResult on_event_time(int64_t time_ms, const W& window, TriggerContext<K, W>& ctx) {
    return purge(inner_.on_event_time(time_ms, window, ctx));
  }
  template <class K, class W>
  TriggerResult on_processing_time(int64_t time_ms, const W& window, TriggerContext<K, W>& ctx) {
    return purge(inner_.on_processing_time(time_ms, window, ctx));
  }
  bool can_merge() const { return inner_.can_merge(); }
  template <class K, class W>
  void on_merge(const W& window, TriggerContext<K, W>& ctx) {
    inner_.on_merge(window, ctx);
  }
  template <class K, class W>
  void clear(const W& window, TriggerContext<K, W>& ctx) {
    inner_.clear(window, ctx);
  }
  const Inner& inner() const { return inner_; }

 private:
  static TriggerResult purge(TriggerResult r) { return is_fire(r) ? TriggerResult::kFireAndPurge : r; }
  Inner inner_;
};

template <class Inner>
PurgingTrigger<Inner> purging(Inner inner) {
  return PurgingTrigger<Inner>(std::move(inner));
}

class NeverTrigger {
 public:
  template <class T, class K, class W>
  TriggerResult on_element(const T&, int64_t, const W&, TriggerContext<K, W>&) {
    return TriggerResult::kContinue;
  }
  template <class K, class W>
  TriggerResult on_event_time(int64_t, const W&, TriggerContext<K, W>&) {
    return TriggerResult::kContinue;
  }
  template <class K, class W>
  TriggerResult on_processing_time(int64_t, const W&, TriggerContext<K, W>&) {
    return TriggerResult::kContinue;
  }
  bool can_merge() const { return true; }
  template <class K, class W>
  void on_merge(const W&, TriggerContext<K, W>&) {}
  template <class K, class W>
  void clear(const W&, TriggerContext<K, W>&) {}
};

}  // namespace sluice
