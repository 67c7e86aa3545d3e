#include "checkpoint_runs.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "cluster/mini_cluster.h"
#include "coordinator/checkpoint_stats.h"
#include "../checkpoint/keyed_job.h"

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;

Result<Configuration> job_config(const CheckpointRunConfig& c) {
  Configuration config = c.base;
  const bool rocksdb = c.state == StateKind::kRocksDBIncremental;
  const std::pair<const char*, std::string> keys[] = {
      {"execution.checkpointing.interval", std::to_string(c.interval_ms) + "ms"},
      {"execution.checkpointing.dir", c.checkpoint_dir},
      {"state.backend.type", rocksdb ? "rocksdb" : "hashmap"},
      {"execution.checkpointing.incremental", rocksdb ? "true" : "false"},
      {"restart-strategy.type", "none"}};
  for (const auto& [key, value] : keys) SLUICE_RETURN_IF_ERROR(config.set_string(key, value).with_context(key));
  if (rocksdb) SLUICE_RETURN_IF_ERROR(config.set_string("state.backend.rocksdb.localdir", c.rocksdb_local_dir));
  return config;
}

}  // namespace

s3::S3ClientStats stats_minus(const s3::S3ClientStats& after, const s3::S3ClientStats& before) {
  s3::S3ClientStats d;
  d.requests = after.requests - before.requests;
  d.retries = after.retries - before.retries;
  d.bytes_sent = after.bytes_sent - before.bytes_sent;
  d.bytes_received = after.bytes_received - before.bytes_received;
  d.peak_requests_in_flight = after.peak_requests_in_flight;
  return d;
}

Result<CheckpointRun> run_checkpointed_job(const CheckpointRunConfig& c,
                                           std::shared_ptr<const fs::FileSystemRegistry> file_systems,
                                           const s3::S3Client* client) {
  KeyedJobConfig job;
  job.events = -1;  // unbounded: cancelled after c.checkpoints
  job.num_keys = c.keys;
  job.parallelism = c.parallelism;
  SLUICE_ASSIGN_OR_RETURN(Configuration config, job_config(c));
  StreamExecutionEnvironment env(std::move(config));
  env.set_file_systems(std::move(file_systems));
  build_keyed_job(env, job, std::make_shared<JobProbe>());

  CheckpointRun run;
  const s3::S3ClientStats start = client != nullptr ? client->stats() : s3::S3ClientStats{};
  const auto t0 = Clock::now();
  auto submitted = env.execute_async("storage-bench");
  if (!submitted.is_ok()) return submitted.status();
  std::unique_ptr<JobClient> job_client = std::move(submitted).value();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(job_client.get());
  if (cp == nullptr) {
    job_client->cancel();
    (void)job_client->wait();
    return Status::internal("a checkpointing job without a checkpoint client");
  }

  // Every completed checkpoint (the coordinator's history keeps the latest 10), and the S3 counters at the
  // first and the last completion seen.
  std::map<int64_t, coordinator::CheckpointStatsEntry> completed;
  int64_t first_seen = -1, last_seen = -1;
  s3::S3ClientStats at_first, at_last;
  const auto deadline = t0 + std::chrono::seconds(c.timeout_s);
  while (true) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const coordinator::CheckpointStatsSnapshot s = cp->checkpoint_stats();
    for (const auto& e : s.history) {
      if (e.status == coordinator::CheckpointStatus::kCompleted) completed.emplace(e.id.value(), e);
    }
    run.failed = s.num_failed;
    if (s.num_completed > last_seen && s.num_completed > 0) {
      const s3::S3ClientStats now = client != nullptr ? client->stats() : s3::S3ClientStats{};
      if (first_seen < 0) {
        first_seen = s.num_completed;
        at_first = now;
      }
      last_seen = s.num_completed;
      at_last = now;
    }
    if (s.num_completed >= c.checkpoints) break;
    if (Clock::now() > deadline) {
      std::fprintf(stderr, "storage_bench: %lld of %d checkpoints within %lld s; cancelling\n",
                   static_cast<long long>(s.num_completed), c.checkpoints, static_cast<long long>(c.timeout_s));
      break;
    }
  }
  job_client->cancel();
  JobExecutionResult result = job_client->wait();
  run.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  for (const auto& e : cp->checkpoint_stats().history) {
    if (e.status == coordinator::CheckpointStatus::kCompleted) completed.emplace(e.id.value(), e);
  }
  if (result.status != JobStatus::kCanceled) {
    return Status::internal(std::string("the job ended ") + job_status_name(result.status) + ": " +
                            result.error.to_string());
  }
  for (const auto& [id, e] : completed) {
    run.end_to_end_ms.push_back(e.end_to_end_duration_ms);
    run.checkpointed_bytes.push_back(static_cast<int64_t>(e.checkpointed_size_bytes));
    run.state_bytes.push_back(static_cast<int64_t>(e.state_size_bytes));
  }
  if (client != nullptr) {
    run.counted_checkpoints = last_seen - first_seen;
    run.counted = stats_minus(at_last, at_first);
    run.whole_run = stats_minus(client->stats(), start);
  }
  return run;
}

}  // namespace sluice::bench
