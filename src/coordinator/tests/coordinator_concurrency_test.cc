// The coordinator under concurrent callers, with and without its timer thread. Meant to run under TSan and
// ASan (label `runtime`). No timing assertions: waits poll with a generous deadline and only fail on hangs.
#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <random>
#include <thread>

#include "fakes.h"

namespace sluice::coordinator {
namespace {

using checkpoint::SnapshotType;
using testing::Event;
using testing::Harness;
using K = Event::Kind;

// Polls `done` until it holds or 120 s pass (a hang, not a slow machine).
template <class F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Triggered ids, handed from the target to the task threads.
class TriggerQueue {
 public:
  void push(CheckpointId id) {
    std::lock_guard<std::mutex> lock(mu_);
    ids_.push_back(id);
  }
  std::vector<CheckpointId> since(size_t* seen) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<CheckpointId> out(ids_.begin() + static_cast<std::ptrdiff_t>(*seen), ids_.end());
    *seen = ids_.size();
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<CheckpointId> ids_;
};

void check_log(const std::vector<Event>& events, int64_t expected_completed) {
  std::set<int64_t> triggered, written, ended;
  int64_t last_trigger = 0, last_notified = 0;
  int64_t completed = 0;
  for (const Event& e : events) {
    switch (e.kind) {
      case K::kTrigger:
        EXPECT_GT(e.id, last_trigger);
        last_trigger = e.id;
        triggered.insert(e.id);
        break;
      case K::kWriteOk: written.insert(e.id); break;
      case K::kOnCompleted:
        EXPECT_TRUE(written.count(e.id)) << e.id;
        EXPECT_TRUE(ended.insert(e.id).second) << e.id;
        ++completed;
        break;
      case K::kNotifyComplete:
        EXPECT_TRUE(ended.count(e.id)) << e.id;
        EXPECT_GT(e.id, last_notified);
        last_notified = e.id;
        break;
      case K::kOnAborted: EXPECT_TRUE(ended.insert(e.id).second) << e.id; break;
      default: break;
    }
  }
  EXPECT_EQ(completed, expected_completed);
  EXPECT_EQ(ended, triggered);  // every trigger ended exactly once
}

// Task threads acknowledge concurrently while a trigger thread keeps up to 3 checkpoints in flight.
void many_acknowledgers(bool with_timer_thread) {
  CheckpointCoordinatorConfig c = testing::config_with(1000);
  c.max_concurrent = 3;
  Harness h(c, /*vertices=*/4, /*parallelism=*/4);
  TriggerQueue queue;
  h.target.set_on_trigger([&](CheckpointId id) { queue.push(id); });
  if (with_timer_thread) {
    h.coordinator->start();
    h.coordinator->stop_periodic_scheduling();  // thread only; triggers come from the trigger thread
  }
  constexpr int64_t kCheckpoints = 60;
  std::atomic<bool> stop{false};
  std::vector<std::thread> tasks;
  for (const TaskToAck& t : h.tasks) {
    tasks.emplace_back([&, t] {
      size_t seen = 0;
      while (!stop.load()) {
        for (CheckpointId id : queue.since(&seen)) {
          h.ack(id, t);
          h.ack(id, t);  // a duplicate is ignored
        }
        std::this_thread::yield();
      }
    });
  }
  std::thread reader([&] {
    while (!stop.load()) {
      CheckpointStatsSnapshot s = h.coordinator->stats();
      EXPECT_LE(s.num_in_progress, 3);
      std::this_thread::yield();
    }
  });
  int64_t triggered = 0;
  while (triggered < kCheckpoints) {
    if (h.coordinator->trigger_checkpoint(SnapshotType::kCheckpoint).is_ok()) {
      ++triggered;
    } else {
      std::this_thread::yield();
    }
  }
  EXPECT_TRUE(eventually([&] { return h.coordinator->num_pending() == 0 && h.log.count(K::kOnAborted) +
                                                                              h.log.count(K::kNotifyComplete) ==
                                                                          static_cast<size_t>(kCheckpoints); }));
  stop.store(true);
  for (std::thread& t : tasks) t.join();
  reader.join();
  h.coordinator->stop();
  // Concurrent checkpoints may subsume older ones; every one ends exactly once either way.
  const int64_t completed = static_cast<int64_t>(h.log.count(K::kOnCompleted));
  EXPECT_GT(completed, 0);
  check_log(h.log.events(), completed);
  EXPECT_EQ(h.log.count(K::kFailJob), 0u);
  EXPECT_EQ(h.target.violations(), 0);
  EXPECT_EQ(h.coordinator->stats().num_completed, completed);
}

TEST(CheckpointCoordinatorConcurrency, ManyAcknowledgersCallerRunsActions) { many_acknowledgers(false); }
TEST(CheckpointCoordinatorConcurrency, ManyAcknowledgersTimerThreadRunsActions) { many_acknowledgers(true); }

// The timer thread triggers periodic checkpoints as the (manual) clock moves and expires them on timeout.
TEST(CheckpointCoordinatorConcurrency, TimerThreadTriggersAndExpires) {
  CheckpointCoordinatorConfig c = testing::config_with(100);
  c.timeout = std::chrono::milliseconds(500);
  c.tolerable_failures = 100;
  Harness h(c);
  h.coordinator->start();
  h.clock->advance_ms(100);
  ASSERT_TRUE(eventually([&] { return h.log.count(K::kTrigger) == 1; }));
  h.ack_all(CheckpointId(1));
  ASSERT_TRUE(eventually([&] { return h.log.count(K::kNotifyComplete) == 1; }));
  h.clock->advance_ms(100);
  ASSERT_TRUE(eventually([&] { return h.log.count(K::kTrigger) == 2; }));
  h.clock->advance_ms(500);  // checkpoint 2 expires; 3 is due at once
  ASSERT_TRUE(eventually([&] { return h.log.count(K::kOnAborted) == 1 && h.log.count(K::kTrigger) == 3; }));
  h.coordinator->shutdown(Status::cancelled("done"));
  EXPECT_EQ(h.coordinator->num_pending(), 0);
  check_log(h.log.events(), 1);
}

// fail_job runs on the timer thread and the runtime stops the coordinator from inside it: no deadlock, and the
// thread is joined later.
TEST(CheckpointCoordinatorConcurrency, StopFromInsideFailJob) {
  Harness h(testing::config_with(100));
  std::atomic<bool> stopped{false};
  h.target.set_on_fail_job([&] {
    h.coordinator->stop();
    h.coordinator->abort_pending(CheckpointFailureReason::kJobFailover, Status::cancelled("failing over"));
    stopped.store(true);
  });
  h.coordinator->start();
  h.clock->advance_ms(100);
  ASSERT_TRUE(eventually([&] { return h.log.count(K::kTrigger) == 1; }));
  EXPECT_EQ(h.coordinator->decline(CheckpointId(1), JobVertexId(0), SubtaskIndex(0), Status::internal("no")), MessageOutcome::kAccepted);
  ASSERT_TRUE(eventually([&] { return stopped.load(); }));
  // The scheduler is stopped: no more checkpoints. start() again brings it back.
  h.clock->advance_ms(1000);
  h.coordinator->tick();
  EXPECT_EQ(h.log.count(K::kTrigger), 1u);
  h.coordinator->start();
  h.clock->advance_ms(100);
  ASSERT_TRUE(eventually([&] { return h.log.count(K::kTrigger) == 2; }));
  h.coordinator->stop();
}

// Random calls from several threads at once, timer thread running; afterwards every trigger ended exactly once.
TEST(CheckpointCoordinatorConcurrency, RandomConcurrentCalls) {
  for (bool with_timer_thread : {false, true}) {
    CheckpointCoordinatorConfig c = testing::config_with(10);
    c.timeout = std::chrono::milliseconds(40);
    c.max_concurrent = 2;
    c.tolerable_failures = 3;
    Harness h(c, 2, 3);
    if (with_timer_thread) h.coordinator->start();
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937_64 rng(static_cast<uint64_t>(t) * 7919 + (with_timer_thread ? 1 : 0));
        for (int i = 0; i < 1500; ++i) {
          const int roll = static_cast<int>(rng() % 100);
          const int64_t next = h.coordinator->next_checkpoint_id().value();
          const CheckpointId id(next - 1 - static_cast<int64_t>(rng() % 3));
          const TaskToAck& task = h.tasks[rng() % h.tasks.size()];
          if (roll < 5) {
            (void)h.coordinator->trigger_checkpoint(rng() % 10 == 0 ? SnapshotType::kSavepoint
                                                                    : SnapshotType::kCheckpoint);
          } else if (roll < 75) {
            h.ack(id, task);
          } else if (roll < 78) {
            h.coordinator->decline(id, JobVertexId(task.vertex), SubtaskIndex(task.subtask), Status::internal("random"));
          } else if (roll < 80) {
            h.storage->fail_next_writes(1);
          } else if (roll < 90) {
            h.clock->advance_ms(static_cast<int64_t>(rng() % 5));
            h.coordinator->tick();
          } else if (roll < 92) {
            (void)h.coordinator->stats();
          } else if (roll < 93) {
            h.coordinator->abort_pending(CheckpointFailureReason::kJobFailover, Status::cancelled("random"));
          } else {
            h.coordinator->start_periodic_scheduling();
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    h.coordinator->shutdown(Status::cancelled("end"));
    EXPECT_EQ(h.coordinator->num_pending(), 0);
    check_log(h.log.events(), static_cast<int64_t>(h.log.count(K::kOnCompleted)));
    EXPECT_EQ(h.target.violations(), 0);
    const CheckpointStatsSnapshot s = h.coordinator->stats();
    EXPECT_EQ(s.num_completed + s.num_failed, s.num_triggered);
    EXPECT_GT(s.num_triggered, 0);
  }
}

}  // namespace
}  // namespace sluice::coordinator
