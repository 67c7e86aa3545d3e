// The JSON summary of a finished job: what execute() writes to execution.job-summary.path (--summary-json) and the
// common part of `sluice demo` / `sluice nexmark` summaries (which add their event counts and injected failures).
// Fields (sizes in bytes, times in seconds or milliseconds as named):
//   job_id, job_name, status (FINISHED, CANCELED, FAILED), error (when not FINISHED with an error), elapsed_s,
//   cpu_s (process CPU time while the job ran), peak_rss_bytes (the process's, at the end), operators (per
//   operator summed over subtasks: records_in, records_out, bytes_in, bytes_out, state_size_bytes,
//   back_pressured_ms), rocksdb_native_metrics (when state.backend.rocksdb.metrics.* are on), runtime_mode;
//   STREAMING with checkpointing: checkpoints_completed, checkpoints_failed, checkpoint_duration_p99_ms,
//   checkpoint_duration_avg_ms, checkpoint_size_bytes, checkpointed_size_bytes, checkpoint_stats (as GET
//   /jobs/:id/checkpoints), restarts, restored_from ([0]: the checkpoint the run started from, 0 for none; [i]: the
//   one recovery i restored), recovery_time_ms (one per recovery);
//   BATCH (docs/batch.md): stage_runs, restarts, batch (exchange and sort figures), failures_injected,
//   failures_by_class.
// Internal to the library. Thread-safety: call from one thread once the job ended (the client outlives the call).
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "sluice/api/job_client.h"
#include "sluice/config/configuration.h"
#include "sluice/core/status.h"
#include "sluice/metrics/metric_registry.h"

namespace sluice::api {

// The process's peak resident set size (getrusage).
int64_t peak_rss_bytes();

// Per-operator figures of job `job` summed over subtasks (metric scopes "<job>.<operator>.<subtask>").
nlohmann::json operator_metrics(const MetricRegistry& metrics, const std::string& job);

// Adds the fields above to `summary` (an object).
void add_job_summary(nlohmann::json& summary, const JobExecutionResult& result, JobClient& client);

// The summary's file, opened (created or truncated) before the job runs, so a path that cannot be written fails
// before anything runs rather than after.
class JobSummaryFile {
 public:
  // kIoError naming the path.
  [[nodiscard]] static Result<JobSummaryFile> open(const std::string& path);
  // Writes `summary` (indented, one trailing newline) and closes the file; kIoError naming the path.
  [[nodiscard]] Status write(const nlohmann::json& summary);

 private:
  explicit JobSummaryFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::ofstream out_;
};

// The summary file execution.job-summary.path names, opened; nullopt when the key is empty. Errors as open().
[[nodiscard]] Result<std::optional<JobSummaryFile>> open_job_summary(const Configuration& config);

}  // namespace sluice::api
