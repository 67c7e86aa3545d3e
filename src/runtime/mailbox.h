// Mailbox: actions other threads ask a task thread to run (Flink's TaskMailbox). Split assignments from the
// source coordinator arrive as mails now; checkpoint triggers and timers will too. The task thread runs mails
// between records, so operator code and state are never touched by two threads and need no locks.
//
// Thread-safety: put() from any thread; drain() only on the owning task thread. has_mail() is a relaxed
// atomic read, cheap enough to check between records.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <mutex>
#include <utility>

#include "runtime/network/task_notifier.h"

namespace sluice::runtime {

class Mailbox {
 public:
  explicit Mailbox(TaskNotifier* notifier) : notifier_(notifier) {}

  void put(std::function<void()> mail) {
    {
      std::lock_guard lock(mu_);
      mails_.push_back(std::move(mail));
      has_mail_.store(true, std::memory_order_release);
    }
    notifier_->notify();
  }
  bool has_mail() const { return has_mail_.load(std::memory_order_relaxed); }
  // Runs every mail queued so far (mails put while running wait for the next drain).
  void drain() {
    std::deque<std::function<void()>> batch;
    {
      std::lock_guard lock(mu_);
      batch.swap(mails_);
      has_mail_.store(false, std::memory_order_relaxed);
    }
    for (auto& m : batch) m();
  }

 private:
  TaskNotifier* notifier_;
  std::mutex mu_;
  std::deque<std::function<void()>> mails_;
  std::atomic<bool> has_mail_{false};
};

}  // namespace sluice::runtime
