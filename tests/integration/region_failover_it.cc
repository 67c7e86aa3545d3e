// Region failover on the MiniCluster (jobmanager.execution.failover-strategy: region, graph/pipelined_regions.h):
// a job of parallel pipelines (no key_by, rebalance or broadcast between them) has one pipelined region per
// pipeline, and a task's failure restarts only its own region from the latest completed checkpoint while the others
// keep running. Checked: which subtasks got a new attempt after each failure (the failed one's region only), that
// checkpoints go on completing afterwards, and that the committed output is exactly once, with the operator state
// restored consistently with the source position - under seeded failures at every point of a task's checkpoint
// cycle (SLUICE_REGION_FAILOVER_SEEDS, default "1,2"; the soak tier runs more). A rescale edge gives each producer
// subtask and its own consumers a region, restored with the edge's unaligned channel state. A job with a key_by has
// one region, and the full strategy restarts every task.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "checkpoint_it_util.h"
#include "region_failover_util.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using runtime::FailurePoint;
using it::attempts;
using it::check_exactly_once;
using it::count_and_commit;
using it::CountingMap;
using it::g_throttle_us;
using it::throttled;

cluster::MiniClusterConfig config(const std::string& base, FailoverStrategy strategy) {
  cluster::MiniClusterConfig mc;
  mc.checkpointing = true;
  mc.checkpoint_config.interval = 40ms;
  mc.storage = std::make_shared<checkpoint::FileSystemCheckpointStorage>(base + "/ck");
  mc.restart.type = RestartStrategyType::kFixedDelay;
  mc.restart.fixed_delay.attempts = 100;
  mc.restart.fixed_delay.delay_ms = 10;
  mc.failover_strategy = strategy;
  return mc;
}

// Parallel pipelines: numbers -> count (operator state) -> exactly-once part files, all chained: one vertex of
// parallelism 3, three regions.
void build_pipelines(StreamExecutionEnvironment& env, int64_t records, const std::string& out) {
  env.set_parallelism(3);
  auto numbers = env.from_generator(records, [](int64_t i) { return i; }, 0, "numbers");
  count_and_commit(numbers.uid("numbers"), CountingMap{}, out);
}

TEST(RegionFailover, OnlyTheFailedRegionRestartsAndTheOutputIsExactlyOnce) {
  constexpr int64_t kRecords = 60'000;
  // The generator's splits for parallelism 3 (floor(count * i / p)).
  const std::vector<int64_t> split_starts = {0, kRecords / 3, 2 * kRecords / 3};
  std::vector<FailurePoint> points = {FailurePoint::kTask, FailurePoint::kSource, FailurePoint::kSink,
                                      FailurePoint::kBetweenSyncAndAsyncSnapshot,
                                      FailurePoint::kBetweenCompletionAndCommit, FailurePoint::kAfterCommit};
  for (uint64_t seed : it::seeds_from_env("SLUICE_REGION_FAILOVER_SEEDS", "1,2")) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::string base = it::fresh_dir("region-failover-" + std::to_string(seed));
    g_throttle_us = 60;  // about 1.2 s per pipeline: the failures come while every pipeline runs
    StreamExecutionEnvironment env;
    build_pipelines(env, kRecords, base + "/out");
    auto submitted = it::submit(env, config(base, FailoverStrategy::kRegion), "pipelines");
    ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
    std::unique_ptr<JobClient> client = std::move(submitted).value();
    auto& cp = it::checkpointing(*client);
    ASSERT_TRUE(it::wait_deployed(*client));
    auto before = attempts(*client);
    ASSERT_EQ(before.size(), 3u);

    // Four different points per seed, in a seeded order, each in a seeded subtask.
    std::mt19937_64 rng(seed);
    std::shuffle(points.begin(), points.end(), rng);
    constexpr int kFailures = 4;
    for (int i = 0; i < kFailures; ++i) {
      const int64_t completed = cp.checkpoint_stats().num_completed;
      ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= completed + 2; }))
          << "checkpoints stopped completing after failure " << i;
      const FailurePoint point = points[static_cast<size_t>(i)];
      const int32_t subtask = static_cast<int32_t>(rng() % 3);
      SCOPED_TRACE(std::string("failure ") + std::to_string(i + 1) + " at " + runtime::failure_point_name(point) +
                   " of subtask " + std::to_string(subtask));
      ASSERT_TRUE(cp.arm_failure(point, 0, subtask, "region failover test").is_ok());
      ASSERT_TRUE(it::wait_for([&] { return cp.restarts() >= i + 1 && attempts(*client).size() == 3; }));
      ASSERT_EQ(cp.injected_failures().size(), static_cast<size_t>(i + 1));
      auto after = attempts(*client);
      for (int32_t s = 0; s < 3; ++s) {
        if (s == subtask) {
          EXPECT_EQ(after[std::make_pair(0, s)], cp.restarts()) << "the failed subtask's region runs the newest attempt";
        } else {
          EXPECT_EQ(after[std::make_pair(0, s)], before[std::make_pair(0, s)])
              << "subtask " << s << " of another region was restarted";
        }
      }
      before = after;
      EXPECT_EQ(client->status(), JobStatus::kRunning);
    }
    const int64_t completed = cp.checkpoint_stats().num_completed;
    ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= completed + 2; }))
        << "checkpoints stopped completing after the last failure";
    g_throttle_us = 0;
    JobExecutionResult result = client->wait();
    ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
    EXPECT_EQ(cp.restarts(), kFailures);
    for (const auto& [restored, ms] : cp.recoveries()) {
      std::printf("  region restored from checkpoint %lld in %lld ms\n", static_cast<long long>(restored),
                  static_cast<long long>(ms));
    }
    EXPECT_EQ(check_exactly_once(it::committed_lines(base + "/out"), kRecords, split_starts), "");
  }
}

