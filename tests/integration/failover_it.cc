// Exactly-once under failures: the main job with checkpoints, failures injected at seeded random points of the
// stream in the five failure classes of runtime/fault_injection.h (source, keyed operator, sink pre-commit,
// between the sync and async parts of a snapshot, between a checkpoint's completion and the sink's commit), and
// the committed output checked against the single-threaded oracle (each auction's counts 1..n exactly once,
// final values equal) after every run. Each seed injects every class once, in a seeded order, at seeded shares
// of the source events, into seeded subtasks. Seeds come from SLUICE_FAILOVER_SEEDS (default "1,2,3"; the soak
// tier runs 20).
// SLUICE_FAILOVER_STATE_BACKEND sets state.backend.type (failover_rocksdb_it runs the suite on RocksDB);
// SLUICE_FAILOVER_CONFIG adds settings, "key=value" separated by ',' (failover_rocksdb_cache_it).
// SLUICE_FAILOVER_INCREMENTAL sets execution.checkpointing.incremental (failover_rocksdb_incremental_it).
// With execution.checkpointing.mode AT_LEAST_ONCE (failover_at_least_once_it) the output check is "no losses":
// nothing missing, duplicates allowed (and counted in the log).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "../../examples/per_auction/per_auction_job.h"
#include "../../tools/sluice/verify.h"
#include "cluster/mini_cluster.h"
#include "sluice/config/options.h"
#include "sluice/metrics/metric_names.h"

