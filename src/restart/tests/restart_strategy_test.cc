#include "restart/restart_strategy.h"

#include <gtest/gtest.h>

#include "restart/exponential_delay_restart_strategy.h"
#include "restart/failure_rate_restart_strategy.h"
#include "restart/fixed_delay_restart_strategy.h"
#include "timeline.h"

namespace sluice {
namespace {

using testing::run_timeline;
using testing::Step;

TEST(NoRestart, EveryFailureFailsTheJob) {
  NoRestartBackoffTimeStrategy none;
  EXPECT_FALSE(none.can_restart());
  run_timeline(none, {{1'000, true, false, 0}});
  EXPECT_EQ(none.describe(), "none");
}

TEST(FixedDelay, RestartsUpToAttemptsThenFails) {
  FixedDelayRestartBackoffTimeStrategy fixed({.attempts = 3, .delay_ms = 500});
  EXPECT_TRUE(fixed.can_restart());
  run_timeline(fixed, {
                          {0, true, true, 500},
                          {10, true, true, 500},      // failures close together still count one by one
                          {90'000'000, true, true, 500},  // no reset, however long the job ran
                          {90'000'001, true, false, 0},
                      });
}

TEST(FixedDelay, ZeroAttemptsFailsOnTheFirstFailure) {
  FixedDelayRestartBackoffTimeStrategy fixed({.attempts = 0, .delay_ms = 0});
  run_timeline(fixed, {{5, true, false, 0}});
}

TEST(FixedDelay, DescribeNamesSettingsAndProgress) {
  FixedDelayRestartBackoffTimeStrategy fixed({.attempts = 3, .delay_ms = 1'000});
  (void)fixed.notify_failure(Status::io_error("x"), 0);
  EXPECT_EQ(fixed.describe(), "fixed-delay(attempts=3, delay=1s; failures so far: 1)");
}

TEST(FixedDelay, ValidateNamesTheKey) {
  FixedDelayRestartConfig negative_attempts{.attempts = -1, .delay_ms = 0};
  Status s = negative_attempts.validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "restart-strategy.fixed-delay.attempts: -1 is out of range (expected >= 0)");
  FixedDelayRestartConfig negative_delay{.attempts = 1, .delay_ms = -5};
  EXPECT_EQ(negative_delay.validate().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(FixedDelayRestartConfig{}.validate().is_ok());
}

TEST(FailureRate, OneFailurePerIntervalByDefault) {
  FailureRateRestartBackoffTimeStrategy rate({});  // 1 per 1min, delay 1s
  run_timeline(rate, {
                         {0, true, true, 1'000},
                         {60'001, true, true, 1'000},   // 60.001s after the first: outside the window
                         {120'001, true, false, 0},     // exactly 60s after the second: inside
                     });
}

TEST(FailureRate, WindowSlides) {
  FailureRateRestartConfig config{.max_failures_per_interval = 2, .failure_rate_interval_ms = 10'000, .delay_ms = 250};
  FailureRateRestartBackoffTimeStrategy rate(config);
  run_timeline(rate, {
                         {0, true, true, 250},
                         {4'000, true, true, 250},
                         {11'000, true, true, 250},  // window (0, 4, 11): 11 - 0 > 10, the 0 slides out
                         {15'000, true, true, 250},  // (4, 11, 15): 11 > 10
                         {20'000, true, false, 0},   // (11, 15, 20): 9 <= 10 -> three failures in 10s
                     });
}

TEST(FailureRate, ManyFailuresSpreadOutNeverFail) {
  FailureRateRestartBackoffTimeStrategy rate({.max_failures_per_interval = 3, .failure_rate_interval_ms = 1'000,
                                              .delay_ms = 0});
  const Status cause = Status::timeout("checkpoint expired");
  for (int64_t t = 0; t < 100'000; t += 400) {  // 2.5 failures per second, limit 3 per second
    (void)rate.notify_failure(cause, t);
    ASSERT_TRUE(rate.can_restart()) << "at " << t;
  }
  (void)rate.notify_failure(cause, 100'000);  // last four: 98.8s .. 100s, span 1.2s
  EXPECT_TRUE(rate.can_restart());
  (void)rate.notify_failure(cause, 100'100);  // last four: 99.2s .. 100.1s, within one second
  EXPECT_FALSE(rate.can_restart());
}

TEST(FailureRate, ValidateAndDescribe) {
  EXPECT_EQ(FailureRateRestartConfig{.max_failures_per_interval = 0}.validate().message(),
            "restart-strategy.failure-rate.max-failures-per-interval: 0 is out of range (expected >= 1)");
  EXPECT_FALSE(FailureRateRestartConfig{.failure_rate_interval_ms = 0}.validate().is_ok());
  EXPECT_FALSE(FailureRateRestartConfig{.delay_ms = -1}.validate().is_ok());
  FailureRateRestartBackoffTimeStrategy rate({});
  EXPECT_EQ(rate.describe(),
            "failure-rate(max-failures-per-interval=1, failure-rate-interval=1min, delay=1s; recent failures: 0)");
}

TEST(FailureClassification, InvalidArgumentIsNotRestartable) {
  EXPECT_FALSE(is_restartable_failure(Status::invalid_argument("bad option")));
  EXPECT_TRUE(is_restartable_failure(Status::io_error("disk")));
  EXPECT_TRUE(is_restartable_failure(Status::internal("bug")));
  EXPECT_TRUE(is_restartable_failure(Status::corruption("bad bytes")));
  EXPECT_TRUE(is_restartable_failure(Status::user_function("threw")));
  EXPECT_TRUE(is_restartable_failure(Status::timeout("slow")));
}

TEST(DecideRestart, NonRestartableFailureLeavesTheStrategyUntouched) {
  FixedDelayRestartBackoffTimeStrategy fixed({.attempts = 1, .delay_ms = 100});
  RestartDecision d = decide_restart(fixed, Status::invalid_argument("parallelism.default: 0 is out of range"), 0);
  EXPECT_FALSE(d.restart);
  EXPECT_NE(d.reason.find("cannot be fixed by a restart"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("parallelism.default"), std::string::npos) << d.reason;
  // The one allowed restart is still there for a restartable failure.
  d = decide_restart(fixed, Status::io_error("disk"), 10);
  EXPECT_TRUE(d.restart);
  EXPECT_TRUE(d.new_attempt);
  EXPECT_EQ(d.backoff_ms, 100);
  d = decide_restart(fixed, Status::io_error("disk again"), 20);
  EXPECT_FALSE(d.restart);
  EXPECT_NE(d.reason.find("fixed-delay(attempts=1"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("disk again"), std::string::npos) << d.reason;
}

// A restore-time Corruption of checkpoint files: the caller's check of the restore point fails, so the job fails
// at once (the strategy is not consulted: exponential-delay would otherwise restart forever).
TEST(DecideRestart, DamagedRestorePointFailsTheJobNamingTheFile) {
  ExponentialDelayRestartBackoffTimeStrategy exp({}, 1);
  const Status cause = Status::corruption("restoring checkpoint 3: file '/ck/job/shared/000009-ab.sst' does not match "
                                          "the checksum the checkpoint recorded (damaged)");
  const Status damaged = Status::corruption("/ck/job/shared/000009-ab.sst: state file checksum mismatch");
  RestartDecision d = decide_restart(exp, cause, 0, damaged);
  EXPECT_FALSE(d.restart);
  EXPECT_NE(d.reason.find("damaged, so no restart can succeed"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("/ck/job/shared/000009-ab.sst"), std::string::npos) << d.reason;
  EXPECT_EQ(exp.describe(), ExponentialDelayRestartBackoffTimeStrategy({}, 1).describe()) << "strategy untouched";
  // The same Corruption with an intact restore point (e.g. a bad network buffer) is restarted as before.
  d = decide_restart(exp, Status::corruption("channel 2: buffer does not decode"), 10, Status::ok());
  EXPECT_TRUE(d.restart);
  EXPECT_TRUE(d.new_attempt);
  // A missing file is the same case.
  d = decide_restart(exp, Status::not_found("x"), 20'000,
                     Status::not_found("/ck/job/chk-3/MANIFEST-000005: does not exist"));
  EXPECT_FALSE(d.restart);
  EXPECT_NE(d.reason.find("MANIFEST-000005"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("is missing a file, so no restart can succeed"), std::string::npos) << d.reason;
}

// The job's error has the restore point's code when the restore point rules out the restart, whatever failed
// the task; otherwise the cause's.
TEST(DecideRestart, TheJobFailsWithTheCodeOfAnUnusableRestorePoint) {
  FixedDelayRestartBackoffTimeStrategy fixed({.attempts = 3, .delay_ms = 0});
  const Status cause = Status::internal("task 1/2: injected failure");
  RestartDecision d =
      decide_restart(fixed, cause, 0, Status::not_found("/ck/job/chk-3/keyed-ab: state file is missing"));
  EXPECT_EQ(d.unusable_restore_point.code(), StatusCode::kNotFound);
  Status failed = job_failure(d, cause);
  EXPECT_EQ(failed.code(), StatusCode::kNotFound) << failed.to_string();
  EXPECT_NE(failed.message().find("keyed-ab: state file is missing"), std::string::npos) << failed.to_string();
  EXPECT_NE(failed.message().find("injected failure"), std::string::npos) << "the task's failure is still named";

  d = decide_restart(fixed, cause, 0, Status::corruption("/ck/job/chk-3/keyed-ab: state file is damaged"));
  EXPECT_EQ(job_failure(d, cause).code(), StatusCode::kCorruption);

  FixedDelayRestartBackoffTimeStrategy once({.attempts = 0, .delay_ms = 0});
  d = decide_restart(once, cause, 0, Status::ok());
  EXPECT_FALSE(d.restart);
  EXPECT_TRUE(d.unusable_restore_point.is_ok());
  EXPECT_EQ(job_failure(d, cause).code(), StatusCode::kInternal);
}

TEST(DecideRestart, NoneNeverRestarts) {
  NoRestartBackoffTimeStrategy none;
  RestartDecision d = decide_restart(none, Status::user_function("map threw"), 0);
  EXPECT_FALSE(d.restart);
  EXPECT_NE(d.reason.find("none"), std::string::npos) << d.reason;
}

}  // namespace
}  // namespace sluice
