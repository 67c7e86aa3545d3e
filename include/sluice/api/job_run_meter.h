// JobRunMeter: the wall-clock and process CPU time one job ran, turned into its JobExecutionResult (runtime_ms,
// cpu_seconds). The streaming MiniCluster and the BATCH job share it, so both report the same figures the same way.
// Thread-safety: start() and result() by the thread that runs the job's lifecycle.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "sluice/api/job_client.h"
#include "sluice/core/process_cpu_time.h"

namespace sluice {

class JobRunMeter {
 public:
  // `now_ns`: the job clock's monotonic time at submission.
  void start(int64_t now_ns) {
    start_ns_ = now_ns;
    start_cpu_s_ = process_cpu_seconds();
  }
  // The result at the terminal state; `now_ns` from the same clock as start().
  JobExecutionResult result(JobId job_id, std::string job_name, JobStatus status, Status error, int64_t now_ns) const {
    JobExecutionResult r;
    r.job_id = std::move(job_id);
    r.job_name = std::move(job_name);
    r.status = status;
    r.error = std::move(error);
    r.runtime_ms = (now_ns - start_ns_) / 1'000'000;
    r.cpu_seconds = process_cpu_seconds() - start_cpu_s_;
    return r;
  }

 private:
  int64_t start_ns_ = 0;
  double start_cpu_s_ = 0;
};

}  // namespace sluice
