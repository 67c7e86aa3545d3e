#include "runtime/network/task_notifier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace sluice::runtime {
namespace {

using namespace std::chrono_literals;

TEST(TaskNotifier, ANotificationBeforeWaitIsKept) {
  TaskNotifier n;
  n.notify();
  n.notify();                   // coalesces with the first
  EXPECT_TRUE(n.wait(0ns));     // consumed here
  EXPECT_FALSE(n.wait(1ms));    // nothing pending: times out
}

TEST(TaskNotifier, WakesAWaitingThread) {
  TaskNotifier n;
  std::atomic<bool> woke{false};
  std::thread waiter([&] { woke = n.wait(std::chrono::hours(1)); });
  n.notify();
  waiter.join();  // would hang (ctest timeout) if the wake-up were lost
  EXPECT_TRUE(woke);
}

// Two threads pass a ball back and forth many times, each sleeping on its own notifier until the ball is
// on its side. A lost wake-up shows as a wait that runs into its (long) timeout.
TEST(TaskNotifier, PingPongStressLosesNoWakeUp) {
  constexpr int64_t kRounds = 20000;
  TaskNotifier notifier[2];
  std::atomic<int64_t> ball{0};  // even: side 0's turn, odd: side 1's
  std::atomic<int> timeouts{0};
  auto side = [&](int me) {
    for (int64_t round = 0; round < kRounds; ++round) {
      const int64_t mine = 2 * round + me;
      while (ball.load(std::memory_order_acquire) != mine) {
        if (!notifier[me].wait(20s) && ball.load() != mine) timeouts.fetch_add(1);
      }
      ball.store(mine + 1, std::memory_order_release);
      notifier[1 - me].notify();
    }
  };
  std::thread a(side, 0);
  std::thread b(side, 1);
  a.join();
  b.join();
  EXPECT_EQ(ball.load(), 2 * kRounds);
  EXPECT_EQ(timeouts.load(), 0);
}

}  // namespace
}  // namespace sluice::runtime