namespace sluice {
namespace {

using runtime::FailurePoint;

std::vector<uint64_t> seeds() {
  const char* env = std::getenv("SLUICE_FAILOVER_SEEDS");
  std::string text = env ? env : "1,2,3";
  std::vector<uint64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stoull(item));
  return out;
}

// Records the sources emitted so far, replays after a restore included.
int64_t source_events(const MetricRegistry& metrics) {
  double total = 0;
  for (const auto& m : metrics.snapshot())
    if (m.name == metric_names::kNumRecordsOut && m.scope.rfind("failover.bids.", 0) == 0) total += m.value;
  return static_cast<int64_t>(total);
}

struct RunOutcome {
  std::vector<runtime::InjectedFailure> fired;
  std::vector<std::pair<int64_t, int64_t>> recoveries;  // (restored checkpoint id, recovery ms)
};

RunOutcome run_with_failures(uint64_t seed, int32_t parallelism, int32_t failures) {
  RunOutcome outcome;
  constexpr int64_t kEvents = 600'000;
  std::printf("failover seed %llu, parallelism %d, %d failures\n", static_cast<unsigned long long>(seed), parallelism, failures);
  // The pid keeps concurrent runs of this test on one machine (other builds, sanitizer tiers) apart.
  std::string base = ::testing::TempDir() + "failover-" + std::to_string(::getpid()) + "-" + std::to_string(seed);
  std::filesystem::remove_all(base);
  Configuration config;
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", "50ms").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", base + "/ck").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.type", "fixed-delay").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.fixed-delay.attempts", "100").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.fixed-delay.delay", "10ms").is_ok());
  if (const char* incremental = std::getenv("SLUICE_FAILOVER_INCREMENTAL")) {  // failover_rocksdb_incremental_it
    EXPECT_TRUE(config.set_string("execution.checkpointing.incremental", incremental).is_ok());
  }
  if (const char* backend = std::getenv("SLUICE_FAILOVER_STATE_BACKEND")) {  // failover_rocksdb_it
    EXPECT_TRUE(config.set_string("state.backend.type", backend).is_ok());
  }
  if (const char* extra = std::getenv("SLUICE_FAILOVER_CONFIG")) {
    std::string all = extra;
    for (size_t start = 0; start < all.size();) {
      size_t end = all.find(',', start);
      if (end == std::string::npos) end = all.size();
      const std::string kv = all.substr(start, end - start);
      const size_t eq = kv.find('=');
      EXPECT_NE(eq, std::string::npos) << "SLUICE_FAILOVER_CONFIG: expected key=value, got '" << kv << "'";
      if (eq != std::string::npos) {
        Status st = config.set_string(kv.substr(0, eq), kv.substr(eq + 1));
        EXPECT_TRUE(st.is_ok()) << st.to_string();
      }
      start = end + 1;
    }
  }
  const bool at_least_once = config.get(options::kCheckpointingMode) == CheckpointingMode::kAtLeastOnce;
  StreamExecutionEnvironment env(config);
  env.set_parallelism(parallelism);
  per_auction::JobOptions opt;
  opt.source.generator.max_events = kEvents;
  opt.source.generator.seed = seed;
  opt.source.num_splits = 4;
  opt.output_dir = base + "/out";
  per_auction::build(env, opt);
  auto client = env.execute_async("failover");
  if (!client.is_ok()) {
    ADD_FAILURE() << client.status().to_string();
    return outcome;
  }
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  if (cp == nullptr) {
    ADD_FAILURE() << "not a checkpointing job client";
    return outcome;
  }

  // The plan: a seeded order of the classes (every class once per 5 failures), each armed when the sources
  // have emitted a seeded share of the stream, and only after the previous one fired and the job recovered.
  std::mt19937_64 rng(seed);
  std::vector<FailurePoint> classes;
  while (static_cast<int32_t>(classes.size()) < failures) {
    std::vector<FailurePoint> round(std::begin(runtime::kFailureClasses), std::end(runtime::kFailureClasses));
    std::shuffle(round.begin(), round.end(), rng);
    classes.insert(classes.end(), round.begin(), round.end());
  }
  std::vector<int64_t> thresholds;
  for (int32_t i = 0; i < failures; ++i) thresholds.push_back(static_cast<int64_t>((0.1 + 0.7 * static_cast<double>(rng() % 1000) / 1000.0) * kEvents));
  std::sort(thresholds.begin(), thresholds.end());
  auto running = [&] { return !is_globally_terminal((*client)->status()); };
  for (int32_t i = 0; i < failures && running(); ++i) {
    while (running() && source_events((*client)->metrics()) < thresholds[static_cast<size_t>(i)]) {
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    FailurePoint point = classes[static_cast<size_t>(i)];
    // Vertex 0 is the source chain, vertex 1 the keyed operator chained with the sink. -1: the vertex the point
    // belongs to (any subtask of it, for the source: one that still produces records).
    int32_t vertex = point == FailurePoint::kBetweenSyncAndAsyncSnapshot ? static_cast<int32_t>(rng() % 2) : -1;
    int32_t subtask = point == FailurePoint::kSource ? -1 : static_cast<int32_t>(rng() % static_cast<uint64_t>(parallelism));
    Status armed = cp->arm_failure(point, vertex, subtask, "failure " + std::to_string(i + 1) + " of seed " + std::to_string(seed));
    EXPECT_TRUE(armed.is_ok()) << armed.to_string();
    while (running() && static_cast<int32_t>(cp->injected_failures().size()) <= i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    while (running() && cp->restarts() <= i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto result = (*client)->wait();
  EXPECT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  {
    // Unaligned checkpoints without an alignment timeout: every checkpoint is unaligned (the final one included).
    const std::string extra = std::getenv("SLUICE_FAILOVER_CONFIG") ? std::getenv("SLUICE_FAILOVER_CONFIG") : "";
    int32_t unaligned = 0, completed = 0;
    uint64_t persisted = 0;
    for (const auto& e : cp->checkpoint_stats().history) {
      if (e.status != coordinator::CheckpointStatus::kCompleted) continue;
      ++completed;
      unaligned += e.unaligned ? 1 : 0;
      persisted += e.persisted_data_bytes;
    }
    std::printf("  %d of the last %d completed checkpoints were unaligned (%llu bytes of in-flight data)\n", unaligned,
                completed, static_cast<unsigned long long>(persisted));
    if (extra.find("unaligned.enabled=true") != std::string::npos &&
        extra.find("aligned-checkpoint-timeout") == std::string::npos) {
      EXPECT_EQ(unaligned, completed) << "seed " << seed;
      EXPECT_GT(completed, 0);
    }
  }
  outcome.fired = cp->injected_failures();
  outcome.recoveries = cp->recoveries();
  EXPECT_EQ(static_cast<int32_t>(outcome.fired.size()), failures) << "seed " << seed << ": an armed failure did not fire";
  for (size_t i = 0; i < outcome.fired.size(); ++i) {
    const auto& f = outcome.fired[i];
    std::printf("  failure %zu [%s] vertex %d subtask %d, attempt %d", i + 1, runtime::failure_point_name(f.point),
                f.vertex, f.subtask, f.attempt);
    if (f.checkpoint_id >= 0) std::printf(", checkpoint %lld", static_cast<long long>(f.checkpoint_id));
    if (i < outcome.recoveries.size()) {
      std::printf(" -> restored from checkpoint %lld", static_cast<long long>(outcome.recoveries[i].first));
    }
    std::printf("\n");
  }
  // Each failure caused one recovery. The checkpoint a snapshot-point failure interrupted never completed;
  // the one whose commit was interrupted had (its _metadata was durable): the restore starts from it or later.
  if (outcome.recoveries.size() == outcome.fired.size()) {
    for (size_t i = 0; i < outcome.fired.size(); ++i) {
      const auto& f = outcome.fired[i];
      int64_t restored = outcome.recoveries[i].first;
      if (f.point == FailurePoint::kBetweenSyncAndAsyncSnapshot || f.point == FailurePoint::kSink) {
        EXPECT_LT(restored, f.checkpoint_id) << "seed " << seed << ", failure " << i + 1;
      } else if (f.point == FailurePoint::kBetweenCompletionAndCommit) {
        EXPECT_GE(restored, f.checkpoint_id) << "seed " << seed << ", failure " << i + 1;
      }
    }
  } else {
    ADD_FAILURE() << "seed " << seed << ": " << outcome.fired.size() << " failures but " << outcome.recoveries.size()
                  << " recoveries";
  }

  auto oracle = nexmark::compute_per_auction_oracle(opt.source.generator, opt.source.generator.max_events);
  // At-least-once: checked bid by bid too, so a loss hidden behind a duplicate still counts as missing.
  std::optional<cli::AuctionBidPrices> prices;
  if (at_least_once) prices = cli::compute_auction_bid_prices(opt.source.generator, opt.source.generator.max_events);
  auto report = cli::verify_per_auction_output(opt.output_dir, oracle, prices ? &*prices : nullptr);
  EXPECT_TRUE(report.is_ok()) << report.status().to_string();
  if (report.is_ok() && at_least_once) {
    std::printf("  at-least-once: %lld duplicates, %lld replayed finals\n", static_cast<long long>(report->duplicates),
                static_cast<long long>(report->wrong_finals));
    EXPECT_EQ(report->missing, 0) << "seed " << seed << ": "
                                  << (report->first_mismatches.empty() ? "" : report->first_mismatches[0]);
    EXPECT_EQ(report->malformed, 0) << "seed " << seed;
    EXPECT_TRUE(report->at_least_once());
  } else if (report.is_ok()) {
    EXPECT_EQ(report->missing, 0) << "seed " << seed;
    EXPECT_EQ(report->duplicates, 0) << "seed " << seed;
    EXPECT_EQ(report->mismatches(), 0) << "seed " << seed << ": "
                                       << (report->first_mismatches.empty() ? "" : report->first_mismatches[0]);
  }
  // Nothing uncommitted is left visible, and the finished job removed its checkpoints.
  for (const auto& e : std::filesystem::directory_iterator(opt.output_dir)) {
    EXPECT_EQ(e.path().filename().string().rfind(".part-", 0), std::string::npos) << e.path();
  }
  // Not a file of any checkpoint is left: shared/ files of incremental checkpoints included (released by the
  // SharedStateRegistry when the job deleted its checkpoints), and no upload of an aborted one.
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(base + "/ck", ec)) {
    EXPECT_FALSE(e.is_regular_file()) << "seed " << seed << ": left behind: " << e.path();
  }
  std::filesystem::remove_all(base);
  return outcome;
}

TEST(Failover, ExactlyOnceOutputUnderSeededFailuresOfEveryClass) {
  std::set<FailurePoint> hit;
  bool restored_from_checkpoint = false;
  for (uint64_t seed : seeds()) {
    RunOutcome o = run_with_failures(seed, 2, 5);
    for (const auto& f : o.fired) hit.insert(f.point);
    for (auto [id, ms] : o.recoveries) restored_from_checkpoint = restored_from_checkpoint || id > 0;
  }
  for (FailurePoint p : runtime::kFailureClasses) {
    EXPECT_TRUE(hit.count(p) == 1) << "failure class '" << runtime::failure_point_name(p) << "' was never hit";
  }
  EXPECT_TRUE(restored_from_checkpoint) << "no recovery restored from a checkpoint (id > 0)";
}

TEST(Failover, ExactlyOnceAtParallelismThree) { run_with_failures(seeds().front() + 100, 3, 3); }

}  // namespace
}  // namespace sluice
