#include "runtime/network/task_notifier.h"

namespace sluice::runtime {

// Why no wake-up is lost: the waiter tests `pending_` under mu_ before sleeping, and a notifier that sets
// `pending_` from false to true then takes mu_ before signalling, so it either runs before that test (the
// waiter sees true and does not sleep) or after the waiter is asleep (and signals it). A notifier that finds
// `pending_` already true needs no signal: the notifier that set it does (or did) the signalling, and the
// waiter consumes the flag with an exchange (an RMW), so it also sees the later notifier's writes.
void TaskNotifier::notify() {
  if (pending_.exchange(true, std::memory_order_acq_rel)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (waiting_) cv_.notify_one();
}

bool TaskNotifier::wait(std::chrono::nanoseconds max) {
  if (pending_.exchange(false, std::memory_order_acq_rel)) return true;
  {
    std::unique_lock<std::mutex> lock(mu_);
    waiting_ = true;
    cv_.wait_for(lock, max, [this] { return pending_.load(std::memory_order_acquire); });
    waiting_ = false;
  }
  return pending_.exchange(false, std::memory_order_acq_rel);
}

}  // namespace sluice::runtime
