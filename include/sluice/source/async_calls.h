// AsyncCalls: the periodic calls of a split enumerator (SplitEnumeratorContext::call_async, Flink's callAsync), run
// on one worker thread per source coordinator. Each call has two parts: `work`, run on the worker without any lock
// (it may block, e.g. list a topic's partitions), and the continuation it returns, run under the lock the caller
// gives (the enumerator's), so it may change the enumerator and assign splits.
//
// Timing: steady clock; a call runs first after initial_delay_ms, then every period_ms after the end of the previous
// run (0: once). Exceptions from either part are logged (core/log.h) and the call keeps its schedule: a periodic lookup
// that fails once tries again next period. Thread-safety: add() may be called from any thread, also with the
// enumerator's lock held; stop() (also from the destructor) waits for a running call to finish and must be called
// without that lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "sluice/core/log.h"

namespace sluice {

class AsyncCalls {
 public:
  using Work = std::function<std::function<void()>()>;
  // `lock` guards what continuations touch (the enumerator).
  explicit AsyncCalls(std::mutex& lock) : lock_(lock) {}
  ~AsyncCalls() { stop(); }
  AsyncCalls(const AsyncCalls&) = delete;
  AsyncCalls& operator=(const AsyncCalls&) = delete;

  void add(Work work, int64_t initial_delay_ms, int64_t period_ms) {
    std::lock_guard guard(mu_);
    if (stopping_) return;
    calls_.push_back(Call{std::move(work), Clock::now() + std::chrono::milliseconds(initial_delay_ms), period_ms});
    if (!worker_.joinable()) worker_ = std::thread([this] { run(); });
    cv_.notify_all();
  }
  void stop() {
    {
      std::lock_guard guard(mu_);
      stopping_ = true;
      cv_.notify_all();
    }
    if (worker_.joinable()) worker_.join();
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Call {
    Work work;
    Clock::time_point due;
    int64_t period_ms;
  };

  void run() {
    std::unique_lock guard(mu_);
    while (!stopping_) {
      auto next = calls_.end();
      for (auto it = calls_.begin(); it != calls_.end(); ++it) {
        if (next == calls_.end() || it->due < next->due) next = it;
      }
      if (next == calls_.end()) {
        cv_.wait(guard, [&] { return stopping_ || !calls_.empty(); });
        continue;
      }
      if (Clock::now() < next->due) {
        cv_.wait_until(guard, next->due);
        continue;  // woken early (a new call, stop) or due: look again
      }
      Work work = next->work;
      guard.unlock();
      std::function<void()> then;
      try {
        then = work();
      } catch (const std::exception& e) {
        log::error(std::string("split enumerator: an asynchronous call failed: ") + e.what());
      }
      if (then) {
        std::lock_guard enumerator(lock_);
        try {
          then();
        } catch (const std::exception& e) {
          log::error(std::string("split enumerator: handling an asynchronous call failed: ") + e.what());
        }
      }
      guard.lock();
      if (next->period_ms > 0) {
        next->due = Clock::now() + std::chrono::milliseconds(next->period_ms);
      } else {
        calls_.erase(next);
      }
    }
  }

  std::mutex& lock_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::list<Call> calls_;  // a list: `next` stays valid while the worker runs a call and add() appends
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace sluice
