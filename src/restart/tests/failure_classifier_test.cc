#include "restart/failure_classifier.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "core/failure_markers.h"
#include "fs/errno_status.h"
#include "restart/exponential_delay_restart_strategy.h"
#include "restart/fixed_delay_restart_strategy.h"
#include "restart/restart_strategy.h"

namespace sluice {
namespace {

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST(FailureClassifier, InvalidArgumentIsNonRecoverable) {
  EXPECT_EQ(classify_failure(Status::invalid_argument("parallelism.default: 0 is out of range")),
            FailureClass::kNonRecoverable);
}

TEST(FailureClassifier, ACommittableWhoseDataIsGoneIsDataMissing) {
  const Status gone = committable_data_gone("cannot commit '/out/part-ab-0-3-0': neither its pending file "
                                            "'/out/.part-ab-0-3-0.pending' nor the file exists");
  EXPECT_EQ(gone.code(), StatusCode::kNotFound);
  EXPECT_EQ(classify_failure(gone), FailureClass::kDataMissing);
  // Context in front, and the text of a Status passed through an exception (the code lost), keep the class.
  EXPECT_EQ(classify_failure(gone.with_context("committing part file '/out/part-ab-0-3-0'")),
            FailureClass::kDataMissing);
  EXPECT_EQ(classify_failure(Status::user_function("operator 'sink': file sink: " + gone.to_string())),
            FailureClass::kDataMissing);
  // A plain NotFound is recoverable: a restart may find the file (or the restore point check catches it).
  EXPECT_EQ(classify_failure(Status::not_found("cannot open file '/in/a.csv'")), FailureClass::kRecoverable);
}

TEST(FailureClassifier, PathsTheFilesystemRefusesAreEnvironmentErrors) {
  for (int err : {EACCES, EPERM, EROFS, ENOTDIR}) {
    const Status s = fs::errno_status("cannot create directory", "/out/part", err);
    SCOPED_TRACE(s.to_string());
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
    EXPECT_TRUE(contains(s.message(), fs::errno_text(err))) << "the errno text is kept";
    EXPECT_TRUE(contains(s.message(), "'/out/part'"));
    EXPECT_EQ(classify_failure(s), FailureClass::kEnvironment);
    EXPECT_FALSE(is_restartable_failure(s));
  }
  // The text alone (e.g. an injected failure, or a failure of a remote store) is not the mark.
  EXPECT_EQ(classify_failure(Status::io_error("cannot create directory '/ck/chk-3': Permission denied")),
            FailureClass::kRecoverable);
}

TEST(FailureClassifier, NetworkIoAndEverythingElseStayRecoverable) {
  for (int err : {EIO, ENOSPC, ECONNREFUSED, ETIMEDOUT, EAGAIN}) {
    const Status s = fs::errno_status("cannot write", "/out/part", err);
    EXPECT_EQ(s.code(), StatusCode::kIOError) << s.to_string();
    EXPECT_EQ(classify_failure(s), FailureClass::kRecoverable) << s.to_string();
  }
  EXPECT_EQ(fs::errno_status("cannot open file", "/in/a", ENOENT).code(), StatusCode::kNotFound);
  for (const Status& s : {Status::io_error("s3: connection reset"), Status::timeout("slow"), Status::internal("bug"),
                          Status::corruption("bad bytes"), Status::user_function("threw"),
                          Status::failed_precondition("not running"), Status::cancelled("stop")}) {
    EXPECT_EQ(classify_failure(s), FailureClass::kRecoverable) << s.to_string();
    EXPECT_TRUE(is_restartable_failure(s)) << s.to_string();
  }
}

TEST(FailureClassifier, ClassNamesAndRetryHint) {
  EXPECT_EQ(failure_class_name(FailureClass::kNonRecoverable), "NON_RECOVERABLE_ERROR");
  EXPECT_EQ(failure_class_name(FailureClass::kDataMissing), "DATA_MISSING_ERROR");
  EXPECT_EQ(failure_class_name(FailureClass::kEnvironment), "ENVIRONMENT_ERROR");
  EXPECT_EQ(failure_class_name(FailureClass::kRecoverable), "RECOVERABLE_ERROR");
  EXPECT_FALSE(restart_can_help(FailureClass::kNonRecoverable));
  EXPECT_FALSE(restart_can_help(FailureClass::kDataMissing));
  EXPECT_FALSE(restart_can_help(FailureClass::kEnvironment));
  EXPECT_TRUE(restart_can_help(FailureClass::kRecoverable));
}

TEST(NormalizedFailure, NumbersAndHexIdsAreVolatile) {
  EXPECT_EQ(normalized_failure(Status::io_error("checkpoint 12 of job 3fa85f6457174562 failed at 1733380000123")),
            normalized_failure(Status::io_error("checkpoint 13 of job 9c0d2e7a11b34f55 failed at 1733380009999")));
  EXPECT_EQ(normalized_failure(Status::io_error("task 1/2 attempt 3: buffer at 0x7ffd1234")),
            "IOError: task #/# attempt #: buffer at #");
  EXPECT_EQ(normalized_failure(Status::io_error("part-ab12cd34ef-0-3")), "IOError: part-#-#-#");
  // Words stay, so are different failures, and so is a different code.
  EXPECT_NE(normalized_failure(Status::io_error("cannot reach host-a")),
            normalized_failure(Status::io_error("cannot reach host-b")));
  EXPECT_NE(normalized_failure(Status::io_error("disk")), normalized_failure(Status::timeout("disk")));
  EXPECT_EQ(normalized_failure(Status::io_error("deadbeef faced")), "IOError: deadbeef faced")
      << "hex-only words without a digit are words";
}

TEST(IdenticalFailureCounter, CountsIdenticalFailuresUntilProgressOrADifferentFailure) {
  IdenticalFailureCounter c(3);
  EXPECT_EQ(c.record(Status::user_function("map threw at record 17"), -1), 1);
  EXPECT_EQ(c.record(Status::user_function("map threw at record 18"), -1), 2);
  EXPECT_FALSE(c.limit_reached());
  EXPECT_EQ(c.record(Status::user_function("map threw at record 19"), -1), 3);
  EXPECT_TRUE(c.limit_reached());
  // A different failure starts over.
  EXPECT_EQ(c.record(Status::io_error("disk"), -1), 1);
  EXPECT_EQ(c.record(Status::io_error("disk"), -1), 2);
  // A checkpoint completed since the previous failure starts over.
  EXPECT_EQ(c.record(Status::io_error("disk"), 4), 1);
  EXPECT_EQ(c.record(Status::io_error("disk"), 4), 2);
  EXPECT_FALSE(c.limit_reached());

  IdenticalFailureCounter off(0);
  for (int i = 0; i < 100; ++i) off.record(Status::io_error("disk"), -1);
  EXPECT_FALSE(off.limit_reached());
}

TEST(DecideRestart, ADataMissingCommitFailsAtOnceUnderExponentialDelay) {
  ExponentialDelayRestartBackoffTimeStrategy exp({}, 1);
  const Status cause = Status::user_function(
      "operator 'sink' (subtask 1/1): file sink: " +
      committable_data_gone("cannot commit '/out2/part-ab-0-1-0': neither its pending file "
                            "'/out2/.part-ab-0-1-0.pending' nor the file exists")
          .to_string());
  RestartDecision d = decide_restart(exp, cause, 0);
  EXPECT_FALSE(d.restart);
  EXPECT_TRUE(contains(d.reason, "DATA_MISSING_ERROR")) << d.reason;
  EXPECT_TRUE(contains(d.reason, "cannot commit '/out2/part-ab-0-1-0'")) << d.reason;
  EXPECT_EQ(exp.describe(), ExponentialDelayRestartBackoffTimeStrategy({}, 1).describe()) << "strategy untouched";
  const Status failed = job_failure(d, cause);
  EXPECT_TRUE(contains(failed.to_string(), "neither its pending file")) << failed.to_string();
  // Named once: the reason already carries the cause.
  const std::string text = failed.to_string();
  EXPECT_EQ(text.find("neither its pending file"), text.rfind("neither its pending file")) << text;
}

TEST(DecideRestart, ARefusedPathFailsAtOnceNamingTheClass) {
  FixedDelayRestartBackoffTimeStrategy fixed({.attempts = 5, .delay_ms = 10});
  const Status cause = fs::errno_status("cannot create", "/ro/out/.part-0.inprogress", EACCES);
  RestartDecision d = decide_restart(fixed, cause, 0);
  EXPECT_FALSE(d.restart);
  EXPECT_TRUE(contains(d.reason, "ENVIRONMENT_ERROR")) << d.reason;
  EXPECT_TRUE(contains(d.reason, "/ro/out/.part-0.inprogress")) << d.reason;
  EXPECT_TRUE(contains(d.reason, "Permission denied")) << d.reason;
  // A transient I/O error still uses the strategy.
  EXPECT_TRUE(decide_restart(fixed, fs::errno_status("cannot write", "/out/.part-0.inprogress", ENOSPC), 10).restart);
}

TEST(DecideRestart, IdenticalFailuresStopTheJobAtTheLimitNamingTheFailure) {
  ExponentialDelayRestartBackoffTimeStrategy exp({}, 1);
  IdenticalFailureCounter identical(3);
  int64_t now = 0;
  for (int i = 1; i <= 2; ++i) {
    RestartDecision d = decide_restart(exp, Status::user_function("map: bad record " + std::to_string(i)), now,
                                       Status::ok(), &identical, 7);
    EXPECT_TRUE(d.restart) << "failure " << i;
    now += 100'000;
  }
  RestartDecision d =
      decide_restart(exp, Status::user_function("map: bad record 3"), now, Status::ok(), &identical, 7);
  EXPECT_FALSE(d.restart);
  EXPECT_TRUE(contains(d.reason, "3 times in a row")) << d.reason;
  EXPECT_TRUE(contains(d.reason, "restart-strategy.max-identical-failures=3")) << d.reason;
  EXPECT_TRUE(contains(d.reason, "map: bad record 3")) << d.reason;

  // Failures that change each time, or identical ones with a checkpoint completed between, keep restarting.
  IdenticalFailureCounter changing(3);
  for (int i = 0; i < 10; ++i) {
    const std::string word = i % 2 == 0 ? "alpha" : "beta";
    now += 100'000;
    EXPECT_TRUE(decide_restart(exp, Status::user_function("map: " + word), now, Status::ok(), &changing, 7).restart)
        << "failure " << i;
    now += 100'000;
    EXPECT_TRUE(decide_restart(exp, Status::io_error("disk"), now, Status::ok(), &changing, 10 + i).restart)
        << "failure " << i;
  }
}

}  // namespace
}  // namespace sluice
