// Test helper: drives a strategy through a hand-written timeline of failures and checks every decision.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "restart/restart_strategy.h"

namespace sluice::testing {

struct Step {
  int64_t failure_at_ms;
  bool new_attempt;   // notify_failure's answer
  bool can_restart;
  int64_t backoff_ms;  // checked only when can_restart
};

inline void run_timeline(RestartBackoffTimeStrategy& strategy, const std::vector<Step>& steps) {
  const Status cause = Status::io_error("disk went away");
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    SCOPED_TRACE("step " + std::to_string(i) + ", failure at " + std::to_string(s.failure_at_ms) + "ms; " +
                 strategy.describe());
    EXPECT_EQ(strategy.notify_failure(cause, s.failure_at_ms), s.new_attempt);
    EXPECT_EQ(strategy.can_restart(), s.can_restart);
    if (s.can_restart) {
      EXPECT_EQ(strategy.backoff_time_ms(), s.backoff_ms);
    }
  }
}

}  // namespace sluice::testing
