// Exactly-once under failures: the main job with checkpoints, tasks failed at seeded random points, and the
// committed output checked against the single-threaded oracle (each auction's counts 1..n exactly once,
// final values equal). Seeds come from SLUICE_FAILOVER_SEEDS (default "1,2,3"; the soak tier runs 20);
// SLUICE_FAILOVER_STATE_BACKEND sets state.backend.type (failover_rocksdb_it runs the suite on RocksDB).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <sstream>
#include <thread>

#include "../../examples/per_auction/per_auction_job.h"
#include "../../tools/sluice/verify.h"
#include "cluster/mini_cluster.h"

namespace sluice {
namespace {

std::vector<uint64_t> seeds() {
  const char* env = std::getenv("SLUICE_FAILOVER_SEEDS");
  std::string text = env ? env : "1,2,3";
  std::vector<uint64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stoull(item));
  return out;
}

void run_with_failures(uint64_t seed, int32_t parallelism, int32_t failures) {
  std::printf("failover seed %llu, parallelism %d, %d failures\n", static_cast<unsigned long long>(seed), parallelism, failures);
  std::string base = ::testing::TempDir() + "failover-" + std::to_string(seed);
  std::filesystem::remove_all(base);
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "50ms").is_ok());
  ASSERT_TRUE(config.set_string("execution.checkpointing.dir", base + "/ck").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.type", "fixed-delay").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.fixed-delay.attempts", "100").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.fixed-delay.delay", "10ms").is_ok());
  if (const char* backend = std::getenv("SLUICE_FAILOVER_STATE_BACKEND")) {  // failover_rocksdb_it
    ASSERT_TRUE(config.set_string("state.backend.type", backend).is_ok());
  }
  StreamExecutionEnvironment env(config);
  env.set_parallelism(parallelism);
  per_auction::JobOptions opt;
  opt.source.generator.max_events = 600'000;
  opt.source.generator.seed = seed;
  opt.source.num_splits = 4;
  opt.output_dir = base + "/out";
  per_auction::build(env, opt);
  auto client = env.execute_async("failover");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  ASSERT_NE(cp, nullptr);

  std::mt19937_64 rng(seed);
  for (int32_t i = 0; i < failures; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + static_cast<int64_t>(rng() % 80)));
    if (is_globally_terminal((*client)->status())) break;
    cp->fail_task(static_cast<int32_t>(rng() % 2), static_cast<int32_t>(rng() % static_cast<uint64_t>(parallelism)),
                  "injected failure " + std::to_string(i + 1));
  }
  auto result = (*client)->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  auto recoveries = cp->recoveries();
  std::printf("  restarts %d, restored from:", cp->restarts());
  for (auto [id, ms] : recoveries) std::printf(" %lld", static_cast<long long>(id));
  std::printf("\n");

  auto oracle = nexmark::compute_per_auction_oracle(opt.source.generator, opt.source.generator.max_events);
  auto report = cli::verify_per_auction_output(opt.output_dir, oracle);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->missing, 0) << "seed " << seed;
  EXPECT_EQ(report->duplicates, 0) << "seed " << seed;
  EXPECT_EQ(report->mismatches(), 0) << "seed " << seed << ": "
                                     << (report->first_mismatches.empty() ? "" : report->first_mismatches[0]);
  // Nothing uncommitted is left visible, and the finished job removed its checkpoints.
  for (const auto& e : std::filesystem::directory_iterator(opt.output_dir)) {
    EXPECT_EQ(e.path().filename().string().rfind(".part-", 0), std::string::npos) << e.path();
  }
  std::filesystem::remove_all(base);
}

TEST(Failover, ExactlyOnceOutputUnderSeededTaskFailures) {
  for (uint64_t seed : seeds()) run_with_failures(seed, 2, 3);
}

TEST(Failover, ExactlyOnceAtParallelismThree) { run_with_failures(seeds().front() + 100, 3, 2); }

}  // namespace
}  // namespace sluice