// Two sources whose union feeds a map: a union is not chained, so each region holds network channels (source a
// subtask i and source b subtask i to map subtask i). A failure of map subtask 1 restarts both sources' subtask 1
// with it, and their channels; subtask 0's region runs on.
TEST(RegionFailover, ARegionWithNetworkChannelsRestartsWithThem) {
  constexpr int64_t kPerSource = 40'000;
  const std::string base = it::fresh_dir("region-failover-union");
  g_throttle_us = 60;  // in the sources' chains: little in flight, so aligned barriers pass quickly
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto a = env.from_generator(kPerSource, [](int64_t i) { return i; }, 0, "a").uid("a").map(throttled).uid("slow-a");
  auto b = env.from_generator(kPerSource, [](int64_t i) { return kPerSource + i; }, 0, "b")
               .uid("b")
               .map(throttled)
               .uid("slow-b");
  count_and_commit(a.union_(b), CountingMap(false), base + "/out");
  auto submitted = it::submit(env, config(base, FailoverStrategy::kRegion), "union");
  ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);
  ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 2; }));
  const auto before = attempts(*client);
  ASSERT_EQ(before.size(), 6u);  // a, b and the map, two subtasks each
  ASSERT_TRUE(cp.arm_failure(FailurePoint::kSink, 2, 1, "region failover test").is_ok());
  ASSERT_TRUE(it::wait_for([&] { return cp.restarts() >= 1 && attempts(*client).size() == 6; }));
  const auto after = attempts(*client);
  for (int32_t v = 0; v < 3; ++v) {
    EXPECT_EQ(after.at(std::make_pair(v, 0)), before.at(std::make_pair(v, 0)))
        << "vertex " << v << " subtask 0 is in the other region";
    EXPECT_EQ(after.at(std::make_pair(v, 1)), 1) << "vertex " << v << " subtask 1 is in the failed region";
  }
  const int64_t completed = cp.checkpoint_stats().num_completed;
  ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= completed + 2; }));
  g_throttle_us = 0;
  JobExecutionResult result = client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  // The counts are per map subtask over two interleaved sources: only exactly-once is checked.
  EXPECT_EQ(check_exactly_once(it::committed_lines(base + "/out"), 2 * kPerSource, {}), "");
}

