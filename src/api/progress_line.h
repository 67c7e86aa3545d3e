// The progress line of a running job: every interval, one line with the records its sources emitted so far (the
// numRecordsOut of the source operators, summed over subtasks), the rate since the start, the completed
// checkpoints (when the job checkpoints) and the time elapsed. execute() prints it to stderr per
// execution.progress-line (sluice/config/logging_options.h); `sluice demo` and `sluice nexmark` to stdout, counting
// events.
// Thread-safety: construct and stop() from one thread; the line is written from a thread of its own, which reads the
// job through its JobClient (which must outlive stop()).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "sluice/api/job_client.h"
#include "sluice/config/configuration.h"

namespace sluice::api {

class ProgressLine {
 public:
  // `source_operators`: the names of the job's source operators; `what`: what the records are called ("records",
  // "events").
  ProgressLine(JobClient& client, std::vector<std::string> source_operators, std::FILE* out, std::string what,
               std::chrono::milliseconds interval = std::chrono::seconds(1));
  ~ProgressLine() { stop(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  // Ends the line's thread (returns at once if it is between lines). Idempotent.
  void stop();

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// Whether a progress line goes to `out`, per execution.progress-line: ON always, OFF never, AUTO when `out` is a
// terminal (a line a second would clutter a log file or a pipe).
bool progress_line_wanted(const Configuration& config, std::FILE* out);

// The sum of numRecordsOut over the subtasks of the operators named `source_operators` (metric scopes
// "<job>.<operator>.<subtask>"), as the registry holds them now.
int64_t records_emitted(const MetricRegistry& metrics, const std::vector<std::string>& source_operators);

}  // namespace sluice::api
