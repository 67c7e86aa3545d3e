// Per-second rates of growing totals, as Flink's MeterView (numRecordsInPerSecond, busyTimeMsPerSecond, ...):
// the rate over the last `time_span_ms` (default 60 s, Flink's default time span), from samples of the total.
//
// Flink updates its views every 5 s on a timer thread. A RateView has no thread: it samples its total when read
// (a snapshot of the registry), at most one sample per second, so the rate is (total now - total at the oldest
// sample within the span) / (the time between them); when no earlier sample is within the span (reads further
// apart than the span), the newest older one. Until the view is older than its span, the base is the sample taken
// at construction: the rate since the view was created. A total that went down (a counter reset) restarts the
// view at that value. Fixed memory: at most time_span_ms / 1000 + 2 samples.
//
// Thread-safety: rate_per_second() may be called from any thread (it takes the view's own mutex); `total` is
// called on the reading thread and must be safe there (read atomics).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>

#include "sluice/core/clock.h"
#include "sluice/metrics/metric_group.h"

namespace sluice {

inline constexpr int64_t kDefaultRateTimeSpanMs = 60'000;  // Flink's MeterView default

class RateView {
 public:
  // `clock`: nullptr is the system clock (tests pass a ManualClock). Takes the first sample now.
  // Throws std::invalid_argument when time_span_ms < 1000 (one sample per second).
  explicit RateView(std::function<double()> total, int64_t time_span_ms = kDefaultRateTimeSpanMs,
                    const Clock* clock = nullptr);

  // Units of the total per second; 0 when no time passed since the first sample.
  double rate_per_second();

 private:
  struct Sample {
    int64_t at_ns;
    double total;
  };

  std::function<double()> total_;
  const int64_t span_ns_;
  const Clock* clock_;
  std::mutex mu_;
  std::deque<Sample> samples_;  // oldest first; guarded by mu_
};

// A Gauge reading a new RateView of `total` (MetricGroup::gauge takes it).
Gauge rate_gauge(std::function<double()> total, int64_t time_span_ms = kDefaultRateTimeSpanMs,
                 const Clock* clock = nullptr);

// Registers the gauge `<counter name>PerSecond` of group's counter `counter_name` (Flink's numRecordsInPerSecond
// beside numRecordsIn).
void register_per_second_of_counter(MetricGroup& group, std::string_view counter_name,
                                    const Clock* clock = nullptr);

}  // namespace sluice
