// ProcessingTimeService: processing time, and callbacks at given processing times run on the task thread
// (Flink's ProcessingTimeService). Processing time is the injectable Clock's now_ms() (core/clock.h), so tests
// drive it with a ManualClock.
//
// QueuedProcessingTimeService is the implementation: a min-heap of callbacks by time. Its owner runs the due
// ones: the task's mailbox loop between records (StreamTask: the loop also sleeps no longer than until the next
// due time, so nothing polls), or a test by hand after moving a ManualClock (fire_due()). One service per
// task serves every processing-time callback of its chain: keyed operators' timers and periodic watermarks.
// A callback for a time already passed runs at the next opportunity. Callbacks run in time order, registration
// order on ties; an exception from a callback propagates out of fire_due (a user function failed: the task
// fails over).
//
// Units: milliseconds since the epoch (the clock's now_ms). Thread-safety: task thread only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "sluice/core/clock.h"

namespace sluice {

class ProcessingTimeService {
 public:
  virtual ~ProcessingTimeService() = default;
  // The current processing time (ms since the epoch).
  virtual int64_t current_processing_time_ms() const = 0;
  // Runs callback(timestamp_ms) on the task thread once current_processing_time_ms() >= timestamp_ms.
  virtual void register_timer(int64_t timestamp_ms, std::function<void(int64_t timestamp_ms)> callback) = 0;

  // Runs `task` every `delay_ms` (> 0) of processing time, each run `delay_ms` after the end of the previous
  // one, the first at now + delay_ms (Flink's scheduleWithFixedDelay; periodic watermark emission uses it). A
  // plain timer re-registered by each run, so it stops with the service (end of the task).
  void schedule_with_fixed_delay(int64_t delay_ms, std::function<void()> task) {
    register_fixed_delay(delay_ms, std::make_shared<std::function<void()>>(std::move(task)));
  }

 private:
  void register_fixed_delay(int64_t delay_ms, std::shared_ptr<std::function<void()>> task) {
    register_timer(current_processing_time_ms() + delay_ms, [this, delay_ms, task](int64_t) {
      (*task)();
      register_fixed_delay(delay_ms, task);
    });
  }
};

class QueuedProcessingTimeService final : public ProcessingTimeService {
 public:
  // `clock` must outlive the service; null: the system clock.
  explicit QueuedProcessingTimeService(const Clock* clock)
      : clock_(clock != nullptr ? clock : SystemClock::shared().get()) {}

  int64_t current_processing_time_ms() const override { return clock_->now_ms(); }
  void register_timer(int64_t timestamp_ms, std::function<void(int64_t)> callback) override {
    queue_.push(Entry{timestamp_ms, next_seq_++, std::move(callback)});
  }

  bool has_timers() const { return !queue_.empty(); }
  std::optional<int64_t> next_timer_ms() const {
    if (queue_.empty()) return std::nullopt;
    return queue_.top().timestamp_ms;
  }
  // Runs every callback due at the clock's current time (read once), including those the callbacks register
  // for times already passed. Returns how many ran.
  int fire_due() {
    if (queue_.empty()) return 0;
    const int64_t now = clock_->now_ms();
    int n = 0;
    while (!queue_.empty() && queue_.top().timestamp_ms <= now) {
      Entry e = std::move(const_cast<Entry&>(queue_.top()));  // popped right away; the heap order is untouched
      queue_.pop();
      e.callback(e.timestamp_ms);
      ++n;
    }
    return n;
  }
  // How long the owner may sleep before a callback is due: `max` without callbacks, else min(max, time until
  // the next one), zero if one is due.
  std::chrono::nanoseconds wait_bound(std::chrono::nanoseconds max) const {
    if (queue_.empty()) return max;
    const int64_t left_ms = queue_.top().timestamp_ms - clock_->now_ms();
    if (left_ms <= 0) return std::chrono::nanoseconds(0);
    return std::min<std::chrono::nanoseconds>(max, std::chrono::milliseconds(left_ms));
  }

 private:
  struct Entry {
    int64_t timestamp_ms;
    uint64_t seq;
    std::function<void(int64_t)> callback;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.timestamp_ms != b.timestamp_ms ? a.timestamp_ms > b.timestamp_ms : a.seq > b.seq;
    }
  };
  const Clock* clock_;
  std::priority_queue<Entry, std::vector<Entry>, Later> queue_;
  uint64_t next_seq_ = 0;
};

}  // namespace sluice
