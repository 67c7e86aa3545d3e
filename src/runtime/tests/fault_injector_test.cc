#include "runtime/fault_injection.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

#include <atomic>
#include <thread>
#include <vector>

namespace sluice::runtime {
namespace {

constexpr uint32_t bit(FailurePoint p) { return failure_point_bit(p); }

// Two vertices of parallelism 2: a source chain, and a keyed operator chained with a sink.
FaultInjector two_vertex_job() {
  uint32_t common = bit(FailurePoint::kTask) | bit(FailurePoint::kBetweenSyncAndAsyncSnapshot);
  uint32_t source = common | bit(FailurePoint::kSource);
  uint32_t keyed_sink = common | bit(FailurePoint::kKeyedOperator) | bit(FailurePoint::kSink) |
                        bit(FailurePoint::kBetweenCompletionAndCommit);
  return FaultInjector({{0, 0, source}, {0, 1, source}, {1, 0, keyed_sink}, {1, 1, keyed_sink}});
}

uint32_t mask(const FaultInjector& f, int32_t v, int32_t s) {
  return f.armed_points(v, s)->load(std::memory_order_relaxed);
}

TEST(FaultInjector, NamesRoundTrip) {
  for (int i = 0; i < kNumFailurePoints; ++i) {
    auto p = static_cast<FailurePoint>(i);
    EXPECT_EQ(parse_failure_point(failure_point_name(p)), p);
  }
  EXPECT_EQ(std::string(failure_point_name(FailurePoint::kBetweenSyncAndAsyncSnapshot)), "between-sync-and-async-snapshot");
  EXPECT_FALSE(parse_failure_point("nowhere").has_value());
}

TEST(FaultInjector, OnlyCheckpointPointsAreArmedFromACheckpoint) {
  auto f = two_vertex_job();
  for (FailurePoint p : {FailurePoint::kTask, FailurePoint::kSource, FailurePoint::kKeyedOperator}) {
    Status s = f.arm(p, -1, -1, "x", 3);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << failure_point_name(p);
    EXPECT_NE(s.message().find("not reached for a checkpoint"), std::string::npos) << s.to_string();
  }
  EXPECT_TRUE(f.arm(FailurePoint::kSink, -1, -1, "x", 3).is_ok());
  EXPECT_TRUE(f.arm(FailurePoint::kTask, -1, -1, "x", 0).is_ok());
}

TEST(FaultInjector, ArmSetsTheBitOnlyOnTasksThatMatchAndCanReachThePoint) {
  auto f = two_vertex_job();
  EXPECT_EQ(mask(f, 0, 0), 0u);
  ASSERT_TRUE(f.arm(FailurePoint::kSink, -1, 1, "x").is_ok());
  EXPECT_EQ(mask(f, 1, 1), bit(FailurePoint::kSink));
  EXPECT_EQ(mask(f, 1, 0), 0u);  // other subtask
  EXPECT_EQ(mask(f, 0, 1), 0u);  // no sink in the source chain
  ASSERT_TRUE(f.arm(FailurePoint::kBetweenSyncAndAsyncSnapshot, -1, -1, "y").is_ok());
  EXPECT_EQ(mask(f, 0, 0), bit(FailurePoint::kBetweenSyncAndAsyncSnapshot));
  EXPECT_EQ(mask(f, 1, 1), bit(FailurePoint::kSink) | bit(FailurePoint::kBetweenSyncAndAsyncSnapshot));
  EXPECT_EQ(f.num_armed(), 2);
  EXPECT_EQ(f.armed_points(7, 0), nullptr);
}

TEST(FaultInjector, AFailureArmedFromACheckpointIgnoresEarlierCheckpointsAndPassesWithoutOne) {
  auto f = two_vertex_job();
  ASSERT_TRUE(f.arm(FailurePoint::kBetweenCompletionAndCommit, 1, -1, "after 3", 3).is_ok());
  EXPECT_EQ(mask(f, 1, 0), bit(FailurePoint::kBetweenCompletionAndCommit));
  // Checkpoint 2's notification, still queued when the driver armed: not taken.
  EXPECT_FALSE(f.claim(FailurePoint::kBetweenCompletionAndCommit, 1, 0, 0, 2).has_value());
  EXPECT_FALSE(f.claim(FailurePoint::kBetweenCompletionAndCommit, 1, 0, 0, -1).has_value());
  EXPECT_EQ(f.num_armed(), 1);
  auto fired = f.claim(FailurePoint::kBetweenCompletionAndCommit, 1, 1, 0, 3);
  ASSERT_TRUE(fired.has_value());
  EXPECT_NE(fired->find("after 3"), std::string::npos);
  EXPECT_EQ(f.num_armed(), 0);
  ASSERT_EQ(f.injected().size(), 1u);
  EXPECT_EQ(f.injected()[0].checkpoint_id, 3);
}

TEST(FaultInjector, ArmRejectsUnknownTasksAndUnreachablePoints) {
  auto f = two_vertex_job();
  Status no_task = f.arm(FailurePoint::kTask, 5, 0, "x");
  EXPECT_EQ(no_task.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_task.message().find("no such task"), std::string::npos) << no_task.to_string();
  Status no_sink = f.arm(FailurePoint::kBetweenCompletionAndCommit, 0, -1, "x");
  EXPECT_EQ(no_sink.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_sink.message().find("sink"), std::string::npos) << no_sink.to_string();
  EXPECT_EQ(f.arm(FailurePoint::kSource, 1, 0, "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(f.num_armed(), 0);
}

TEST(FaultInjector, ClaimTakesTheOldestMatchingFailureOnceAndRecordsIt) {
  auto f = two_vertex_job();
  ASSERT_TRUE(f.arm(FailurePoint::kBetweenCompletionAndCommit, 1, -1, "first").is_ok());
  ASSERT_TRUE(f.arm(FailurePoint::kBetweenCompletionAndCommit, 1, -1, "second").is_ok());
  EXPECT_FALSE(f.claim(FailurePoint::kSink, 1, 0, 0, 3).has_value());  // another point
  EXPECT_FALSE(f.claim(FailurePoint::kBetweenCompletionAndCommit, 0, 0, 0, 3).has_value());  // not matched
  auto m = f.claim(FailurePoint::kBetweenCompletionAndCommit, 1, 1, 2, 3);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(*m, "injected failure [between-completion-and-commit] first");
  EXPECT_EQ(mask(f, 1, 0), bit(FailurePoint::kBetweenCompletionAndCommit));  // "second" is still armed
  ASSERT_TRUE(f.claim(FailurePoint::kBetweenCompletionAndCommit, 1, 0, 2, 4).has_value());
  EXPECT_EQ(mask(f, 1, 0), 0u);
  EXPECT_EQ(mask(f, 1, 1), 0u);
  EXPECT_EQ(f.num_armed(), 0);
  auto fired = f.injected();
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0].point, FailurePoint::kBetweenCompletionAndCommit);
  EXPECT_EQ(fired[0].vertex, 1);
  EXPECT_EQ(fired[0].subtask, 1);
  EXPECT_EQ(fired[0].attempt, 2);
  EXPECT_EQ(fired[0].checkpoint_id, 3);
  EXPECT_EQ(fired[1].subtask, 0);
  EXPECT_EQ(fired[1].checkpoint_id, 4);
}

// Every task polls its mask as a task loop does; one failure armed for "any task" fires exactly once.
TEST(FaultInjector, ConcurrentClaimsFireAnArmedFailureExactlyOnce) {
  auto f = two_vertex_job();
  constexpr int kRounds = 200;
  std::atomic<int> fired{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> tasks;
  for (int32_t v = 0; v < 2; ++v) {
    for (int32_t s = 0; s < 2; ++s) {
      tasks.emplace_back([&, v, s] {
        const auto* armed = f.armed_points(v, s);
        while (!stop.load()) {
          if ((armed->load(std::memory_order_relaxed) & bit(FailurePoint::kTask)) == 0) {
            std::this_thread::yield();
            continue;
          }
          if (f.claim(FailurePoint::kTask, v, s, 0, -1)) fired.fetch_add(1);
        }
      });
    }
  }
  for (int i = 0; i < kRounds; ++i) {
    ASSERT_TRUE(f.arm(FailurePoint::kTask, -1, -1, "round " + std::to_string(i)).is_ok());
    while (f.num_armed() > 0) std::this_thread::yield();
  }
  stop.store(true);
  for (auto& t : tasks) t.join();
  EXPECT_EQ(fired.load(), kRounds);
  EXPECT_EQ(f.injected().size(), static_cast<size_t>(kRounds));
}

}  // namespace
}  // namespace sluice::runtime

namespace sluice::runtime {
namespace {

// A TaskManager's injector (InjectedFailureEffect::kKillProcess): an armed point kills the process that reaches it,
// after logging the failure; before that, passes of other points and earlier checkpoints leave it alive.
TEST(FaultInjectorDeathTest, AKillArmedInATaskManagerKillsTheProcessAtItsPointOnly) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        FaultInjector f({{0, 0, bit(FailurePoint::kBetweenCompletionAndCommit) | bit(FailurePoint::kRestore)}},
                        InjectedFailureEffect::kKillProcess);
        if (!f.arm(FailurePoint::kBetweenCompletionAndCommit, -1, -1, "TaskManager process killed", 4).is_ok()) {
          std::exit(3);
        }
        if (f.claim(FailurePoint::kRestore, 0, 0, 1, -1).has_value()) std::exit(4);
        if (f.claim(FailurePoint::kBetweenCompletionAndCommit, 0, 0, 1, 3).has_value()) std::exit(5);
        (void)f.claim(FailurePoint::kBetweenCompletionAndCommit, 0, 0, 1, 4);
        std::exit(6);  // not reached
      },
      ::testing::KilledBySignal(SIGKILL),
      "injected failure \\[between-completion-and-commit\\] TaskManager process killed \\(vertex 0, subtask 0, "
      "attempt 1, checkpoint 4\\)");
}

}  // namespace
}  // namespace sluice::runtime
