#include "restart/restart_strategy_factory.h"

#include "sluice/config/derived_options.h"

namespace sluice {

Status RestartStrategyConfig::validate() const {
  if (max_identical_failures < 0) {
    return Status::invalid_argument("restart-strategy.max-identical-failures: " +
                                    std::to_string(max_identical_failures) + " is negative; expected >= 0 (0 = off)");
  }
  switch (type) {
    case RestartStrategyType::kNone:
      return Status::ok();
    case RestartStrategyType::kFixedDelay:
      return fixed_delay.validate();
    case RestartStrategyType::kFailureRate:
      return failure_rate.validate();
    case RestartStrategyType::kExponentialDelay:
      return exponential_delay.validate();
  }
  return Status::internal("unknown restart strategy type " + std::to_string(static_cast<int>(type)));
}

Result<RestartStrategyConfig> restart_strategy_config(const Configuration& config, bool checkpointing_enabled) {
  RestartStrategyConfig out;
  out.type = restart_strategy_type(config, checkpointing_enabled);
  out.max_identical_failures = config.get(options::kMaxIdenticalFailures);
  switch (out.type) {
    case RestartStrategyType::kNone:
      break;
    case RestartStrategyType::kFixedDelay:
      out.fixed_delay.attempts = config.get(options::kFixedDelayAttempts);
      out.fixed_delay.delay_ms = config.get(options::kFixedDelayDelay).count();
      break;
    case RestartStrategyType::kFailureRate:
      out.failure_rate.max_failures_per_interval = config.get(options::kFailureRateMaxFailuresPerInterval);
      out.failure_rate.failure_rate_interval_ms = config.get(options::kFailureRateInterval).count();
      out.failure_rate.delay_ms = config.get(options::kFailureRateDelay).count();
      break;
    case RestartStrategyType::kExponentialDelay: {
      ExponentialDelayRestartConfig& e = out.exponential_delay;
      e.initial_backoff_ms = config.get(options::kExponentialDelayInitialBackoff).count();
      e.max_backoff_ms = config.get(options::kExponentialDelayMaxBackoff).count();
      e.backoff_multiplier = config.get(options::kExponentialDelayBackoffMultiplier);
      e.reset_backoff_threshold_ms = config.get(options::kExponentialDelayResetBackoffThreshold).count();
      e.jitter_factor = config.get(options::kExponentialDelayJitterFactor);
      e.attempts_before_reset_backoff = config.get(options::kExponentialDelayAttemptsBeforeResetBackoff);
      break;
    }
  }
  SLUICE_RETURN_IF_ERROR(out.validate());
  return out;
}

Result<std::unique_ptr<RestartBackoffTimeStrategy>> create_restart_strategy(const RestartStrategyConfig& config,
                                                                            uint64_t jitter_seed) {
  SLUICE_RETURN_IF_ERROR(config.validate());
  std::unique_ptr<RestartBackoffTimeStrategy> strategy;
  switch (config.type) {
    case RestartStrategyType::kNone:
      strategy = std::make_unique<NoRestartBackoffTimeStrategy>();
      break;
    case RestartStrategyType::kFixedDelay:
      strategy = std::make_unique<FixedDelayRestartBackoffTimeStrategy>(config.fixed_delay);
      break;
    case RestartStrategyType::kFailureRate:
      strategy = std::make_unique<FailureRateRestartBackoffTimeStrategy>(config.failure_rate);
      break;
    case RestartStrategyType::kExponentialDelay:
      strategy = std::make_unique<ExponentialDelayRestartBackoffTimeStrategy>(config.exponential_delay, jitter_seed);
      break;
  }
  return strategy;
}

Result<std::unique_ptr<RestartBackoffTimeStrategy>> create_restart_strategy(const Configuration& config,
                                                                            bool checkpointing_enabled,
                                                                            uint64_t jitter_seed) {
  SLUICE_ASSIGN_OR_RETURN(RestartStrategyConfig parsed, restart_strategy_config(config, checkpointing_enabled));
  return create_restart_strategy(parsed, jitter_seed);
}

}  // namespace sluice
