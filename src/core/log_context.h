// What a log line says about where it comes from: the job id and, on a task's thread, the task ("<chain name>
// (2/4)#0": subtask 2 of 4, attempt 0 - Flink's task names). Held per thread; lines from other threads of a
// process that runs one job (a TaskManager, a JobManager, a program's MiniCluster) carry that job's id. The log
// formats (core/log_format.h) read it for every line.
//
// Thread-safety: the scopes are per thread; register_job / unregister_job and current() may be called from any
// thread.
#pragma once

#include <string>
#include <utility>

namespace sluice::log {

struct LogContext {
  std::string job_id;  // hex; empty: none known
  std::string task;    // empty: not a task's thread
};

// Sets this thread's context for its lifetime (nested scopes put the outer one back).
class ScopedLogContext {
 public:
  ScopedLogContext(std::string job_id, std::string task);
  ~ScopedLogContext();
  ScopedLogContext(const ScopedLogContext&) = delete;
  ScopedLogContext& operator=(const ScopedLogContext&) = delete;

 private:
  LogContext previous_;
};

// The jobs running in this process (from submission to the end). While exactly one does, threads without a
// context of their own log its id.
void register_job(const std::string& job_id);
void unregister_job(const std::string& job_id);

// register_job for its lifetime.
class ScopedRunningJob {
 public:
  explicit ScopedRunningJob(std::string job_id) : job_id_(std::move(job_id)) { register_job(job_id_); }
  ~ScopedRunningJob() { unregister_job(job_id_); }
  ScopedRunningJob(const ScopedRunningJob&) = delete;
  ScopedRunningJob& operator=(const ScopedRunningJob&) = delete;

 private:
  std::string job_id_;
};

// This thread's context; else the process's one job; else empty.
LogContext current();

}  // namespace sluice::log
