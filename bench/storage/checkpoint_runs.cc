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
#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/sink/builtin_sinks.h"
#include "../checkpoint/keyed_job.h"

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;

Result<Configuration> job_config(const CheckpointRunConfig& c) {
  Configuration config = c.base;
  const bool rocksdb = c.state == StateKind::kRocksDBIncremental;
  const std::pair<const char*, std::string> keys[] = {
      // No periodic checkpoint: the harness triggers them every interval once the state is warm (below).
      {"execution.checkpointing.interval", "24h"},
      {"execution.checkpointing.dir", c.checkpoint_dir},
      {"state.backend.type", rocksdb ? "rocksdb" : "hashmap"},
      {"execution.checkpointing.incremental", rocksdb ? "true" : "false"},
      {"restart-strategy.type", "none"}};
  for (const auto& [key, value] : keys) SLUICE_RETURN_IF_ERROR(config.set_string(key, value).with_context(key));
  if (rocksdb) SLUICE_RETURN_IF_ERROR(config.set_string("state.backend.rocksdb.localdir", c.rocksdb_local_dir));
  return config;
}

// bench/checkpoint's keyed job (keyed_job.h: Nexmark bids, a running count, sum and max per key in ValueState)
// with its keys dealt in turn, key = n mod `keys` for the n-th bid, instead of hashed from the price. Prices are
// log-uniform, so hashed keys keep appearing for minutes at 10 M keys and the state of a run would grow with its
// length: the slower storage would checkpoint more state. Dealt keys fill the state after `keys` bids; from then
// on every checkpoint holds all of them.
void build_dealt_keys_job(StreamExecutionEnvironment& env, const CheckpointRunConfig& c,
                          const std::shared_ptr<JobProbe>& probe) {
  nexmark::NexmarkSourceOptions source;
  source.generator.seed = 1;
  source.generator.declared_rate_per_s = 10'000'000;
  source.generator.max_events = -1;  // unbounded: cancelled after c.checkpoints
  env.set_parallelism(c.parallelism);
  // Shared by the subtasks of the map (however the function is copied), so the keys are dealt once over all.
  auto dealt = std::make_shared<std::atomic<int64_t>>(0);
  const int64_t keys = c.keys;
  env.from_source(nexmark::NexmarkSource(source), "bids")
      .filter([](const nexmark::Event& e) { return e.is_bid(); })
      .map([dealt, keys](nexmark::Event&& e) {
        nexmark::Bid bid = e.bid();
        bid.auction = dealt->fetch_add(1, std::memory_order_relaxed) % keys;  // the key, below
        return bid;
      })
      .uid("deal-keys")
      .key_by([](const nexmark::Bid& b) { return b.auction; })
      .process(AggregatePerKey(keys, probe))
      .uid("per-key")
      .sink_to(DiscardingSink<KeyAggregate>());
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
  SLUICE_ASSIGN_OR_RETURN(Configuration config, job_config(c));
  StreamExecutionEnvironment env(std::move(config));
  env.set_file_systems(std::move(file_systems));
  auto probe = std::make_shared<JobProbe>();
  build_dealt_keys_job(env, c, probe);

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

  // Warm-up: no checkpoint until every key exists (the probe counts new keys): RocksDB filling 10 M keys while
  // it flushes for a checkpoint every 500 ms took minutes, and those checkpoints held less state. Then the
  // harness triggers one every interval as the periodic trigger does (the next an interval after the previous
  // trigger; with one still running, when it ends), and takes every completed one (the coordinator's history
  // keeps the latest 10; polled every 10 ms), and the S3 counters at the first and the last completion seen.
  int64_t warm_after_id = -1;  // checkpoints with a higher id count
  std::map<int64_t, coordinator::CheckpointStatsEntry> completed;
  int64_t first_seen = -1, last_seen = -1;
  s3::S3ClientStats at_first, at_last;
  auto take_completed = [&](const std::vector<coordinator::CheckpointStatsEntry>& history) {
    for (const auto& e : history) {
      if (e.status == coordinator::CheckpointStatus::kCompleted && e.id.value() > warm_after_id) {
        completed.emplace(e.id.value(), e);
      }
    }
  };
  const auto deadline = t0 + std::chrono::seconds(c.timeout_s);
  auto next_trigger = Clock::time_point::max();
  while (true) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const coordinator::CheckpointStatsSnapshot s = cp->checkpoint_stats();
    if (warm_after_id < 0 && probe->new_keys.load(std::memory_order_relaxed) >= c.keys) {
      warm_after_id = s.num_triggered;
      run.warmup_s = std::chrono::duration<double>(Clock::now() - t0).count();
      run.failed_before_warm = s.num_failed;
      next_trigger = Clock::now();
    }
    if (warm_after_id < 0) {
      if (Clock::now() > deadline) break;
      continue;
    }
    if (Clock::now() >= next_trigger && s.num_in_progress == 0 && cp->trigger_checkpoint().is_ok()) {
      next_trigger += std::chrono::milliseconds(c.interval_ms);
    }
    take_completed(s.history);
    run.failed = s.num_failed - run.failed_before_warm;
    const auto done = static_cast<int64_t>(completed.size());
    if (done > last_seen && done > 0) {
      const s3::S3ClientStats now = client != nullptr ? client->stats() : s3::S3ClientStats{};
      if (first_seen < 0) {
        first_seen = done;
        at_first = now;
      }
      last_seen = done;
      at_last = now;
    }
    if (done >= c.checkpoints) break;
    if (Clock::now() > deadline) {
      std::fprintf(stderr, "storage_bench: %lld of %d checkpoints within %lld s; cancelling\n",
                   static_cast<long long>(done), c.checkpoints, static_cast<long long>(c.timeout_s));
      break;
    }
  }
  job_client->cancel();
  JobExecutionResult result = job_client->wait();
  run.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (warm_after_id < 0) {
    return Status::timeout("the state held " + std::to_string(probe->new_keys.load()) + " of " +
                           std::to_string(c.keys) + " keys after " + std::to_string(c.timeout_s) + " s");
  }
  take_completed(cp->checkpoint_stats().history);
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
