// restart-strategy.type FIXED-DELAY: up to `attempts` restarts, each after the same delay; the failure after
// the last allowed restart fails the job. Flink's FixedDelayRestartBackoffTimeStrategy.
//
// Timeline (attempts=2, delay=1s): failure 1 -> restart after 1s; failure 2 -> restart after 1s;
// failure 3 -> the job fails. Failures are counted over the job's whole life (no reset).
// Thread-safety: none (see restart_strategy.h).
#pragma once

#include <cstdint>
#include <string>

#include "restart/restart_strategy.h"

namespace sluice {

struct FixedDelayRestartConfig {
  int32_t attempts = 1;      // restart-strategy.fixed-delay.attempts, >= 0
  int64_t delay_ms = 1'000;  // restart-strategy.fixed-delay.delay, >= 0

  // kInvalidArgument naming the option key when a value is out of range.
  Status validate() const;
};

class FixedDelayRestartBackoffTimeStrategy final : public RestartBackoffTimeStrategy {
 public:
  // Precondition: config.validate() is ok (create_restart_strategy checks it).
  explicit FixedDelayRestartBackoffTimeStrategy(const FixedDelayRestartConfig& config) : config_(config) {}

  bool notify_failure(const Status& cause, int64_t now_ms) override;
  bool can_restart() const override { return failures_ <= config_.attempts; }
  int64_t backoff_time_ms() const override { return config_.delay_ms; }
  std::string describe() const override;

 private:
  FixedDelayRestartConfig config_;
  int64_t failures_ = 0;
};

}  // namespace sluice
