// AsyncSnapshotExecutor: the threads that run the asynchronous parts of task snapshots (writing state files,
// then acknowledging), so the task threads keep processing records meanwhile (Flink's
// AsyncCheckpointRunnable on the task's async executor).
//
// Lifetime rule: a job drains the executor (drain()) before it destroys the tasks whose snapshots may still be
// running, because a copy-on-write snapshot reads the backend's data structures while it writes.
// Thread-safety: submit() and drain() from any thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sluice::runtime {

class AsyncSnapshotExecutor {
 public:
  explicit AsyncSnapshotExecutor(int num_threads = 2);
  ~AsyncSnapshotExecutor();
  AsyncSnapshotExecutor(const AsyncSnapshotExecutor&) = delete;
  AsyncSnapshotExecutor& operator=(const AsyncSnapshotExecutor&) = delete;

  void submit(std::function<void()> work);
  // Blocks until every submitted piece of work has finished.
  void drain();

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::deque<std::function<void()>> queue_;
  int running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace sluice::runtime
