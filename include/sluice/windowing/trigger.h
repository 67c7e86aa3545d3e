// Triggers decide when a window's contents are emitted (Flink's Trigger, TriggerResult, TriggerContext).
//
// A trigger is told about every element added to a window (on_element), and about the timers it registered
// (on_event_time when the watermark passes one, on_processing_time when the clock does). Each answer is a
// TriggerResult: CONTINUE (nothing), FIRE (emit the window's contents, keep them), PURGE (drop them) or
// FIRE_AND_PURGE. clear(window) runs when the window is dropped (after its allowed lateness, or when it was
// merged into another); it must delete the timers and state the trigger keeps for the window.
//
// Triggers are values the window operator holds by type (one copy per operator subtask), so a built-in or a
// `final` user trigger costs no virtual call. A user trigger derives from Trigger<K, T, W> below and overrides
// its methods; the built-in ones (builtin_triggers.h) implement the same calls as templates.
//
// State and timers: everything a trigger remembers lives in TriggerContext: timers (namespaced by the window,
// in the operator's timer service "window-timers") and partitioned state (keyed state of the current key,
// namespaced by the window), so it is checkpointed, rescaled and restored with the window contents. Keep no
// per-key or per-window data in trigger members.
//
// Merging windows (sessions): a trigger used with a merging assigner must have can_merge() true. on_merge(window,
// ctx) runs when windows merged into `window`: re-register timers for the new window and fold the merged windows'
// state into it with ctx.merge_partitioned_state(descriptor); the operator then calls clear() for each merged
// window (ctx.merged_windows()).
// Thread-safety: the task thread.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sluice/operators/internal_timer_service.h"
#include "sluice/state/keyed_state_backend.h"

namespace sluice {

enum class TriggerResult : uint8_t { kContinue, kFire, kPurge, kFireAndPurge };

inline bool is_fire(TriggerResult r) { return r == TriggerResult::kFire || r == TriggerResult::kFireAndPurge; }
inline bool is_purge(TriggerResult r) { return r == TriggerResult::kPurge || r == TriggerResult::kFireAndPurge; }

// What a trigger sees: the current key and window, time, timers and state scoped to them. Valid only during the
// trigger call it is passed to.
template <class K, class W>
class TriggerContext {
 public:
  TriggerContext(KeyedStateBackend<K>* backend, InternalTimerService<K, W>* timers)
      : backend_(backend), timers_(timers) {}

  const K& current_key() const { return backend_->current_key(); }
  const W& window() const { return *window_; }
  int64_t current_watermark() const { return timers_->current_watermark(); }
  int64_t current_processing_time() const { return timers_->current_processing_time(); }

  // Timers of the current key and window (at most one per timestamp and domain).
  void register_event_time_timer(int64_t timestamp_ms) { timers_->register_event_time_timer(*window_, timestamp_ms); }
  void delete_event_time_timer(int64_t timestamp_ms) { timers_->delete_event_time_timer(*window_, timestamp_ms); }
  void register_processing_time_timer(int64_t timestamp_ms) {
    timers_->register_processing_time_timer(*window_, timestamp_ms);
  }
  void delete_processing_time_timer(int64_t timestamp_ms) {
    timers_->delete_processing_time_timer(*window_, timestamp_ms);
  }

  // Keyed state of the current key scoped to the current window (registered on first use; same rules as
  // KeyedStateBackend::get_internal_state). The returned object's namespace is set to the window.
  template <class D>
  internal_state_t<W, D>& get_partitioned_state(const D& descriptor) {
    internal_state_t<W, D>& s = backend_->template get_internal_state<W>(descriptor);
    s.set_current_namespace(*window_);
    return s;
  }

  // on_merge only: the windows that were merged into window(), whose trigger state and timers are still there.
  const std::vector<W>& merged_windows() const { return *merged_; }
  // on_merge only: folds the state `descriptor` of merged_windows() into window() (reducing, aggregating and list
  // states merge; for a value state, keep it yourself).
  template <class D>
  void merge_partitioned_state(const D& descriptor) {
    if (merged_ == nullptr) throw std::logic_error("merge_partitioned_state: only inside Trigger::on_merge");
    if (merged_->empty()) return;
    internal_state_t<W, D>& s = backend_->template get_internal_state<W>(descriptor);
    s.merge_namespaces(*window_, *merged_);
  }

  // The window operator's wiring.
  void set_window(const W* window) { window_ = window; }
  void set_merged_windows(const std::vector<W>* merged) { merged_ = merged; }

 private:
  KeyedStateBackend<K>* backend_;
  InternalTimerService<K, W>* timers_;
  const W* window_ = nullptr;
  const std::vector<W>* merged_ = nullptr;
};

// The base of user triggers on a keyed stream of T with key K and windows W.
template <class K, class T, class W>
class Trigger {
 public:
  using Context = TriggerContext<K, W>;
  virtual ~Trigger() = default;
  // An element with event timestamp `timestamp_ms` (the processing time for processing-time assigners) was added
  // to `window`.
  virtual TriggerResult on_element(const T& element, int64_t timestamp_ms, const W& window, Context& ctx) = 0;
  // An event-time timer of the trigger at `time_ms` fired for `window`.
  virtual TriggerResult on_event_time(int64_t time_ms, const W& window, Context& ctx) = 0;
  // A processing-time timer of the trigger at `time_ms` fired for `window`.
  virtual TriggerResult on_processing_time(int64_t time_ms, const W& window, Context& ctx) = 0;
  virtual bool can_merge() const { return false; }
  virtual void on_merge(const W& /*window*/, Context& /*ctx*/) {
    throw std::logic_error("this trigger does not support merging windows (can_merge() is false)");
  }
  // The window is dropped: delete its timers and clear its state.
  virtual void clear(const W& window, Context& ctx) = 0;
};

}  // namespace sluice
