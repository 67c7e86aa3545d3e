#include "restart/failure_rate_restart_strategy.h"

#include <chrono>

#include "sluice/config/options.h"
#include "sluice/core/duration.h"

namespace sluice {

Status FailureRateRestartConfig::validate() const {
  if (max_failures_per_interval < 1) {
    return Status::invalid_argument(options::kFailureRateMaxFailuresPerInterval.key + ": " +
                                    std::to_string(max_failures_per_interval) + " is out of range (expected >= 1)");
  }
  if (failure_rate_interval_ms < 1) {
    return Status::invalid_argument(options::kFailureRateInterval.key + ": " +
                                    std::to_string(failure_rate_interval_ms) +
                                    "ms is out of range (expected >= 1ms)");
  }
  if (delay_ms < 0) {
    return Status::invalid_argument(options::kFailureRateDelay.key + ": " + std::to_string(delay_ms) +
                                    "ms is out of range (expected >= 0)");
  }
  return Status::ok();
}

bool FailureRateRestartBackoffTimeStrategy::notify_failure(const Status& /*cause*/, int64_t now_ms) {
  if (window_full()) failure_times_ms_.pop_front();
  failure_times_ms_.push_back(now_ms);
  return true;
}

bool FailureRateRestartBackoffTimeStrategy::can_restart() const {
  if (!window_full()) return true;
  // Measured at the newest failure, the time of the decision (Flink reads its clock here instead).
  return failure_times_ms_.back() - failure_times_ms_.front() > config_.failure_rate_interval_ms;
}

std::string FailureRateRestartBackoffTimeStrategy::describe() const {
  using std::chrono::milliseconds;
  return "failure-rate(max-failures-per-interval=" + std::to_string(config_.max_failures_per_interval) +
         ", failure-rate-interval=" + format_duration(milliseconds(config_.failure_rate_interval_ms)) +
         ", delay=" + format_duration(milliseconds(config_.delay_ms)) +
         "; recent failures: " + std::to_string(failure_times_ms_.size()) + ")";
}

}  // namespace sluice
