// TaskManagerMetrics: the JobManager's copy of the metrics its TaskManagers report with their heartbeats (Flink's
// web UI asks each TaskManager's MetricQueryService instead; the values are the same: every counter, gauge and
// histogram of the tasks the TaskManager runs for the job). One report is kept per TaskManager, the latest of its
// current registration:
//   - a report replaces the TaskManager's previous one, unless that one has a higher sequence (two heartbeats
//     crossed on the way) or belongs to a newer registration;
//   - a report of a new registration replaces the old registration's (a restarted process counts from zero);
//   - the report of a TaskManager that is lost is dropped (drop()), so the counts of a dead process do not linger;
//     one that leaves because the job ended stays: the job's final figures.
// metrics() is what the JobManager's registry snapshots include (MetricGroup::reported_metrics): every kept value
// with the variable tm_id (Flink's <tm_id>), so two TaskManagers that reported the same subtask (one lost it to the
// other in a failover, until its next report) stay apart.
// Pure bookkeeping, no I/O. Thread-safety: every method may be called from any thread (one internal mutex);
// metrics() takes only that mutex, so it may run under the registry's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "sluice/metrics/metric_value.h"

namespace sluice::cluster {

// The variable a reported metric gets: the TaskManager it came from (Flink's scope variable <tm_id>).
inline constexpr const char* kTaskManagerIdVariable = "tm_id";

class TaskManagerMetrics {
 public:
  // Keeps `metrics` as the latest report of TaskManager `task_manager_id` under registration `registration_id`
  // (see the rules above). Returns false when the report was older than the one kept, and dropped.
  bool update(const std::string& task_manager_id, uint64_t registration_id, uint64_t sequence,
              std::vector<MetricValue> metrics);
  // The TaskManager's registration `registration_id` was lost: its report goes. A newer registration's stays.
  void drop(const std::string& task_manager_id, uint64_t registration_id);
  // The job is ending: what is kept are its final figures (each task reported before it finished). Later updates
  // and drops are ignored - a TaskManager whose attempt the end cancels reports no subtasks any more, which would
  // otherwise replace its figures before the JobManager's closing lines read them.
  void freeze();
  // Every kept value, with tm_id set, ordered by TaskManager id and then as reported.
  std::vector<MetricValue> metrics() const;
  // How many TaskManagers have a report kept.
  size_t reporting_task_managers() const;

 private:
  struct Report {
    uint64_t registration_id = 0;
    uint64_t sequence = 0;
    std::vector<MetricValue> metrics;
  };
  mutable std::mutex mu_;
  std::map<std::string, Report> reports_;  // by TaskManager id
  bool frozen_ = false;
};

}  // namespace sluice::cluster
