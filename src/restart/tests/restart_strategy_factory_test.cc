#include "restart/restart_strategy_factory.h"

#include <gtest/gtest.h>

#include "sluice/config/derived_options.h"

namespace sluice {
namespace {

Configuration from_yaml(std::string_view yaml) {
  Result<Configuration> c = Configuration::from_yaml_string(yaml);
  EXPECT_TRUE(c.is_ok()) << c.status().to_string();
  return c.is_ok() ? *c : Configuration();
}

TEST(RestartStrategyFactory, DefaultDependsOnCheckpointing) {
  Configuration empty;
  Result<RestartStrategyConfig> off = restart_strategy_config(empty, /*checkpointing_enabled=*/false);
  ASSERT_TRUE(off.is_ok());
  EXPECT_EQ(off->type, RestartStrategyType::kNone);

  Result<RestartStrategyConfig> on = restart_strategy_config(empty, /*checkpointing_enabled=*/true);
  ASSERT_TRUE(on.is_ok());
  EXPECT_EQ(on->type, RestartStrategyType::kExponentialDelay);
  EXPECT_EQ(on->exponential_delay.initial_backoff_ms, 1'000);
  EXPECT_EQ(on->exponential_delay.max_backoff_ms, 60'000);
  EXPECT_EQ(on->exponential_delay.backoff_multiplier, 1.5);
  EXPECT_EQ(on->exponential_delay.reset_backoff_threshold_ms, 3'600'000);
  EXPECT_EQ(on->exponential_delay.jitter_factor, 0.1);
  EXPECT_EQ(on->exponential_delay.attempts_before_reset_backoff, 2147483647);

  // The usual call: checkpointing as the configuration says.
  Configuration with_interval = from_yaml("execution.checkpointing.interval: 1s");
  auto strategy = create_restart_strategy(with_interval, checkpointing_enabled(with_interval), 1);
  ASSERT_TRUE(strategy.is_ok());
  EXPECT_NE((*strategy)->describe().find("exponential-delay("), std::string::npos);
}

// restart-strategy.max-identical-failures applies to every type: default 10, 0 = off; a negative value set in
// code (not through the option) is refused naming the key.
TEST(RestartStrategyFactory, MaxIdenticalFailuresIsReadForEveryType) {
  for (const char* type : {"none", "fixed-delay", "failure-rate", "exponential-delay"}) {
    SCOPED_TRACE(type);
    const std::string yaml = std::string("restart-strategy.type: ") + type;
    Result<RestartStrategyConfig> dflt = restart_strategy_config(from_yaml(yaml), true);
    ASSERT_TRUE(dflt.is_ok()) << dflt.status().to_string();
    EXPECT_EQ(dflt->max_identical_failures, 10);
    Result<RestartStrategyConfig> set =
        restart_strategy_config(from_yaml(yaml + "\nrestart-strategy.max-identical-failures: 0"), true);
    ASSERT_TRUE(set.is_ok()) << set.status().to_string();
    EXPECT_EQ(set->max_identical_failures, 0);
  }
  RestartStrategyConfig negative;
  negative.max_identical_failures = -2;
  Status s = negative.validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("restart-strategy.max-identical-failures: -2"), std::string::npos) << s.to_string();
}

TEST(RestartStrategyFactory, ExplicitTypeWinsOverTheDefault) {
  Configuration c = from_yaml("restart-strategy.type: none\nexecution.checkpointing.interval: 1s");
  auto strategy = create_restart_strategy(c, checkpointing_enabled(c), 1);
  ASSERT_TRUE(strategy.is_ok());
  EXPECT_EQ((*strategy)->describe(), "none");
}

TEST(RestartStrategyFactory, EveryFlinkNameOfEveryType) {
  struct Case {
    const char* name;
    RestartStrategyType type;
  };
  for (Case c : {Case{"none", RestartStrategyType::kNone}, Case{"off", RestartStrategyType::kNone},
                 Case{"disable", RestartStrategyType::kNone}, Case{"fixed-delay", RestartStrategyType::kFixedDelay},
                 Case{"fixeddelay", RestartStrategyType::kFixedDelay},
                 Case{"failure-rate", RestartStrategyType::kFailureRate},
                 Case{"FailureRate", RestartStrategyType::kFailureRate},
                 Case{"exponential-delay", RestartStrategyType::kExponentialDelay},
                 Case{"exponentialdelay", RestartStrategyType::kExponentialDelay}}) {
    Configuration config;
    ASSERT_TRUE(config.set_string("restart-strategy.type", c.name).is_ok()) << c.name;
    Result<RestartStrategyConfig> parsed = restart_strategy_config(config, true);
    ASSERT_TRUE(parsed.is_ok()) << c.name;
    EXPECT_EQ(parsed->type, c.type) << c.name;
  }
}

TEST(RestartStrategyFactory, ReadsTheChosenStrategysOptions) {
  Configuration fixed = from_yaml(R"(
restart-strategy:
  type: fixed-delay
  fixed-delay:
    attempts: 3
    delay: 10 s
)");
  auto f = create_restart_strategy(fixed, false, 1);
  ASSERT_TRUE(f.is_ok()) << f.status().to_string();
  EXPECT_EQ((*f)->describe(), "fixed-delay(attempts=3, delay=10s; failures so far: 0)");

  Configuration rate = from_yaml(R"(
restart-strategy.type: failure-rate
restart-strategy.failure-rate.max-failures-per-interval: 3
restart-strategy.failure-rate.failure-rate-interval: 5 min
restart-strategy.failure-rate.delay: 10 s
)");
  auto r = create_restart_strategy(rate, false, 1);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)->describe(), "failure-rate(max-failures-per-interval=3, failure-rate-interval=5min, delay=10s; "
                                  "recent failures: 0)");

