// Builds the job's restart strategy from the restart-strategy.* options, as Flink's
// RestartBackoffTimeStrategyFactoryLoader does from a cluster or job configuration.
//
// Strategy type: restart-strategy.type, or when unset EXPONENTIAL-DELAY if checkpointing is enabled and NONE
// otherwise (restart_strategy_type() in sluice/config/derived_options.h). Only the options of the chosen
// strategy are read and validated. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <memory>

#include "restart/exponential_delay_restart_strategy.h"
#include "restart/failure_rate_restart_strategy.h"
#include "restart/fixed_delay_restart_strategy.h"
#include "restart/restart_strategy.h"
#include "sluice/config/configuration.h"
#include "sluice/config/options.h"

namespace sluice {

// The chosen strategy and its settings (the settings of the other strategies keep their defaults).
struct RestartStrategyConfig {
  RestartStrategyType type = RestartStrategyType::kNone;
  FixedDelayRestartConfig fixed_delay;
  FailureRateRestartConfig failure_rate;
  ExponentialDelayRestartConfig exponential_delay;
  // restart-strategy.max-identical-failures (any type): identical failures in a row, with no checkpoint completed
  // between, that fail the job (IdenticalFailureCounter in failure_classifier.h); 0 = no limit.
  int32_t max_identical_failures = 10;

  // Validates the settings of `type` (see each config's validate()) and max_identical_failures (>= 0).
  Status validate() const;
};

// Reads the strategy from `config`. `checkpointing_enabled` picks the default type (pass
// checkpointing_enabled(config) from derived_options.h). Errors (kInvalidArgument): the chosen strategy's
// settings are inconsistent, e.g. initial-backoff above max-backoff (each value alone was validated when
// it was set).
Result<RestartStrategyConfig> restart_strategy_config(const Configuration& config, bool checkpointing_enabled);

// A fresh strategy for one job. `jitter_seed` seeds exponential-delay's jitter (ignored by the others).
// Errors: those of RestartStrategyConfig::validate().
Result<std::unique_ptr<RestartBackoffTimeStrategy>> create_restart_strategy(const RestartStrategyConfig& config,
                                                                            uint64_t jitter_seed);

// Both steps at once.
Result<std::unique_ptr<RestartBackoffTimeStrategy>> create_restart_strategy(const Configuration& config,
                                                                            bool checkpointing_enabled,
                                                                            uint64_t jitter_seed);

}  // namespace sluice
