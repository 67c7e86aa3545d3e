// JobSignalScope (api/job_signals.h): what SIGINT / SIGTERM do while a job runs. raise() runs the handler before it
// returns, so two raised signals are two deliveries (two kill(1)s in a row may merge into one pending signal).
#include "api/job_signals.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <thread>

namespace sluice::api {
namespace {

using namespace std::chrono_literals;

// Waits up to 10 s for `done`.
bool eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

TEST(JobSignalScope, TheFirstSignalCancelsTheJobAndTheProcessGoesOn) {
  std::atomic<int> cancels{0};
  JobSignalScope scope;
  scope.set_cancel([&] { ++cancels; });
  ASSERT_EQ(std::raise(SIGTERM), 0);
  ASSERT_TRUE(eventually([&] { return cancels.load() == 1; }));
  EXPECT_EQ(scope.received(), SIGTERM);
}

TEST(JobSignalScope, ASignalBeforeTheJobIsSubmittedCancelsItOnceItIs) {
  std::atomic<int> cancels{0};
  JobSignalScope scope;
  ASSERT_EQ(std::raise(SIGINT), 0);
  ASSERT_TRUE(eventually([&] { return scope.received() == SIGINT; }));
  EXPECT_EQ(cancels.load(), 0);
  scope.set_cancel([&] { ++cancels; });
  EXPECT_EQ(cancels.load(), 1);
}

TEST(JobSignalScopeDeathTest, ASecondSignalExitsAtOnceWith128PlusTheSignal) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        JobSignalScope scope;
        scope.set_cancel([] {});  // a cancel that never ends the job
        std::raise(SIGTERM);
        std::this_thread::sleep_for(100ms);
        std::raise(SIGTERM);
        std::this_thread::sleep_for(10s);
        std::_Exit(0);
      },
      testing::ExitedWithCode(143), "");
}

TEST(JobSignalScopeDeathTest, ASignalAfterTheJobEndedExitsAtOnce) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        JobSignalScope scope;
        scope.set_cancel([] {});
        scope.set_cancel({});  // the job ended; the scope is still there
        std::raise(SIGINT);
        std::this_thread::sleep_for(10s);
        std::_Exit(0);
      },
      testing::ExitedWithCode(130), "");
}

std::atomic<int> previous_handler_calls{0};
void previous_handler(int) { ++previous_handler_calls; }

TEST(JobSignalScope, TheLastScopePutsBackWhatWasThereBefore) {
  struct sigaction mine = {};
  mine.sa_handler = previous_handler;
  sigemptyset(&mine.sa_mask);
  struct sigaction before = {};
  ASSERT_EQ(::sigaction(SIGTERM, &mine, &before), 0);
  {
    JobSignalScope outer;
    {
      JobSignalScope inner;  // overlapping scopes: two jobs in one process
    }
    struct sigaction during = {};
    ASSERT_EQ(::sigaction(SIGTERM, nullptr, &during), 0);
    EXPECT_NE(during.sa_handler, previous_handler) << "the first scope's handler went with the inner scope";
  }
  struct sigaction after = {};
  ASSERT_EQ(::sigaction(SIGTERM, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, previous_handler);
  ASSERT_EQ(std::raise(SIGTERM), 0);
  EXPECT_EQ(previous_handler_calls.load(), 1);
  ASSERT_EQ(::sigaction(SIGTERM, &before, nullptr), 0);
}

TEST(JobSignalScope, OneSignalCancelsEveryJobOfTheProcess) {
  std::atomic<int> cancels{0};
  JobSignalScope a;
  JobSignalScope b;
  a.set_cancel([&] { ++cancels; });
  b.set_cancel([&] { ++cancels; });
  ASSERT_EQ(std::raise(SIGTERM), 0);
  ASSERT_TRUE(eventually([&] { return cancels.load() == 2; }));
  EXPECT_EQ(a.received(), SIGTERM);
  EXPECT_EQ(b.received(), SIGTERM);
}

}  // namespace
}  // namespace sluice::api
