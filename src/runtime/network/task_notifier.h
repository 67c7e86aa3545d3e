// TaskNotifier: how a task thread sleeps until something it waits for happens (input arrived, a channel
// finished, output space freed up, a mailbox message came).
//
// One per task thread; any thread may notify(), only the owning thread calls wait(). A notification that
// arrives while nobody waits is kept (a pending flag) and consumed by the next wait(), so a wake-up is never
// lost: the owner's loop is "poll everything; if nothing to do, wait()". Notifications coalesce: several
// notify() calls before one wait() wake it once. notify() costs one atomic exchange when a notification is
// already pending, and a mutex + condition-variable signal otherwise.
//
// Lifetime: must outlive every ResultPartition / InputGate / channel it was handed to.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace sluice::runtime {

class TaskNotifier {
 public:
  TaskNotifier() = default;
  TaskNotifier(const TaskNotifier&) = delete;
  TaskNotifier& operator=(const TaskNotifier&) = delete;

  // Wakes the owner's current or next wait(). Any thread.
  void notify();

  // Blocks the owner until notified or `max` elapsed; returns at once if a notification is pending.
  // Consumes the pending notification. Returns true if woken by a notification, false on timeout.
  // Owner thread only.
  bool wait(std::chrono::nanoseconds max);

 private:
  std::atomic<bool> pending_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool waiting_ = false;  // guarded by mu_
};

}  // namespace sluice::runtime
