#include "api/job_summary.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "batch/batch_job.h"
#include "cluster/mini_cluster.h"
#include "coordinator/checkpoint_stats_json.h"
#include "runtime/fault_injection.h"
#include "sluice/config/logging_options.h"
#include "sluice/metrics/metric_names.h"

namespace sluice::api {
namespace {

void add_batch_summary(nlohmann::json& summary, const batch::BatchJobClient& client) {
  summary["runtime_mode"] = "BATCH";
  const std::vector<int32_t> runs = client.stage_runs();
  int32_t restarts = 0;
  for (int32_t n : runs) restarts += std::max(0, n - 1);
  summary["stage_runs"] = runs;
  summary["restarts"] = restarts;
  const batch::BatchStats st = client.batch_stats();
  summary["batch"] = {{"exchange_bytes_written", st.exchange_bytes_written},
                      {"sorted_records", st.sorted_records},
                      {"sort_spilled_runs", st.sort_spilled_runs},
                      {"sort_spilled_bytes", st.sort_spilled_bytes},
                      {"sort_peak_memory_bytes", st.sort_peak_memory_bytes},
                      {"sort_merge_passes", st.sort_merge_passes},
                      {"commit_retries", st.commit_retries}};
  nlohmann::json injected = nlohmann::json::array(), by_class = nlohmann::json::object();
  for (const runtime::InjectedFailure& f : client.injected_failures()) {
    const char* name = runtime::failure_point_name(f.point);
    injected.push_back({{"class", name}, {"vertex", f.vertex}, {"subtask", f.subtask},
                        {"stage", client.stage_of_vertex(f.vertex)}, {"attempt", f.attempt}});
    by_class[name] = by_class.value(name, 0) + 1;
  }
  summary["failures_injected"] = injected;
  summary["failures_by_class"] = by_class;
}

void add_checkpointing_summary(nlohmann::json& summary, cluster::CheckpointingJobClient& client) {
  auto stats = client.checkpoint_stats();
  summary["checkpoints_completed"] = stats.num_completed;
  summary["checkpoints_failed"] = stats.num_failed;
  summary["checkpoint_duration_p99_ms"] = stats.end_to_end_duration_ms.p99;
  summary["checkpoint_duration_avg_ms"] = stats.end_to_end_duration_ms.avg;
  // Full size of the state the latest checkpoint refers to, and what that checkpoint added (smaller with
  // incremental checkpoints; Flink's "Checkpointed Data Size").
  summary["checkpoint_size_bytes"] = stats.latest_completed ? stats.latest_completed->state_size_bytes : 0;
  summary["checkpointed_size_bytes"] = stats.latest_completed ? stats.latest_completed->checkpointed_size_bytes : 0;
  summary["checkpoint_stats"] = coordinator::to_json(stats);
  summary["restarts"] = client.restarts();
  nlohmann::json restored = nlohmann::json::array(), recovery = nlohmann::json::array();
  const std::optional<std::pair<int64_t, std::string>> initial = client.initial_restore();
  restored.push_back(initial ? initial->first : 0);
  for (auto [from, ms] : client.recoveries()) {
    restored.push_back(from);
    recovery.push_back(ms);
  }
  summary["restored_from"] = restored;
  summary["recovery_time_ms"] = recovery;
}

}  // namespace

int64_t peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

nlohmann::json operator_metrics(const MetricRegistry& metrics, const std::string& job) {
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& m : metrics.snapshot()) {
    if (m.scope.rfind(job + ".", 0) != 0) continue;
    std::string rest = m.scope.substr(job.size() + 1);
    auto dot = rest.rfind('.');
    if (dot == std::string::npos) continue;
    std::string op = rest.substr(0, dot);
    std::string key;
    if (m.name == metric_names::kNumRecordsIn) key = "records_in";
    else if (m.name == metric_names::kNumRecordsOut) key = "records_out";
    else if (m.name == metric_names::kNumBytesIn) key = "bytes_in";
    else if (m.name == metric_names::kNumBytesOut) key = "bytes_out";
    else if (m.name == metric_names::kStateSizeBytes) key = "state_size_bytes";
    else if (m.name == metric_names::kBackPressuredTimeNs) key = "back_pressured_ms";
    else continue;
    double v = key == "back_pressured_ms" ? m.value / 1e6 : m.value;
    nlohmann::json& o = ops[op];
    if (!o.is_object()) o = nlohmann::json::object();
    o[key] = o.value(key, 0.0) + v;
  }
  return ops;
}

void add_job_summary(nlohmann::json& summary, const JobExecutionResult& result, JobClient& client) {
  summary["job_id"] = result.job_id.to_hex();
  summary["job_name"] = result.job_name;
  summary["status"] = job_status_name(result.status);
  if (!result.error.is_ok()) summary["error"] = result.error.to_string();
  summary["elapsed_s"] = static_cast<double>(result.runtime_ms) / 1000.0;
  summary["cpu_s"] = result.cpu_seconds;
  summary["peak_rss_bytes"] = peak_rss_bytes();
  summary["operators"] = operator_metrics(client.metrics(), result.job_name);
  // RocksDB native metrics (state.backend.rocksdb.metrics.*), when enabled: scope -> {property: value}.
  nlohmann::json native = nlohmann::json::object();
  for (const auto& m : client.metrics().snapshot()) {
    if (m.name.rfind("rocksdb.", 0) == 0) native[m.scope][m.name] = m.value;
  }
  if (!native.empty()) summary["rocksdb_native_metrics"] = native;
  if (auto* b = dynamic_cast<batch::BatchJobClient*>(&client)) {
    add_batch_summary(summary, *b);
    return;
  }
  summary["runtime_mode"] = "STREAMING";
  if (auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(&client)) add_checkpointing_summary(summary, *cp);
}

Result<JobSummaryFile> JobSummaryFile::open(const std::string& path) {
  JobSummaryFile file(path);
  file.out_.open(path, std::ios::trunc);
  if (!file.out_) {
    return Status::io_error("cannot write the job summary to '" + path +
                            "' (execution.job-summary.path, --summary-json): " + std::strerror(errno));
  }
  return file;
}

Result<std::optional<JobSummaryFile>> open_job_summary(const Configuration& config) {
  const std::string path = config.get(options::kJobSummaryPath);
  if (path.empty()) return std::optional<JobSummaryFile>();
  SLUICE_ASSIGN_OR_RETURN(JobSummaryFile file, JobSummaryFile::open(path));
  return std::optional<JobSummaryFile>(std::move(file));
}

Status JobSummaryFile::write(const nlohmann::json& summary) {
  out_ << summary.dump(2) << "\n";
  out_.close();
  if (!out_) return Status::io_error("cannot write the job summary to '" + path_ + "': " + std::strerror(errno));
  return Status::ok();
}

}  // namespace sluice::api
