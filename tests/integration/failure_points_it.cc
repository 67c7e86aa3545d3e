// The worst moments of a checkpoint, each hit on purpose (not at random) through the job's fault injection
// (runtime/fault_injection.h), on the main job with its two-phase-commit file sink, and the output checked
// exactly-once against the oracle:
//  - between a checkpoint's completion and the sink's commit: the restore from that checkpoint commits its
//    committables, and its part files hold its data exactly once;
//  - between the synchronous and the asynchronous part of a snapshot: that checkpoint never completes, the job
//    restores from an earlier one;
//  - at the sink's pre-commit: the pre-committed (pending) file is a lingering transaction the restore aborts;
//  - during a restore: the attempt that failed restoring is replaced by one restoring the same checkpoint.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../../examples/per_auction/per_auction_job.h"
#include "../../tools/sluice/verify.h"
#include "cluster/mini_cluster.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using runtime::FailurePoint;

constexpr int32_t kSourceVertex = 0;     // bids -> only-bids -> to-bid
constexpr int32_t kKeyedSinkVertex = 1;  // per-auction -> sink

struct Job {
  std::string base;
  per_auction::JobOptions options;
  std::unique_ptr<JobClient> client;
  cluster::CheckpointingJobClient* cp = nullptr;
};

// The main job at parallelism 2 with checkpoints every `interval`.
void start_job(const std::string& name, int64_t events, const std::string& interval, Job& job) {
  job.base = ::testing::TempDir() + "failure-points-" + std::to_string(::getpid()) + "-" + name;
  fs::remove_all(job.base);
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", interval).is_ok());
  ASSERT_TRUE(config.set_string("execution.checkpointing.dir", job.base + "/ck").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.type", "fixed-delay").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.fixed-delay.attempts", "3").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.fixed-delay.delay", "10ms").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  job.options.source.generator.max_events = events;
  job.options.source.generator.seed = 11;
  job.options.source.num_splits = 4;
  job.options.output_dir = job.base + "/out";
  per_auction::build(env, job.options);
  auto client = env.execute_async(name);
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  job.client = std::move(client).value();
  job.cp = dynamic_cast<cluster::CheckpointingJobClient*>(job.client.get());
  ASSERT_NE(job.cp, nullptr);
}

// Waits for the end, then checks the job finished and its output is exactly-once with nothing hidden left.
void finish_and_verify(Job& job) {
  auto result = job.client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  auto oracle = nexmark::compute_per_auction_oracle(job.options.source.generator, job.options.source.generator.max_events);
  auto report = cli::verify_per_auction_output(job.options.output_dir, oracle);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->missing, 0);
  EXPECT_EQ(report->duplicates, 0);
  EXPECT_EQ(report->mismatches(), 0) << (report->first_mismatches.empty() ? "" : report->first_mismatches[0]);
  for (const auto& e : fs::directory_iterator(job.options.output_dir)) {
    EXPECT_EQ(e.path().filename().string().rfind(".part-", 0), std::string::npos) << "left behind: " << e.path();
  }
}

