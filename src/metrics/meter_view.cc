#include "sluice/metrics/meter_view.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace sluice {

namespace {
constexpr int64_t kSampleSpacingNs = 1'000'000'000;  // at most one sample per second

const Clock& clock_or_system(const Clock* clock) { return clock != nullptr ? *clock : *SystemClock::shared(); }
}  // namespace

RateView::RateView(std::function<double()> total, int64_t time_span_ms, const Clock* clock)
    : total_(std::move(total)), span_ns_(time_span_ms * 1'000'000), clock_(&clock_or_system(clock)) {
  if (time_span_ms < 1000) {
    throw std::invalid_argument("RateView: time_span_ms must be at least 1000, got " + std::to_string(time_span_ms));
  }
  samples_.push_back({clock_->monotonic_ns(), total_()});
}

double RateView::rate_per_second() {
  const double now_total = total_();
  std::lock_guard lock(mu_);
  const int64_t now_ns = clock_->monotonic_ns();
  if (now_total < samples_.back().total) {  // the total was reset: start over from here
    samples_.clear();
    samples_.push_back({now_ns, now_total});
    return 0;
  }
  // The base: the oldest sample within the span, or the newest older one when none is (rare reads).
  while (samples_.size() >= 2 && samples_.front().at_ns < now_ns - span_ns_) samples_.pop_front();
  const Sample base = samples_.front();
  if (now_ns - samples_.back().at_ns >= kSampleSpacingNs) samples_.push_back({now_ns, now_total});
  const int64_t elapsed_ns = now_ns - base.at_ns;
  if (elapsed_ns <= 0) return 0;
  return (now_total - base.total) * 1e9 / static_cast<double>(elapsed_ns);
}

Gauge rate_gauge(std::function<double()> total, int64_t time_span_ms, const Clock* clock) {
  auto view = std::make_shared<RateView>(std::move(total), time_span_ms, clock);
  return [view] { return view->rate_per_second(); };
}

void register_per_second_of_counter(MetricGroup& group, std::string_view counter_name, const Clock* clock) {
  const Counter* counter = &group.counter(counter_name);
  group.gauge(std::string(counter_name) + "PerSecond",
              rate_gauge([counter] { return static_cast<double>(counter->count()); }, kDefaultRateTimeSpanMs, clock));
}

}  // namespace sluice
