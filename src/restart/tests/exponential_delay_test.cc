#include "restart/exponential_delay_restart_strategy.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "timeline.h"

namespace sluice {
namespace {

using testing::run_timeline;
using testing::Step;

ExponentialDelayRestartConfig no_jitter(int64_t initial_ms, double multiplier, int64_t max_ms) {
  ExponentialDelayRestartConfig c;
  c.initial_backoff_ms = initial_ms;
  c.backoff_multiplier = multiplier;
  c.max_backoff_ms = max_ms;
  c.jitter_factor = 0;
  return c;
}

TEST(ExponentialDelay, GrowsByTheMultiplierUpToTheCap) {
  // Flink's documented example: 1s x 2 capped at 10s gives 1, 2, 4, 8, 10, 10 seconds.
  ExponentialDelayRestartBackoffTimeStrategy strategy(no_jitter(1'000, 2.0, 10'000), 7);
  EXPECT_TRUE(strategy.can_restart());
  EXPECT_EQ(strategy.backoff_time_ms(), 0);  // nothing scheduled yet
  run_timeline(strategy, {
                             {0, true, true, 1'000},        // restart at 1s
                             {1'500, true, true, 2'000},    // restart at 3.5s
                             {4'000, true, true, 4'000},    // restart at 8s
                             {9'000, true, true, 8'000},    // restart at 17s
                             {18'000, true, true, 10'000},  // 16s capped; restart at 28s
                             {29'000, true, true, 10'000},  // restart at 39s
                         });
  EXPECT_EQ(strategy.current_attempt(), 6);
}

TEST(ExponentialDelay, DefaultSettingsSequence) {
  ExponentialDelayRestartConfig config;  // 1s x 1.5 up to 1min, as Flink 2.x
  config.jitter_factor = 0;
  ExponentialDelayRestartBackoffTimeStrategy strategy(config, 1);
  std::vector<int64_t> backoffs;
  int64_t t = 0;
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(strategy.notify_failure(Status::io_error("x"), t));
    ASSERT_TRUE(strategy.can_restart());
    backoffs.push_back(strategy.backoff_time_ms());
    t += strategy.backoff_time_ms() + 1;  // fail again right after each restart
  }
  std::vector<int64_t> expected{1'000,  1'500,  2'250,  3'375,  5'062,  7'593,
                                11'390, 17'085, 25'628, 38'443, 57'665, 60'000};
  EXPECT_EQ(backoffs, expected);
}

TEST(ExponentialDelay, FailuresBeforeTheScheduledRestartAreMerged) {
  ExponentialDelayRestartBackoffTimeStrategy strategy(no_jitter(1'000, 2.0, 10'000), 7);
  run_timeline(strategy, {
                             {0, true, true, 1'000},     // restart at 1s
                             {300, false, true, 700},    // same failover: wait for the same restart
                             {1'000, false, true, 0},    // at the restart time itself: still merged
                             {1'001, true, true, 2'000}, // a new attempt
                         });
  EXPECT_EQ(strategy.current_attempt(), 2);
}

TEST(ExponentialDelay, QuietPeriodResetsBackoffAndAttempts) {
  ExponentialDelayRestartConfig config = no_jitter(1'000, 2.0, 10'000);
  config.reset_backoff_threshold_ms = 60'000;
  ExponentialDelayRestartBackoffTimeStrategy strategy(config, 7);
  run_timeline(strategy, {
                             {0, true, true, 1'000},       // restart at 1s
                             {2'000, true, true, 2'000},   // restart at 4s
                             {63'999, true, true, 4'000},  // ran 59.999s since the restart: no reset; at 68s
                             {127'999, true, true, 1'000}, // ran exactly 60s since the restart at 67.999s: reset
                             {130'000, true, true, 2'000},
                         });
  EXPECT_EQ(strategy.current_attempt(), 2);
}

TEST(ExponentialDelay, AttemptsBeforeResetBackoffLimitsRestarts) {
  ExponentialDelayRestartConfig config = no_jitter(1'000, 2.0, 10'000);
  config.attempts_before_reset_backoff = 2;
  config.reset_backoff_threshold_ms = 60'000;
  {
    ExponentialDelayRestartBackoffTimeStrategy strategy(config, 7);
    run_timeline(strategy, {
                               {0, true, true, 1'000},
                               {5'000, true, true, 2'000},
                               {10'000, true, false, 0},  // third attempt without a quiet period
                           });
  }
  {
    ExponentialDelayRestartBackoffTimeStrategy strategy(config, 7);
    run_timeline(strategy, {
                               {0, true, true, 1'000},
                               {5'000, true, true, 2'000},     // restart at 7s
                               {67'000, true, true, 1'000},    // quiet for 60s: the count starts over
                               {70'000, true, true, 2'000},
                               {80'000, true, false, 0},
                           });
  }
}

TEST(ExponentialDelay, HugeAttemptCountsSaturateAtTheCap) {
  ExponentialDelayRestartConfig config = no_jitter(1, 10.0, 5'000);
  config.jitter_factor = 1.0;  // the largest offsets, on a saturated base
  ExponentialDelayRestartBackoffTimeStrategy strategy(config, 3);
  int64_t t = 0;
  for (int i = 0; i < 400; ++i) {  // 10^400 overflows a double: must stay within [initial, max]
    ASSERT_TRUE(strategy.notify_failure(Status::io_error("x"), t));
    int64_t backoff = strategy.backoff_time_ms();
    ASSERT_GE(backoff, 1);
    ASSERT_LE(backoff, 5'000);
    t += backoff + 1;
  }
}

// The backoffs of attempt k (0-based) for `seeds` different seeds, each strategy failing right after
// every restart.
std::vector<int64_t> backoffs_of_attempt(const ExponentialDelayRestartConfig& config, int k, int seeds) {
  std::vector<int64_t> out;
  for (int seed = 0; seed < seeds; ++seed) {
    ExponentialDelayRestartBackoffTimeStrategy strategy(config, static_cast<uint64_t>(seed));
    int64_t t = 0;
    for (int i = 0; i <= k; ++i) {
      (void)strategy.notify_failure(Status::io_error("x"), t);
      t += strategy.backoff_time_ms() + 1;
    }
    out.push_back(strategy.backoff_time_ms());
  }
  return out;
}

TEST(ExponentialDelay, JitterStaysWithinTheFactorAndSpreads) {
  ExponentialDelayRestartConfig config = no_jitter(8'000, 2.0, 1'000'000);
  config.jitter_factor = 0.25;
  // Attempt 1: base 16s, offset floor(16s x 0.25) = 4s -> [12s, 20s].
  std::vector<int64_t> second = backoffs_of_attempt(config, 1, 500);
  std::set<int64_t> distinct(second.begin(), second.end());
  int below = 0;
  int above = 0;
  for (int64_t b : second) {
    ASSERT_GE(b, 12'000);
    ASSERT_LE(b, 20'000);
    below += b < 16'000;
    above += b > 16'000;
  }
  EXPECT_GT(distinct.size(), 400u);  // 8001 possible values, 500 draws
  EXPECT_GT(below, 150);
  EXPECT_GT(above, 150);
  // Attempt 0: base 8s, offset 2s, but never below the initial backoff -> [8s, 10s].
  for (int64_t b : backoffs_of_attempt(config, 0, 200)) {
    ASSERT_GE(b, 8'000);
    ASSERT_LE(b, 10'000);
  }
}

TEST(ExponentialDelay, FlinkDocumentedJitterRange) {
  // Flink's docs: 1s x 2, jitter 0.1 -> the third restart waits 3.6s to 4.4s.
  ExponentialDelayRestartConfig config = no_jitter(1'000, 2.0, 10'000);
  config.jitter_factor = 0.1;
  for (int64_t b : backoffs_of_attempt(config, 2, 300)) {
    ASSERT_GE(b, 3'600);
    ASSERT_LE(b, 4'400);
  }
}

TEST(ExponentialDelay, SameSeedSameBackoffs) {
  ExponentialDelayRestartConfig config;  // default jitter 0.1
  auto sequence = [&](uint64_t seed) {
    ExponentialDelayRestartBackoffTimeStrategy strategy(config, seed);
    std::vector<int64_t> out;
    int64_t t = 0;
    for (int i = 0; i < 10; ++i) {
      (void)strategy.notify_failure(Status::io_error("x"), t);
      out.push_back(strategy.backoff_time_ms());
      t += out.back() + 1;
    }
    return out;
  };
  EXPECT_EQ(sequence(42), sequence(42));
  EXPECT_NE(sequence(42), sequence(43));
}

TEST(ExponentialDelay, ValidateNamesTheKey) {
  ExponentialDelayRestartConfig c;
  c.initial_backoff_ms = 120'000;  // above the default max of 1min
  EXPECT_EQ(c.validate().message(),
            "restart-strategy.exponential-delay.initial-backoff (2min) must not exceed "
            "restart-strategy.exponential-delay.max-backoff (1min)");
  c = {};
  c.backoff_multiplier = 1.0;
  EXPECT_EQ(c.validate().message(),
            "restart-strategy.exponential-delay.backoff-multiplier: 1 is out of range (expected > 1)");
  c = {};
  c.jitter_factor = 1.5;
  EXPECT_EQ(c.validate().code(), StatusCode::kInvalidArgument);
  c = {};
  c.attempts_before_reset_backoff = 0;
  EXPECT_EQ(c.validate().code(), StatusCode::kInvalidArgument);
  c = {};
  c.reset_backoff_threshold_ms = 0;
  EXPECT_EQ(c.validate().code(), StatusCode::kInvalidArgument);
  c = {};
  c.initial_backoff_ms = 0;
  EXPECT_EQ(c.validate().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(ExponentialDelayRestartConfig{}.validate().is_ok());
}

TEST(ExponentialDelay, Describe) {
  ExponentialDelayRestartBackoffTimeStrategy strategy(ExponentialDelayRestartConfig{}, 1);
  EXPECT_EQ(strategy.describe(),
            "exponential-delay(initial-backoff=1s, max-backoff=1min, backoff-multiplier=1.5, "
            "reset-backoff-threshold=1h, jitter-factor=0.1, attempts-before-reset-backoff=unlimited; "
            "attempts since reset: 0)");
}

}  // namespace
}  // namespace sluice