// A rescale edge is pointwise (graph/edge_topology.h): numbers (2) -> rescale -> count (4) has the regions {numbers 0,
// count 0, count 1} and {numbers 1, count 2, count 3}. With unaligned checkpoints under back-pressure the rescale
// edge holds channel state, which the failed region restores with its tasks while the other region runs on.
TEST(RegionFailover, ARescaleEdgeMakesARegionOfEachProducerAndItsOwnConsumers) {
  constexpr int64_t kRecords = 60'000;
  const std::string base = it::fresh_dir("region-failover-rescale");
  g_throttle_us = 40;  // in count: the rescale edge's queues fill, so unaligned barriers overtake data
  StreamExecutionEnvironment env;
  env.set_parallelism(4);
  auto numbers = env.from_generator(kRecords, [](int64_t i) { return i; }, 0, "numbers");
  numbers.uid("numbers").set_parallelism(2);
  count_and_commit(numbers.rescale(), CountingMap{}, base + "/out");
  cluster::MiniClusterConfig mc = config(base, FailoverStrategy::kRegion);
  mc.unaligned.enabled = true;
  mc.network.buffer_size_bytes = 1024;
  mc.network.max_buffers_per_channel = 4;
  auto submitted = it::submit(env, mc, "rescale");
  ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);
  ASSERT_TRUE(it::wait_for([&] {
    const auto stats = cp.checkpoint_stats();
    return stats.num_completed >= 2 && stats.latest_completed && stats.latest_completed->persisted_data_bytes > 0;
  })) << "no completed checkpoint with in-flight data";
  const auto before = attempts(*client);
  ASSERT_EQ(before.size(), 6u);  // numbers: 2 subtasks, count -> sink: 4
  ASSERT_TRUE(cp.arm_failure(FailurePoint::kSink, 1, 3, "region failover test").is_ok());
  ASSERT_TRUE(it::wait_for([&] { return cp.restarts() >= 1 && attempts(*client).size() == 6; }));
  const auto after = attempts(*client);
  for (auto [v, s] : std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {1, 0}, {1, 1}}) {
    EXPECT_EQ(after.at({v, s}), before.at({v, s})) << "vertex " << v << " subtask " << s << " is in the other region";
  }
  for (auto [v, s] : std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {1, 2}, {1, 3}}) {
    EXPECT_EQ(after.at({v, s}), 1) << "vertex " << v << " subtask " << s << " is in the failed region";
  }
  g_throttle_us = 0;
  JobExecutionResult result = client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  // The counts are per count subtask over the records its producer round-robins to it: only exactly-once is checked.
  EXPECT_EQ(check_exactly_once(it::committed_lines(base + "/out"), kRecords, {}), "");
}

// What the region strategy does not apply to: the full strategy, and a job whose key_by makes one region.
TEST(RegionFailover, TheFullStrategyAndAKeyedJobRestartEveryTask) {
  for (bool keyed : {false, true}) {
    SCOPED_TRACE(keyed ? "a keyed job, region strategy" : "parallel pipelines, full strategy");
    const std::string base = it::fresh_dir(keyed ? "region-failover-keyed" : "region-failover-full");
    g_throttle_us = 60;
    StreamExecutionEnvironment env;
    if (keyed) {
      env.set_parallelism(3);
      env.from_generator(60'000, [](int64_t i) { return i; }, 0, "numbers")
          .uid("numbers")
          .map(throttled)
          .uid("slow")
          .key_by([](const int64_t& v) { return v % 7; })
          .reduce([](const int64_t& x, const int64_t& y) { return x + y; })
          .uid("sum")
          .sink_to(DiscardingSink<int64_t>())
          .uid("discard");
    } else {
      build_pipelines(env, 60'000, base + "/out");
    }
    auto submitted =
        it::submit(env, config(base, keyed ? FailoverStrategy::kRegion : FailoverStrategy::kFull), "every-task");
    ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
    std::unique_ptr<JobClient> client = std::move(submitted).value();
    auto& cp = it::checkpointing(*client);
    ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 1; }));
    const size_t subtasks = attempts(*client).size();
    ASSERT_TRUE(cp.arm_failure(FailurePoint::kTask, 0, 1, "full failover test").is_ok());
    ASSERT_TRUE(it::wait_for([&] { return cp.restarts() >= 1 && attempts(*client).size() == subtasks; }));
    for (const auto& [where, attempt] : attempts(*client)) {
      EXPECT_EQ(attempt, 1) << "vertex " << where.first << " subtask " << where.second << " was not restarted";
    }
    g_throttle_us = 0;
    JobExecutionResult result = client->wait();
    ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
    if (!keyed) {
      EXPECT_EQ(check_exactly_once(it::committed_lines(base + "/out"), 60'000, {0, 20'000, 40'000}), "");
    }
  }
}

}  // namespace
}  // namespace sluice
