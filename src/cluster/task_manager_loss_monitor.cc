#include "cluster/task_manager_loss_monitor.h"

#include <chrono>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

namespace sluice::cluster {

TaskManagerLossMonitor::TaskManagerLossMonitor(ResourceManager* resource_manager, int64_t tick_ms)
    : rm_(resource_manager), tick_ms_(tick_ms > 0 ? tick_ms : 50) {
  thread_ = std::thread([this] { run(); });
}

TaskManagerLossMonitor::~TaskManagerLossMonitor() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

int64_t TaskManagerLossMonitor::add(Callback callback) {
  std::lock_guard lock(mu_);
  const int64_t handle = next_handle_++;
  callbacks_.emplace(handle, std::move(callback));
  return handle;
}

void TaskManagerLossMonitor::remove(int64_t handle) {
  std::lock_guard calling(calling_);
  std::lock_guard lock(mu_);
  callbacks_.erase(handle);
}

void TaskManagerLossMonitor::run() {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::milliseconds(tick_ms_), [&] { return stopping_; })) {
    lock.unlock();
    std::vector<LostTaskManager> lost = rm_->take_lost();
    {
      std::lock_guard calling(calling_);
      std::vector<Callback> callbacks;
      {
        std::lock_guard l(mu_);
        for (const auto& [handle, cb] : callbacks_) callbacks.push_back(cb);
      }
      for (const LostTaskManager& tm : lost) {
        spdlog::warn("TaskManager '{}' (registration {}) lost: {}", tm.task_manager_id, tm.registration_id, tm.reason);
        for (const Callback& cb : callbacks) cb(tm);
      }
    }
    lock.lock();
  }
}

}  // namespace sluice::cluster
