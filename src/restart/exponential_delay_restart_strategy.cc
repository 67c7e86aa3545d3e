#include "restart/exponential_delay_restart_strategy.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "sluice/config/option_type.h"
#include "sluice/config/options.h"
#include "sluice/core/duration.h"

namespace sluice {
namespace {

Status out_of_range(const std::string& key, const std::string& value, const std::string& expected) {
  return Status::invalid_argument(key + ": " + value + " is out of range (expected " + expected + ")");
}

std::string ms_text(int64_t ms) { return format_duration(std::chrono::milliseconds(ms)); }

}  // namespace

Status ExponentialDelayRestartConfig::validate() const {
  if (initial_backoff_ms < 1) {
    return out_of_range(options::kExponentialDelayInitialBackoff.key, std::to_string(initial_backoff_ms) + "ms",
                        ">= 1ms");
  }
  if (max_backoff_ms < 1) {
    return out_of_range(options::kExponentialDelayMaxBackoff.key, std::to_string(max_backoff_ms) + "ms", ">= 1ms");
  }
  if (initial_backoff_ms > max_backoff_ms) {
    return Status::invalid_argument(options::kExponentialDelayInitialBackoff.key + " (" +
                                    ms_text(initial_backoff_ms) + ") must not exceed " +
                                    options::kExponentialDelayMaxBackoff.key + " (" + ms_text(max_backoff_ms) + ")");
  }
  if (!(backoff_multiplier > 1.0) || !std::isfinite(backoff_multiplier)) {
    return out_of_range(options::kExponentialDelayBackoffMultiplier.key,
                        OptionType<double>::format(backoff_multiplier), "> 1");
  }
  if (reset_backoff_threshold_ms < 1) {
    return out_of_range(options::kExponentialDelayResetBackoffThreshold.key,
                        std::to_string(reset_backoff_threshold_ms) + "ms", ">= 1ms");
  }
  if (!(jitter_factor >= 0.0 && jitter_factor <= 1.0)) {
    return out_of_range(options::kExponentialDelayJitterFactor.key, OptionType<double>::format(jitter_factor),
                        "in [0, 1]");
  }
  if (attempts_before_reset_backoff < 1) {
    return out_of_range(options::kExponentialDelayAttemptsBeforeResetBackoff.key,
                        std::to_string(attempts_before_reset_backoff), ">= 1");
  }
  return Status::ok();
}

bool ExponentialDelayRestartBackoffTimeStrategy::notify_failure(const Status& /*cause*/, int64_t now_ms) {
  last_failure_ms_ = now_ms;
  // A failure before the scheduled restart is part of the failover in progress.
  if (restart_at_ms_ && now_ms <= *restart_at_ms_) return false;
  // Ran long enough since the last restart without failing (or the first failure): start over.
  if (!restart_at_ms_ || now_ms - *restart_at_ms_ >= config_.reset_backoff_threshold_ms) attempt_ = 0;
  restart_at_ms_ = now_ms + next_backoff_ms();
  ++attempt_;
  return true;
}

int64_t ExponentialDelayRestartBackoffTimeStrategy::backoff_time_ms() const {
  if (!restart_at_ms_) return 0;
  return std::max<int64_t>(0, *restart_at_ms_ - last_failure_ms_);
}

int64_t ExponentialDelayRestartBackoffTimeStrategy::next_backoff_ms() {
  // initial x multiplier^k in double; saturate well below INT64_MAX so the sums below cannot overflow.
  constexpr double kSaturation = 4.0e18;
  double exact = static_cast<double>(config_.initial_backoff_ms) *
                 std::pow(config_.backoff_multiplier, static_cast<double>(attempt_));
  int64_t base_ms = exact >= kSaturation ? static_cast<int64_t>(kSaturation) : static_cast<int64_t>(exact);
  int64_t jitter_ms = 0;
  if (config_.jitter_factor > 0) {
    jitter_ms = uniform_jitter(static_cast<int64_t>(static_cast<double>(base_ms) * config_.jitter_factor));
  }
  return std::clamp(base_ms + jitter_ms, config_.initial_backoff_ms, config_.max_backoff_ms);
}

uint64_t ExponentialDelayRestartBackoffTimeStrategy::next_random() {
  uint64_t z = (rng_state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

int64_t ExponentialDelayRestartBackoffTimeStrategy::uniform_jitter(int64_t offset_ms) {
  if (offset_ms <= 0) return 0;
  const uint64_t range = 2 * static_cast<uint64_t>(offset_ms) + 1;
  // Rejection sampling: draws below `limit` map uniformly onto [0, range).
  const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  uint64_t draw = next_random();
  while (draw >= limit) draw = next_random();
  return static_cast<int64_t>(draw % range) - offset_ms;
}

std::string ExponentialDelayRestartBackoffTimeStrategy::describe() const {
  std::string attempts = config_.attempts_before_reset_backoff == std::numeric_limits<int32_t>::max()
                             ? "unlimited"
                             : std::to_string(config_.attempts_before_reset_backoff);
  return "exponential-delay(initial-backoff=" + ms_text(config_.initial_backoff_ms) +
         ", max-backoff=" + ms_text(config_.max_backoff_ms) +
         ", backoff-multiplier=" + OptionType<double>::format(config_.backoff_multiplier) +
         ", reset-backoff-threshold=" + ms_text(config_.reset_backoff_threshold_ms) +
         ", jitter-factor=" + OptionType<double>::format(config_.jitter_factor) +
         ", attempts-before-reset-backoff=" + attempts + "; attempts since reset: " + std::to_string(attempt_) + ")";
}

}  // namespace sluice
