// AsyncCalls (split enumerators' call_async): periodic work off the lock, continuations under it, failures logged
// without ending the schedule, one-shot calls, stop() ending the worker.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "sluice/source/async_calls.h"

namespace sluice {
namespace {

// Waits up to 20 s for `done`.
template <class F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(AsyncCalls, PeriodicWorkRunsOffTheLockAndItsContinuationUnderIt) {
  std::mutex lock;
  int guarded = 0;  // touched by continuations only, under `lock`
  std::atomic<int> work_runs{0};
  std::atomic<bool> lock_was_free{true};
  AsyncCalls calls(lock);
  calls.add(
      [&]() -> std::function<void()> {
        // Off the lock: nobody holds it while work runs.
        if (!lock.try_lock()) lock_was_free = false;
        else lock.unlock();
        ++work_runs;
        return [&] { ++guarded; };
      },
      0, 1);
  ASSERT_TRUE(eventually([&] { return work_runs.load() >= 5; }));
  calls.stop();
  std::lock_guard g(lock);
  EXPECT_GE(guarded, 4);
  EXPECT_TRUE(lock_was_free.load());
}

TEST(AsyncCalls, AFailingCallKeepsItsScheduleAndAOneShotCallRunsOnce) {
  std::mutex lock;
  std::atomic<int> failing{0};
  std::atomic<int> once{0};
  AsyncCalls calls(lock);
  calls.add([&]() -> std::function<void()> {
              ++failing;
              throw std::runtime_error("broker down");
            },
            0, 1);
  calls.add([&]() -> std::function<void()> {
              ++once;
              return {};
            },
            0, 0);
  ASSERT_TRUE(eventually([&] { return failing.load() >= 3; }));
  calls.stop();
  EXPECT_EQ(once.load(), 1);
  const int after_stop = failing.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(failing.load(), after_stop) << "a call ran after stop()";
}

}  // namespace
}  // namespace sluice
