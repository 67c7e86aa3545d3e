#include "restart/fixed_delay_restart_strategy.h"

#include <chrono>

#include "sluice/config/options.h"
#include "sluice/core/duration.h"

namespace sluice {

Status FixedDelayRestartConfig::validate() const {
  if (attempts < 0) {
    return Status::invalid_argument(options::kFixedDelayAttempts.key + ": " + std::to_string(attempts) +
                                    " is out of range (expected >= 0)");
  }
  if (delay_ms < 0) {
    return Status::invalid_argument(options::kFixedDelayDelay.key + ": " + std::to_string(delay_ms) +
                                    "ms is out of range (expected >= 0)");
  }
  return Status::ok();
}

bool FixedDelayRestartBackoffTimeStrategy::notify_failure(const Status& /*cause*/, int64_t /*now_ms*/) {
  ++failures_;
  return true;
}

std::string FixedDelayRestartBackoffTimeStrategy::describe() const {
  return "fixed-delay(attempts=" + std::to_string(config_.attempts) +
         ", delay=" + format_duration(std::chrono::milliseconds(config_.delay_ms)) +
         "; failures so far: " + std::to_string(failures_) + ")";
}

}  // namespace sluice