// Polls until `done` or the job ended; false if it ended first.
template <class Pred>
bool wait_while_running(Job& job, Pred done) {
  while (!done()) {
    if (is_globally_terminal(job.client->status())) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(FailurePoints, BetweenCompletionAndCommitTheRestoredSinkCommitsExactlyOnce) {
  Job job;
  ASSERT_NO_FATAL_FAILURE(start_job("completion-commit", 400'000, "100ms", job));
  // Sink subtask 0 fails when the first checkpoint it is told about has completed, before it commits.
  ASSERT_TRUE(job.cp->arm_failure(FailurePoint::kBetweenCompletionAndCommit, kKeyedSinkVertex, 0, "focused test").is_ok());
  ASSERT_NO_FATAL_FAILURE(finish_and_verify(job));

  auto fired = job.cp->injected_failures();
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].point, FailurePoint::kBetweenCompletionAndCommit);
  EXPECT_EQ(fired[0].vertex, kKeyedSinkVertex);
  EXPECT_EQ(fired[0].subtask, 0);
  EXPECT_EQ(fired[0].attempt, 0);
  const int64_t n = fired[0].checkpoint_id;
  ASSERT_GE(n, 1);
  // The failed notification came first in the sink's mailbox, so checkpoint n+1 (which needs that subtask's
  // acknowledgement, given only after the notification) cannot have completed: the restore is from n.
  auto recoveries = job.cp->recoveries();
  ASSERT_EQ(recoveries.size(), 1u);
  EXPECT_EQ(recoveries[0].first, n);
  std::printf("sink subtask 0 failed between completion and commit of checkpoint %lld; restored from %lld\n",
              static_cast<long long>(n), static_cast<long long>(recoveries[0].first));

  // Checkpoint n's part files of subtask 0 (part-<job>-0-<n>-<counter>) were committed by the restored sink:
  // visible, not empty, and every line of them appears once in the whole output.
  const std::string prefix = "part-" + job.client->job_id().to_hex() + "-0-" + std::to_string(n) + "-";
  std::vector<std::string> n_lines;
  std::multiset<std::string> all_lines;
  for (const auto& e : fs::directory_iterator(job.options.output_dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("part-", 0) != 0) continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      all_lines.insert(line);
      if (name.rfind(prefix, 0) == 0) n_lines.push_back(line);
    }
  }
  ASSERT_FALSE(n_lines.empty()) << "no committed data of checkpoint " << n << " (" << prefix << "*)";
  for (const auto& line : n_lines) ASSERT_EQ(all_lines.count(line), 1u) << line;
  fs::remove_all(job.base);
}

// The failure hits after the barrier went downstream (whose tasks acknowledge) and before the asynchronous
// part: the checkpoint lacks one acknowledgement, never completes, and the restore takes an earlier one.
void between_sync_and_async(int32_t vertex) {
  Job job;
  ASSERT_NO_FATAL_FAILURE(start_job("sync-async-" + std::to_string(vertex), 1'000'000, "100ms", job));
  ASSERT_TRUE(wait_while_running(job, [&] { return job.cp->checkpoint_stats().num_completed >= 1; }))
      << "the job ended before its first checkpoint";
  ASSERT_TRUE(job.cp->arm_failure(FailurePoint::kBetweenSyncAndAsyncSnapshot, vertex, 1, "focused test").is_ok());
  ASSERT_TRUE(wait_while_running(job, [&] { return job.cp->restarts() >= 1; })) << "the failure did not fire";
  auto fired = job.cp->injected_failures();
  ASSERT_EQ(fired.size(), 1u);
  const int64_t m = fired[0].checkpoint_id;
  // Right after the restart the aborted checkpoint is still in the (10 newest) history.
  auto stats = job.cp->checkpoint_stats();
  ASSERT_NO_FATAL_FAILURE(finish_and_verify(job));

  EXPECT_EQ(fired[0].point, FailurePoint::kBetweenSyncAndAsyncSnapshot);
  EXPECT_EQ(fired[0].vertex, vertex);
  EXPECT_EQ(fired[0].subtask, 1);
  auto recoveries = job.cp->recoveries();
  ASSERT_EQ(recoveries.size(), 1u);
  std::printf("vertex %d subtask 1 failed between the sync and async parts of checkpoint %lld; restored from %lld\n",
              vertex, static_cast<long long>(m), static_cast<long long>(recoveries[0].first));
  EXPECT_GE(recoveries[0].first, 1);  // a checkpoint had completed before the failure was armed
  EXPECT_LT(recoveries[0].first, m);
  bool seen = false;
  for (const auto& h : stats.history) {
    if (h.id.value() != m) continue;
    seen = true;
    EXPECT_EQ(h.status, coordinator::CheckpointStatus::kFailed);
    EXPECT_LT(h.num_acknowledged, h.num_tasks);
  }
  EXPECT_TRUE(seen) << "checkpoint " << m << " is not in the history";
  fs::remove_all(job.base);
}

TEST(FailurePoints, BetweenSyncAndAsyncSnapshotAtTheSourceTheCheckpointNeverCompletes) {
  between_sync_and_async(kSourceVertex);
}

TEST(FailurePoints, BetweenSyncAndAsyncSnapshotAtTheSinkTheCheckpointNeverCompletes) {
  between_sync_and_async(kKeyedSinkVertex);
}

// The sink pre-committed (its pending file exists) and fails before the barrier goes on: the checkpoint never
// completes, and the pending file does not become visible (the restored writer deletes it; after a failure in
// the first checkpoint the new attempt starts from scratch and replaces it).
void sink_precommit(bool after_a_checkpoint) {
  Job job;
  ASSERT_NO_FATAL_FAILURE(start_job(after_a_checkpoint ? "sink-precommit-later" : "sink-precommit-first",
                                    // Long enough that checkpoints follow the first one on a fast machine too.
                                    after_a_checkpoint ? 2'000'000 : 400'000, "100ms", job));
  if (after_a_checkpoint) {
    ASSERT_TRUE(wait_while_running(job, [&] { return job.cp->checkpoint_stats().num_completed >= 1; }))
        << "the job ended before its first checkpoint";
  }
  ASSERT_TRUE(job.cp->arm_failure(FailurePoint::kSink, kKeyedSinkVertex, 0, "focused test").is_ok());
  ASSERT_NO_FATAL_FAILURE(finish_and_verify(job));
  auto fired = job.cp->injected_failures();
  ASSERT_EQ(fired.size(), 1u);
  auto recoveries = job.cp->recoveries();
  ASSERT_EQ(recoveries.size(), 1u);
  std::printf("sink subtask 0 failed at its pre-commit for checkpoint %lld; restored from %lld\n",
              static_cast<long long>(fired[0].checkpoint_id), static_cast<long long>(recoveries[0].first));
  EXPECT_LT(recoveries[0].first, fired[0].checkpoint_id);
  if (after_a_checkpoint) {
    EXPECT_GE(recoveries[0].first, 1);
  }
  fs::remove_all(job.base);
}

TEST(FailurePoints, AtTheSinkPreCommitInTheFirstCheckpointNothingLingers) { sink_precommit(false); }

TEST(FailurePoints, AtTheSinkPreCommitTheRestoreAbortsTheLingeringTransaction) { sink_precommit(true); }

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// A task fails after a completed checkpoint; the attempt that restores it fails again while restoring (its operators
// hold the restored state, none is open); the next attempt restores the same checkpoint and the output is exactly
// once.
TEST(FailurePoints, DuringARestoreTheNextAttemptRestoresTheSameCheckpoint) {
  Job job;
  // The stream is held after 100 k events until both failures fired, so the job cannot end before them.
  auto gate = std::make_shared<nexmark::NexmarkEmitGate>();
  gate->limit.store(100'000);
  job.options.source.gate = gate;
  ASSERT_NO_FATAL_FAILURE(start_job("restore", 400'000, "100ms", job));
  ASSERT_TRUE(job.cp->arm_failure(FailurePoint::kRestore, kKeyedSinkVertex, 1, "focused test").is_ok());
  ASSERT_TRUE(wait_while_running(job, [&] { return job.cp->checkpoint_stats().num_completed >= 1; }))
      << "the job ended before a checkpoint completed";
  job.cp->fail_task(kSourceVertex, 0, "first failure");
  ASSERT_TRUE(wait_while_running(job, [&] { return job.cp->injected_failures().size() >= 2; }))
      << "the job ended before both failures fired";
  gate->open();
  ASSERT_NO_FATAL_FAILURE(finish_and_verify(job));

  auto fired = job.cp->injected_failures();
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0].point, FailurePoint::kTask);
  EXPECT_EQ(fired[1].point, FailurePoint::kRestore);
  EXPECT_EQ(fired[1].vertex, kKeyedSinkVertex);
  EXPECT_EQ(fired[1].subtask, 1);
  EXPECT_EQ(fired[1].attempt, 1);  // the attempt that restored
  auto recoveries = job.cp->recoveries();
  ASSERT_EQ(recoveries.size(), 2u);
  EXPECT_GE(recoveries[0].first, 1);
  EXPECT_EQ(recoveries[1].first, recoveries[0].first) << "the attempt after the failed restore restored another checkpoint";
}

}  // namespace
}  // namespace sluice
