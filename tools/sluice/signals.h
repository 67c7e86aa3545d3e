// SIGINT / SIGTERM in the `sluice` tool: the first one cancels the running job cleanly (its tasks' close paths
// delete their RocksDB working directories, `sluice-rocksdb-job_*` under the local directory), and the tool exits
// with 128 + the signal (130 for SIGINT, 143 for SIGTERM); a second one exits at once with that code.
//
// No work in a signal handler: install_signal_thread() blocks both signals in the calling thread before any other
// thread exists (every later thread, the job's and RocksDB's included, inherits the mask), and one thread waits
// for them with sigwait() and acts as ordinary code. Without a job in flight (arm_job_cancel() not called, or
// the job finished) the first signal exits at once.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace sluice::cli {

namespace signal_detail {
struct State {
  std::mutex mu;
  bool armed = false;             // a job is being submitted or runs: the first signal cancels instead of exiting
  std::function<void()> cancel;   // how to cancel it, once it is submitted
  int received = 0;               // the first signal, 0 if none
};
inline State& state() {
  static State s;
  return s;
}
}  // namespace signal_detail

// Call first in main(), before any thread is started.
inline void install_signal_thread() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      auto& s = signal_detail::state();
      std::lock_guard lock(s.mu);
      if (s.received != 0 || !s.armed) _exit(128 + sig);  // a second signal, or nothing to cancel
      s.received = sig;
      // Under the lock, so the job client cannot go away meanwhile (set_job_cancel({}) waits for it). Else
      // set_job_cancel() runs it once the job is submitted.
      if (s.cancel) s.cancel();
    }
  }).detach();
}

// From now on the first signal cancels the job instead of exiting (call before submitting it).
inline void arm_job_cancel() {
  auto& s = signal_detail::state();
  std::lock_guard lock(s.mu);
  s.armed = true;
}

// How to cancel the submitted job; runs it at once if a signal came already. An empty function disarms (the job
// ended): a later first signal exits at once.
inline void set_job_cancel(std::function<void()> cancel) {
  auto& s = signal_detail::state();
  std::lock_guard lock(s.mu);
  s.armed = static_cast<bool>(cancel);
  s.cancel = std::move(cancel);
  if (s.cancel && s.received != 0) s.cancel();
}

// The first SIGINT / SIGTERM received, 0 if none.
inline int received_signal() {
  auto& s = signal_detail::state();
  std::lock_guard lock(s.mu);
  return s.received;
}

}  // namespace sluice::cli
