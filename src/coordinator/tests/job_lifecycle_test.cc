// JobLifecycle: Flink's job status transitions, checked exhaustively, and the result a terminal state records.
#include "coordinator/job_lifecycle.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <thread>

namespace sluice::coordinator {
namespace {

using S = JobStatus;
constexpr S kAll[] = {S::kCreated, S::kRunning,    S::kRestarting, S::kFailing,
                      S::kFailed,  S::kCancelling, S::kCanceled,   S::kFinished};

// The transitions of the documented state machine (job_lifecycle.h), written out independently of allowed().
const std::set<std::pair<S, S>> kTransitions = {
    {S::kCreated, S::kRunning},       {S::kRunning, S::kRestarting},    {S::kRunning, S::kFailing},
    {S::kRunning, S::kCancelling},    {S::kRunning, S::kFinished},      {S::kRestarting, S::kRunning},
    {S::kRestarting, S::kFailing},    {S::kRestarting, S::kCancelling}, {S::kFailing, S::kFailed},
    {S::kCancelling, S::kCanceled},
};

// A lifecycle moved to `target` along legal transitions.
std::unique_ptr<JobLifecycle> at(S target, std::shared_ptr<ManualClock> clock = std::make_shared<ManualClock>()) {
  auto l = std::make_unique<JobLifecycle>(JobId(1, 2), "job", clock);
  const std::map<S, std::vector<S>> path = {
      {S::kCreated, {}},
      {S::kRunning, {S::kRunning}},
      {S::kRestarting, {S::kRunning, S::kRestarting}},
      {S::kFailing, {S::kRunning, S::kFailing}},
      {S::kCancelling, {S::kRunning, S::kCancelling}},
  };
  if (is_globally_terminal(target)) {
    EXPECT_TRUE(l->start().is_ok());
    EXPECT_TRUE(l->terminate(target, Status::ok()).is_ok());
    return l;
  }
  for (S s : path.at(target)) {
    const Status moved = l->status() == S::kCreated ? l->start() : l->transition(s);
    EXPECT_TRUE(moved.is_ok()) << moved.to_string();
  }
  EXPECT_EQ(l->status(), target);
  return l;
}

TEST(JobLifecycle, AllowsExactlyFlinksTransitions) {
  for (S from : kAll) {
    for (S to : kAll) {
      EXPECT_EQ(JobLifecycle::allowed(from, to), kTransitions.count({from, to}) == 1)
          << job_status_name(from) << " -> " << job_status_name(to);
    }
  }
}

TEST(JobLifecycle, ARefusedTransitionNamesBothStatesAndChangesNothing) {
  for (S from : kAll) {
    for (S to : kAll) {
      if (is_globally_terminal(to) || kTransitions.count({from, to})) continue;
      SCOPED_TRACE(std::string(job_status_name(from)) + " -> " + job_status_name(to));
      auto l = at(from);
      Status s = to == S::kRunning && from == S::kCreated ? l->start() : l->transition(to);
      EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
      EXPECT_NE(s.message().find(std::string("from ") + job_status_name(from) + " to " + job_status_name(to)),
                std::string::npos)
          << s.to_string();
      EXPECT_EQ(l->status(), from);
    }
  }
}

TEST(JobLifecycle, TerminalStatesAreReachedOnlyThroughTerminate) {
  auto l = at(S::kRunning);
  EXPECT_EQ(l->transition(S::kFinished).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(l->terminate(S::kRestarting, Status::ok()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(l->status(), S::kRunning);
}

TEST(JobLifecycle, TerminatePassesThroughFailingOrCancellingAndRecordsTheResult) {
  struct Case {
    S from, terminal;
  };
  for (Case c : {Case{S::kRunning, S::kFinished}, Case{S::kRunning, S::kFailed}, Case{S::kRunning, S::kCanceled},
                 Case{S::kRestarting, S::kFailed}, Case{S::kRestarting, S::kCanceled}, Case{S::kFailing, S::kFailed},
                 Case{S::kCancelling, S::kCanceled}}) {
    SCOPED_TRACE(std::string(job_status_name(c.from)) + " -> " + job_status_name(c.terminal));
    auto clock = std::make_shared<ManualClock>();
    auto l = at(c.from, clock);
    clock->advance_ms(1500);
    const Status error = c.terminal == S::kFailed ? Status::user_function("map threw") : Status::ok();
    ASSERT_TRUE(l->terminate(c.terminal, error).is_ok());
    EXPECT_EQ(l->status(), c.terminal);
    JobExecutionResult r = l->wait();
    EXPECT_EQ(r.status, c.terminal);
    EXPECT_EQ(r.job_id, JobId(1, 2));
    EXPECT_EQ(r.job_name, "job");
    EXPECT_EQ(r.runtime_ms, 1500);
    EXPECT_EQ(r.error.to_string(), error.to_string());
  }
}

TEST(JobLifecycle, AnIllegalEndIsReportedButStillEndsTheRunSoNoWaiterHangs) {
  auto l = at(S::kRestarting);
  Status s = l->terminate(S::kFinished, Status::ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("from RESTARTING to FINISHED"), std::string::npos) << s.to_string();
  EXPECT_EQ(l->status(), S::kFinished);
  EXPECT_EQ(l->wait().status, S::kFinished);
}

TEST(JobLifecycle, ASecondEndIsRefusedAndKeepsTheFirstResult) {
  auto l = at(S::kRunning);
  ASSERT_TRUE(l->terminate(S::kFailed, Status::internal("first")).is_ok());
  Status again = l->terminate(S::kCanceled, Status::ok());
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.message().find("is FAILED already"), std::string::npos) << again.to_string();
  EXPECT_EQ(l->status(), S::kFailed);
  EXPECT_EQ(l->wait().error.message(), "first");
}

TEST(JobLifecycle, WaitersWakeWhenTheRunEnds) {
  auto l = at(S::kRunning);
  EXPECT_FALSE(l->wait_terminal_for(std::chrono::milliseconds(1)));
  JobExecutionResult seen;
  std::thread waiter([&] { seen = l->wait(); });
  std::thread poller([&] {
    while (!l->wait_terminal_for(std::chrono::milliseconds(5))) {
    }
  });
  ASSERT_TRUE(l->terminate(S::kCanceled, Status::ok()).is_ok());
  waiter.join();
  poller.join();
  EXPECT_EQ(seen.status, S::kCanceled);
  EXPECT_TRUE(l->wait_terminal_for(std::chrono::milliseconds(0)));
}

}  // namespace
}  // namespace sluice::coordinator