  Configuration exp = from_yaml(R"(
restart-strategy.type: exponential-delay
restart-strategy.exponential-delay.initial-backoff: 10 s
restart-strategy.exponential-delay.max-backoff: 2 min
restart-strategy.exponential-delay.backoff-multiplier: 1.4
restart-strategy.exponential-delay.reset-backoff-threshold: 10 min
restart-strategy.exponential-delay.jitter-factor: 0
restart-strategy.exponential-delay.attempts-before-reset-backoff: 10
)");
  auto e = create_restart_strategy(exp, false, 1);
  ASSERT_TRUE(e.is_ok()) << e.status().to_string();
  EXPECT_EQ((*e)->describe(),
            "exponential-delay(initial-backoff=10s, max-backoff=2min, backoff-multiplier=1.4, "
            "reset-backoff-threshold=10min, jitter-factor=0, attempts-before-reset-backoff=10; "
            "attempts since reset: 0)");
  (void)(*e)->notify_failure(Status::io_error("x"), 0);
  EXPECT_EQ((*e)->backoff_time_ms(), 10'000);
}

TEST(RestartStrategyFactory, InconsistentSettingsOfTheChosenStrategyAreErrors) {
  Configuration c = from_yaml(
      "restart-strategy.type: exponential-delay\n"
      "restart-strategy.exponential-delay.initial-backoff: 5 min\n");
  auto s = create_restart_strategy(c, false, 1);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("initial-backoff (5min) must not exceed"), std::string::npos)
      << s.status().message();
  // The same settings do not matter for another strategy.
  ASSERT_TRUE(c.set_string("restart-strategy.type", "fixed-delay").is_ok());
  EXPECT_TRUE(create_restart_strategy(c, false, 1).is_ok());
}

TEST(RestartStrategyFactory, ProgrammaticConfigIsValidated) {
  RestartStrategyConfig config;
  config.type = RestartStrategyType::kFailureRate;
  config.failure_rate.max_failures_per_interval = 0;
  auto s = create_restart_strategy(config, 1);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.status().message().find("max-failures-per-interval"), std::string::npos);
}

TEST(RestartStrategyFactory, DeprecatedTypeKey) {
  Configuration c = from_yaml("restart-strategy: fixed-delay");
  Result<RestartStrategyConfig> parsed = restart_strategy_config(c, false);
  ASSERT_TRUE(parsed.is_ok());
  EXPECT_EQ(parsed->type, RestartStrategyType::kFixedDelay);
}

}  // namespace
}  // namespace sluice
