// RocksDB native metrics in a job's metrics: enabled ones appear as gauges per keyed operator subtask and
// state (Flink's scope: <job>.<operator>.<subtask>.<state>, name rocksdb.<property>) with plausible values;
// disabled ones are absent; a bad memory setting fails the submission naming the keys.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "count_per_key.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

Configuration rocksdb_config() {
  Configuration c;
  EXPECT_TRUE(c.set_string("state.backend.type", "rocksdb").is_ok());
  EXPECT_TRUE(c.set_string("state.backend.rocksdb.localdir", ::testing::TempDir() + "sluice-native-metrics-it").is_ok());
  EXPECT_TRUE(c.set_string("state.backend.rocksdb.memory.fixed-per-tm", "24mb").is_ok());
  // RocksDB's own figures: every update reaches the memtables and the block cache has the whole budget.
  EXPECT_TRUE(c.set_string("state.backend.rocksdb.cache.enabled", "false").is_ok());
  return c;
}

TEST(RocksDBNativeMetrics, EnabledGaugesAppearPerSubtaskAndStateDisabledOnesDoNot) {
  Configuration c = rocksdb_config();
  ASSERT_TRUE(c.set_string("state.backend.rocksdb.metrics.block-cache-capacity", "true").is_ok());
  ASSERT_TRUE(c.set_string("state.backend.rocksdb.metrics.cur-size-all-mem-tables", "true").is_ok());
  StreamExecutionEnvironment env(c);
  env.set_parallelism(2);
  auto out = std::make_shared<CollectedRecords<int64_t>>();
  env.from_sequence(0, 19'999)
      .key_by([](const int64_t& x) { return x % 1000; })
      .process(it::RunningCount{})
      .sink_to(CollectSink<int64_t>(out));
  auto client = env.execute_async("native-metrics");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  JobExecutionResult r = (*client)->wait();
  ASSERT_EQ(r.status, JobStatus::kFinished) << r.error.to_string();
  EXPECT_EQ(out->snapshot().size(), 20'000u);

  // 24 MiB budget, write-buffer ratio 0.5: cache capacity (3 - 0.5) / 3 x 24 MiB = 20 MiB.
  std::map<std::string, double> capacity, memtables;
  int others = 0;
  int timer_gauges = 0;
  for (const MetricValue& m : (*client)->metrics().snapshot()) {
    if (m.name.rfind("rocksdb.", 0) != 0) continue;
    EXPECT_EQ(m.kind, MetricKind::kGauge);
    if (m.scope.find("._timer_state/") != std::string::npos) {  // the process function's timer column families
      ++timer_gauges;
      continue;
    }
    EXPECT_EQ(m.scope.substr(m.scope.size() - 6), ".count") << m.scope;  // the state's group
    if (m.name == "rocksdb.block-cache-capacity") capacity[m.scope] = m.value;
    else if (m.name == "rocksdb.cur-size-all-mem-tables") memtables[m.scope] = m.value;
    else ++others;
  }
  EXPECT_EQ(others, 0) << "only the enabled native metrics are exported";
  // Timer queues are column families too (event and processing time), published as Flink does: 2 x 2 x 2.
  EXPECT_EQ(timer_gauges, 8);
  ASSERT_EQ(capacity.size(), 2u) << "one per subtask";
  ASSERT_EQ(memtables.size(), 2u);
  for (const auto& [scope, v] : capacity) EXPECT_EQ(v, 20.0 * (1 << 20)) << scope;
  // Each subtask wrote ~10000 updates of ~1000 keys into its memtables (the values read when the job ended).
  for (const auto& [scope, v] : memtables) {
    EXPECT_GT(v, 10'000.0) << scope;
    EXPECT_LT(v, 24.0 * (1 << 20)) << scope;
  }
}

TEST(RocksDBNativeMetrics, NoneExportedByDefault) {
  StreamExecutionEnvironment env(rocksdb_config());
  auto out = std::make_shared<CollectedRecords<int64_t>>();
  env.from_sequence(0, 999).key_by([](const int64_t& x) { return x % 10; }).process(it::RunningCount{}).sink_to(
      CollectSink<int64_t>(out));
  auto client = env.execute_async("no-native-metrics");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  ASSERT_EQ((*client)->wait().status, JobStatus::kFinished);
  for (const MetricValue& m : (*client)->metrics().snapshot()) EXPECT_NE(m.name.rfind("rocksdb.", 0), 0u) << m.name;
}

TEST(RocksDBNativeMetrics, RatiosSummingToOneFailTheSubmission) {
  Configuration c = rocksdb_config();
  ASSERT_TRUE(c.set_string("state.backend.rocksdb.memory.write-buffer-ratio", "0.7").is_ok());
  ASSERT_TRUE(c.set_string("state.backend.rocksdb.memory.high-prio-pool-ratio", "0.3").is_ok());
  StreamExecutionEnvironment env(c);
  auto out = std::make_shared<CollectedRecords<int64_t>>();
  env.from_sequence(0, 9).key_by([](const int64_t& x) { return x; }).process(it::RunningCount{}).sink_to(
      CollectSink<int64_t>(out));
  auto client = env.execute_async("bad-ratios");
  ASSERT_FALSE(client.is_ok());
  EXPECT_NE(client.status().message().find("state.backend.rocksdb.memory.write-buffer-ratio"), std::string::npos)
      << client.status().to_string();
  EXPECT_NE(client.status().message().find("high-prio-pool-ratio"), std::string::npos);
}

}  // namespace
}  // namespace sluice
