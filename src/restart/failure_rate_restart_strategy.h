// restart-strategy.type FAILURE-RATE: restart after a fixed delay as long as the failures inside a sliding
// window stay within a limit. Flink's FailureRateRestartBackoffTimeStrategy.
//
// Rule: the job may restart unless the last max_failures_per_interval + 1 failures all happened within
// failure_rate_interval_ms, i.e. (newest - oldest of them) <= interval. So max_failures_per_interval
// restarts fit in any window of that length; one failure more inside it fails the job.
// Timeline (max 2 per 10s): failures at 0s, 4s -> restart; at 11s -> restart (0s slid out: 11 - 0 > 10);
// at 13s -> the job fails (4s, 11s, 13s lie within 10s).
// Thread-safety: none (see restart_strategy.h).
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "restart/restart_strategy.h"

namespace sluice {

struct FailureRateRestartConfig {
  int32_t max_failures_per_interval = 1;     // restart-strategy.failure-rate.max-failures-per-interval, >= 1
  int64_t failure_rate_interval_ms = 60'000;  // restart-strategy.failure-rate.failure-rate-interval, >= 1
  int64_t delay_ms = 1'000;                  // restart-strategy.failure-rate.delay, >= 0

  // kInvalidArgument naming the option key when a value is out of range.
  Status validate() const;
};

class FailureRateRestartBackoffTimeStrategy final : public RestartBackoffTimeStrategy {
 public:
  // Precondition: config.validate() is ok (create_restart_strategy checks it).
  explicit FailureRateRestartBackoffTimeStrategy(const FailureRateRestartConfig& config) : config_(config) {}

  bool notify_failure(const Status& cause, int64_t now_ms) override;
  bool can_restart() const override;
  int64_t backoff_time_ms() const override { return config_.delay_ms; }
  std::string describe() const override;

 private:
  bool window_full() const {
    return failure_times_ms_.size() > static_cast<size_t>(config_.max_failures_per_interval);
  }

  FailureRateRestartConfig config_;
  std::deque<int64_t> failure_times_ms_;  // the newest max_failures_per_interval + 1 failure times, oldest first
};

}  // namespace sluice
