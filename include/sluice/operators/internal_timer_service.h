// InternalTimerService<K, N>: the timers of one keyed operator for one purpose (Flink's InternalTimerService /
// InternalTimerServiceImpl): event-time and processing-time timers of the current key, scoped by a namespace
// of type N (a window for window operators; VoidNamespace for process functions), kept in the keyed state
// backend as two timer queues "_timer_state/event_<name>" and "_timer_state/processing_<name>"
// (state/timer_queue.h), so they are checkpointed and rescaled with the key groups.
//
// Firing: advance_watermark(wm) fires every event-time timer with timestamp <= wm in timestamp order; the
// ProcessingTimeService calls back when the earliest processing-time timer is due, and every timer with
// timestamp <= the current processing time fires in timestamp order. Before each firing the backend's current key
// is set to the timer's key and the timer is removed; the target (Triggerable) may register or delete timers,
// including ones that are due at once (they fire in the same round). A processing-time timer registered for a
// time already passed fires at the task's next loop iteration; an event-time timer at or below the current
// watermark fires at the next advance_watermark (as in Flink, whose registerEventTimeTimer only queues the
// timer and whose advanceWatermark fires everything at or below the new watermark: in a running job the next
// watermark that reaches the operator, the task's valve passing only increasing ones). The keyed operator's
// process_watermark calls advance_watermark (KeyedOperatorBase).
//
// One callback is outstanding at the ProcessingTimeService per service: for the earliest processing-time timer
// (rescheduled when an earlier one is registered, and by start() after a restore).
//
// Errors: user exceptions from the target propagate; RocksDB failures throw RocksDBError.
// Thread-safety: the task thread.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "sluice/functions/timer_service.h"
#include "sluice/operators/processing_time_service.h"
#include "sluice/state/keyed_state_backend.h"
#include "sluice/state/timer_queue.h"

namespace sluice {

// What fires: implemented by the operator that owns the timer service.
template <class K, class N>
class Triggerable {
 public:
  virtual ~Triggerable() = default;
  virtual void on_event_time(const InternalTimer<K, N>& timer) = 0;
  virtual void on_processing_time(const InternalTimer<K, N>& timer) = 0;
};

template <class K, class N>
class InternalTimerService {
 public:
  static constexpr int64_t kNoWatermark = std::numeric_limits<int64_t>::min();

  // Registers (or finds) the two queues in `backend`. All pointers must outlive the service.
  InternalTimerService(const std::string& name, KeyedStateBackend<K>* backend, ProcessingTimeService* processing_time,
                       Triggerable<K, N>* target)
      : name_(name),
        backend_(backend),
        processing_time_(processing_time),
        target_(target),
        event_(&backend->template get_timer_queue<N>("_timer_state/event_" + name)),
        processing_(&backend->template get_timer_queue<N>("_timer_state/processing_" + name)) {}
  InternalTimerService(const InternalTimerService&) = delete;
  InternalTimerService& operator=(const InternalTimerService&) = delete;

  const std::string& name() const { return name_; }
  int64_t current_processing_time() const { return processing_time_->current_processing_time_ms(); }
  int64_t current_watermark() const { return watermark_; }

  // For the backend's current key (std::logic_error if none is set).
  void register_event_time_timer(const N& ns, int64_t timestamp_ms) {
    event_->add(backend_->current_key_context(), ns, timestamp_ms);
  }
  void delete_event_time_timer(const N& ns, int64_t timestamp_ms) {
    event_->remove(backend_->current_key_context(), ns, timestamp_ms);
  }
  void register_processing_time_timer(const N& ns, int64_t timestamp_ms) {
    processing_->add(backend_->current_key_context(), ns, timestamp_ms);
    schedule(timestamp_ms);
  }
  void delete_processing_time_timer(const N& ns, int64_t timestamp_ms) {
    processing_->remove(backend_->current_key_context(), ns, timestamp_ms);
    // The outstanding callback stays; when it runs it finds nothing due and schedules the new head.
  }

  // Schedules the earliest processing-time timer (restored timers: those already due fire at the next loop
  // iteration). Call once the operator is open.
  void start() {
    if (auto head = processing_->peek_timestamp()) schedule(*head);
  }

