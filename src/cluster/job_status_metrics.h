// A job's availability metrics at the JobManager, with Flink's names (Flink's "System metrics": Availability):
// numRestarts and uptime (metric_names.h), gauges on the job's group.
//
// Thread-safety: every member may be called from any thread; the gauges read atomics shared with them, so they stay
// readable after this object is gone.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "sluice/api/job_client.h"
#include "sluice/core/clock.h"
#include "sluice/metrics/metric_group.h"

namespace sluice {

class JobStatusMetrics {
 public:
  // Registers the gauges on `job` (nullptr: none). `clock` null: the system clock.
  JobStatusMetrics(MetricGroup* job, const Clock* clock);

  // The job moved to `status`: RUNNING starts the uptime, any other status stops it (0), a terminal one ends it (-1).
  void on_status(JobStatus status);
  // One more restart (a failover of the job or of a region, or a redeployment that failed).
  void on_restart();

 private:
  struct Figures {
    std::atomic<int64_t> restarts{0};
    std::atomic<int> phase{0};  // 0 not running, 1 running since running_since_ns, 2 ended
    std::atomic<int64_t> running_since_ns{0};
  };
  std::shared_ptr<Figures> figures_ = std::make_shared<Figures>();
  const Clock* clock_;
};

}  // namespace sluice
