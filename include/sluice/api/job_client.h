// JobClient: the handle of a submitted job (Flink's JobClient) and its final JobExecutionResult.
//
// Job lifecycle (Flink's JobStatus state machine, docs/architecture.md "Job status"): CREATED -> RUNNING -> FINISHED;
// a task failure: RUNNING -> RESTARTING -> RUNNING (while the restart strategy allows) or -> FAILING -> FAILED;
// cancel(): RUNNING (or RESTARTING) -> CANCELLING -> CANCELED. Thread-safety: any method from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sluice/core/ids.h"
#include "sluice/core/status.h"

namespace sluice {

class MetricRegistry;

enum class JobStatus { kCreated, kRunning, kRestarting, kFailing, kFailed, kCancelling, kCanceled, kFinished };
const char* job_status_name(JobStatus s);  // "RUNNING", ...
inline bool is_globally_terminal(JobStatus s) {
  return s == JobStatus::kFailed || s == JobStatus::kCanceled || s == JobStatus::kFinished;
}

struct JobExecutionResult {
  JobId job_id;
  std::string job_name;
  JobStatus status = JobStatus::kCreated;
  Status error;              // why the job failed (kUserFunction names operator and subtask), or ok
  int64_t runtime_ms = 0;    // from submission to the terminal state
  double cpu_seconds = 0;    // process CPU time consumed while the job ran (user + system)
};

class JobClient {
 public:
  virtual ~JobClient() = default;
  virtual JobId job_id() const = 0;
  virtual JobStatus status() const = 0;
  // Requests cancellation; returns at once (wait() observes CANCELED).
  virtual void cancel() = 0;
  // Blocks until the job reaches a terminal state.
  virtual JobExecutionResult wait() = 0;
  // Live metrics of the job (per operator and subtask); valid for the client's lifetime.
  virtual const MetricRegistry& metrics() const = 0;
};

}  // namespace sluice