  // Fires the event-time timers with timestamp <= watermark_ms (in timestamp order). A watermark lower than the
  // current one is ignored (watermarks never go back; after a restore a replayed lower one is harmless); an
  // equal one fires the timers registered at or below it since (only the end of input repeats a watermark).
  void advance_watermark(int64_t watermark_ms) {
    if (watermark_ms < watermark_) return;
    watermark_ = watermark_ms;
    while (auto timer = event_->poll_until(watermark_ms)) {
      backend_->set_current_key(timer->key);
      target_->on_event_time(*timer);
    }
  }

  // Fires the processing-time timers that are due now (end of input: due timers get this last opportunity;
  // later ones are dropped with the operator, as Flink quiesces processing time at the end).
  void fire_due_processing_time_timers() { on_processing_time(kNotScheduled - 1); }

  // BATCH execution, sorted input (OperatorSetup::batch_sorted_input): the current key's input ended, so time
  // jumps to +inf for it: every event-time timer fires (watermark MAX), then every processing-time timer, until
  // neither queue holds a timer (a firing timer may register more); the watermark then goes back to "none" for
  // the next key. Returns the timers fired. The queues hold only the finished key's timers in this mode.
  int64_t fire_all_timers_for_key_end() {
    int64_t fired = 0;
    while (event_->num_timers() > 0 || processing_->num_timers() > 0) {
      watermark_ = std::numeric_limits<int64_t>::max();
      while (auto timer = event_->poll_until(watermark_)) {
        backend_->set_current_key(timer->key);
        target_->on_event_time(*timer);
        ++fired;
      }
      while (auto timer = processing_->poll_until(std::numeric_limits<int64_t>::max())) {
        backend_->set_current_key(timer->key);
        target_->on_processing_time(*timer);
        ++fired;
      }
    }
    watermark_ = kNoWatermark;
    return fired;
  }

  // Timers of each domain (tests, metrics).
  int64_t num_event_time_timers() { return event_->num_timers(); }
  int64_t num_processing_time_timers() { return processing_->num_timers(); }

 private:
  void schedule(int64_t timestamp_ms) {
    if (timestamp_ms >= scheduled_ms_) return;  // an earlier callback is outstanding
    scheduled_ms_ = timestamp_ms;
    processing_time_->register_timer(timestamp_ms, [this](int64_t t) { on_processing_time(t); });
  }
  void on_processing_time(int64_t callback_ms) {
    if (callback_ms == scheduled_ms_) scheduled_ms_ = kNotScheduled;
    const int64_t now = processing_time_->current_processing_time_ms();
    while (auto timer = processing_->poll_until(now)) {
      backend_->set_current_key(timer->key);
      target_->on_processing_time(*timer);
    }
    if (auto head = processing_->peek_timestamp()) schedule(*head);
  }

  static constexpr int64_t kNotScheduled = std::numeric_limits<int64_t>::max();

  std::string name_;
  KeyedStateBackend<K>* backend_;
  ProcessingTimeService* processing_time_;
  Triggerable<K, N>* target_;
  InternalTimerQueue<K, N>* event_;
  InternalTimerQueue<K, N>* processing_;
  int64_t watermark_ = kNoWatermark;
  int64_t scheduled_ms_ = kNotScheduled;  // the earliest outstanding callback
};

// The TimerService of a keyed process function: the VoidNamespace timers of an InternalTimerService.
template <class K>
class SimpleTimerService final : public TimerService {
 public:
  explicit SimpleTimerService(InternalTimerService<K, VoidNamespace>* timers) : timers_(timers) {}
  int64_t current_processing_time() const override { return timers_->current_processing_time(); }
  int64_t current_watermark() const override { return timers_->current_watermark(); }
  void register_processing_time_timer(int64_t ts) override { timers_->register_processing_time_timer({}, ts); }
  void register_event_time_timer(int64_t ts) override { timers_->register_event_time_timer({}, ts); }
  void delete_processing_time_timer(int64_t ts) override { timers_->delete_processing_time_timer({}, ts); }
  void delete_event_time_timer(int64_t ts) override { timers_->delete_event_time_timer({}, ts); }

 private:
  InternalTimerService<K, VoidNamespace>* timers_;
};

}  // namespace sluice
