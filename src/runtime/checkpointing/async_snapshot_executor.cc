#include "runtime/checkpointing/async_snapshot_executor.h"

namespace sluice::runtime {

AsyncSnapshotExecutor::AsyncSnapshotExecutor(int num_threads) {
  for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this] { run(); });
}

AsyncSnapshotExecutor::~AsyncSnapshotExecutor() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void AsyncSnapshotExecutor::submit(std::function<void()> work) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(work));
  }
  cv_.notify_one();
}

void AsyncSnapshotExecutor::drain() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
}

void AsyncSnapshotExecutor::run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    auto work = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    work();
    lock.lock();
    --running_;
    if (queue_.empty() && running_ == 0) idle_cv_.notify_all();
  }
}

}  // namespace sluice::runtime
