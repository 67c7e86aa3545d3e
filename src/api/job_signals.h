// SIGINT / SIGTERM while a job runs in this process: the first one cancels the job cleanly (its tasks' close paths
// run: RocksDB working directories go, open transactions are aborted), the second one exits the process at once
// with 128 + the signal (130 for SIGINT, 143 for SIGTERM), as Flink's CLI and `sluice demo` behave.
// StreamExecutionEnvironment::execute() holds a JobSignalScope for the job it runs; the `sluice` tool's commands
// hold one around theirs.
//
// How: while at least one scope exists, both signals have a handler that only writes the signal number to a pipe
// (async-signal-safe); one watcher thread reads it and acts as ordinary code. This holds also where the process
// ignored the signal before (SIG_IGN: a non-interactive shell starts background jobs with SIGINT ignored), so
// `kill -INT` reaches a job started with `&`. When the last scope goes, the dispositions found at the first are put
// back. A signal while scopes exist but none has a job to cancel (before
// submission it is held: see set_cancel) exits at once with 128 + the signal.
//
// Thread-safety: every member may be called from any thread; scopes may overlap (several jobs in one process:
// a signal cancels all of them).
#pragma once

#include <functional>
#include <memory>

namespace sluice::api {

class JobSignalScope {
 public:
  // Arms: from now on the first signal is held for this scope's job until set_cancel() gives a way to cancel it.
  JobSignalScope();
  ~JobSignalScope();
  JobSignalScope(const JobSignalScope&) = delete;
  JobSignalScope& operator=(const JobSignalScope&) = delete;

  // How to cancel the submitted job; runs `cancel` at once if a signal came already. An empty function disarms
  // (the job ended, or was never submitted): a first signal then exits the process at once.
  void set_cancel(std::function<void()> cancel);
  // The first SIGINT / SIGTERM received while this scope was armed, 0 if none.
  int received() const;

  struct Entry;

 private:
  std::shared_ptr<Entry> entry_;
};

}  // namespace sluice::api
