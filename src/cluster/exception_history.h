// A job's failures, newest first, as Flink's exception history keeps them (GET /jobs/:jobid/exceptions; Flink's
// web.exception-history-size, default 16): each failure that made the job or one of its pipelined regions restart,
// or fail for good, with the task it happened in.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::cluster {

struct JobException {
  int64_t timestamp_ms = 0;  // wall clock, ms since the epoch, when the JobMaster learnt of it
  std::string exception_name;  // "sluice.<status code>", e.g. sluice.USER_FUNCTION (Flink: the Java class)
  std::string message;         // the cause's text
  std::string task_name;       // "<vertex name> (i/n)"; empty for a failure of no one task (a redeployment)
  std::string location;        // the host the task ran on; empty when unknown
  std::string task_manager_id;  // the TaskManager it ran on; empty when unknown
};

class ExceptionHistory {
 public:
  // Keeps the newest `capacity` (>= 1) failures.
  explicit ExceptionHistory(int32_t capacity = 16);

  void add(JobException e);
  // Newest first.
  std::vector<JobException> entries() const;
  // Every failure added, also those no longer kept (Flink's "truncated" when above entries().size()).
  int64_t total() const;

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::deque<JobException> entries_;  // newest first; guarded by mu_
  int64_t total_ = 0;                 // guarded by mu_
};

// The exception name of a failure: "sluice." and the name of its status code.
std::string exception_name_of(const Status& cause);

}  // namespace sluice::cluster
