// TaskManagerLossMonitor: tells the JobManager's parts when the ResourceManager loses a TaskManager - its
// connection watch ended, it registered again, or its heartbeats stopped for heartbeat.timeout (Flink's
// HeartbeatManager timeout and its "TaskManager ... disconnected" path, in one place). It evaluates the
// ResourceManager every `tick_ms`, so a dropped connection is reported within one tick and a timeout within one
// tick of expiring.
// Thread-safety: add/remove may be called from any thread but not from a callback; callbacks run on the monitor's
// thread, one at a time, never after remove() returned for them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "cluster/resource_manager.h"

namespace sluice::cluster {

class TaskManagerLossMonitor {
 public:
  using Callback = std::function<void(const LostTaskManager&)>;

  // `resource_manager` must outlive the monitor. `tick_ms` > 0 (50 by default: far below any heartbeat timeout).
  explicit TaskManagerLossMonitor(ResourceManager* resource_manager, int64_t tick_ms = 50);
  ~TaskManagerLossMonitor();  // stops the thread
  TaskManagerLossMonitor(const TaskManagerLossMonitor&) = delete;
  TaskManagerLossMonitor& operator=(const TaskManagerLossMonitor&) = delete;

  // Returns a handle for remove().
  int64_t add(Callback callback);
  // After it returns, `handle`'s callback is not running and will not run again.
  void remove(int64_t handle);

 private:
  void run();

  ResourceManager* rm_;
  const int64_t tick_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<int64_t, Callback> callbacks_;
  int64_t next_handle_ = 1;
  std::mutex calling_;  // held while callbacks run, so remove() can wait for a running one
  std::thread thread_;
};

}  // namespace sluice::cluster
