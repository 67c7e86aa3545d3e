// The Kafka sink against the test broker. At-least-once: nothing lost across seeded failures. Exactly-once,
// checked by read_committed consumers: each record once after seeded failures (the Kafka source replaying), nothing
// visible before its checkpoint completed, failures right before and right after a commit, a transaction the
// broker aborted on its timeout while the job was down, and a zombie writer fenced by a restore. The marker topic:
// created when missing, used as it is when it exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string_view>
#include <thread>

#include <unistd.h>

#include "../kafka_markers.h"
#include "hooked_kafka_sink.h"
#include "kafka_test_util.h"
#include "sluice/connectors/kafka/kafka_sink.h"
#include "sluice/connectors/kafka/kafka_source.h"
#include "sluice/metrics/metric_registry.h"
#include "sluice/sluice.h"

namespace sluice::kafka {
namespace {

using namespace testutil;  // NOLINT: test helpers
using Values = std::vector<std::string>;

// Every value in every partition of `topic`, sorted.
// With read_committed, first waits for the markers of transactions already ended (the coordinator writes them after
// the commit returned); `open_transaction` says one is deliberately left open, so there is nothing to wait for.
Values read_topic(const std::string& topic, int partitions, const char* isolation, bool open_transaction = false) {
  Values all;
  for (int p = 0; p < partitions; ++p) {
    if (!open_transaction && std::string_view(isolation) == "read_committed") {
      EXPECT_TRUE(await_stable(topic, p)) << "a transaction on partition " << p << " is still open";
    }
    ReadResult r = read_partition(topic, p, isolation);
    all.insert(all.end(), r.values.begin(), r.values.end());
  }
  std::sort(all.begin(), all.end());
  return all;
}

Values numbers(int n) {
  Values v;
  for (int i = 0; i < n; ++i) v.push_back(std::to_string(i));
  std::sort(v.begin(), v.end());
  return v;
}

// A topic with records "0".."n-1" spread over `partitions` partitions.
std::string input_topic(int n, int partitions) {
  const std::string topic = unique_name("sink-in");
  create_topic(topic, partitions);
  KafkaPtr p = plain_producer();
  for (int i = 0; i < n; ++i) produce(p.get(), topic, i % partitions, std::to_string(i));
  EXPECT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  return topic;
}

// A fresh, empty output topic.
std::string output_topic(const std::string& name, int partitions) {
  const std::string topic = unique_name(name);
  create_topic(topic, partitions);
  return topic;
}

KafkaSinkOptions sink_options(const std::string& topic, DeliveryGuarantee guarantee) {
  KafkaSinkOptions o;
  o.bootstrap_servers = bootstrap();
  o.topic = topic;
  o.delivery_guarantee = guarantee;
  o.transactional_id_prefix = unique_name("txn");
  o.request_timeout_ms = 30000;
  return o;
}

struct JobDirs {
  std::string root;
  JobDirs() : root(::testing::TempDir() + unique_name("kafka-sink")) { std::filesystem::remove_all(root); }
  ~JobDirs() { std::filesystem::remove_all(root); }
};

Configuration checkpointed(const JobDirs& dirs, const std::string& interval = "50ms") {
  Configuration config;
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", interval).is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", dirs.root + "/ck").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.type", "fixed-delay").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.fixed-delay.attempts", "10").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.fixed-delay.delay", "20ms").is_ok());
  return config;
}

// Failures of a map function at seeded record counts (replays included), each once. Counters are static: a
// job's functions are copied into its tasks.
struct SeededFailures {
  static inline std::atomic<int> seen{0};
  static inline std::atomic<int> fired{0};
  static inline std::vector<int> at;
  static inline int pause_ms = 3;  // every 50 records
  static void arm(uint64_t seed, int failures, int records, int pause = 3) {
    pause_ms = pause;
    std::mt19937_64 rng(seed);
    at.clear();
    for (int i = 0; i < failures; ++i) at.push_back(static_cast<int>(rng() % static_cast<uint64_t>(records)) + 1);
    std::sort(at.begin(), at.end());
    seen = 0;
    fired = 0;
  }
  static std::string pass(const std::string& v) {
    const int n = ++seen;
    if (n % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));  // spread over checkpoints
    int f = fired.load();
    if (f < static_cast<int>(at.size()) && n >= at[static_cast<size_t>(f)] && fired.compare_exchange_strong(f, f + 1)) {
      throw std::runtime_error("injected failure " + std::to_string(f + 1));
    }
    return v;
  }
};

// Kafka source (bounded) -> map with seeded failures -> Kafka sink.
JobExecutionResult run_pipeline(const std::string& in, const JobDirs& dirs, KafkaSinkOptions sink, int parallelism,
                                const std::string& interval = "50ms") {
  StreamExecutionEnvironment env(checkpointed(dirs, interval));
  env.set_parallelism(parallelism);
  KafkaSourceOptions so;
  so.bootstrap_servers = bootstrap();
  so.topics = {in};
  so.boundedness = Boundedness::kBounded;
  env.from_source(make_kafka_source<std::string>(so, ValueStringDeserializer{}), "kafka-in")
      .map([](const std::string& v) { return SeededFailures::pass(v); })
      .sink_to(make_kafka_sink<std::string>(std::move(sink), ValueStringSerializer{}));
  auto r = env.execute("kafka-sink-pipeline");
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? *r : JobExecutionResult{};
}

TEST(KafkaSinkJob, AtLeastOnceLosesNothingAcrossSeededFailures) {
  constexpr int kRecords = 3000;
  const uint64_t seed = 11;
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::string in = input_topic(kRecords, 3);
  const std::string out = output_topic("sink-alo", 2);
  SeededFailures::arm(seed, 2, kRecords);
  JobDirs dirs;
  auto r = run_pipeline(in, dirs, sink_options(out, DeliveryGuarantee::kAtLeastOnce), 2);
  ASSERT_EQ(r.status, JobStatus::kFinished) << r.error.to_string();
  EXPECT_EQ(SeededFailures::fired.load(), 2);
  Values got = read_topic(out, 2, "read_uncommitted");
  std::set<std::string> distinct(got.begin(), got.end());
  const Values want = numbers(kRecords);
  EXPECT_EQ(Values(distinct.begin(), distinct.end()), want) << "a record was lost";
  EXPECT_GE(got.size(), want.size());
}

// A record the broker cannot take (a partition the topic does not have) fails the task with the delivery error.
TEST(KafkaSinkJob, ADeliveryErrorFailsTheTask) {
  const std::string out = output_topic("sink-delivery-error", 1);
  StreamExecutionEnvironment env;
  env.set_parallelism(1);
  env.from_sequence(1, 10)
      .map([](int64_t v) { return std::to_string(v); })
      .sink_to(make_kafka_sink<std::string>(sink_options(out, DeliveryGuarantee::kAtLeastOnce),
                                            [](const std::string& v, KafkaProducerRecord& r) {
                                              r.value = v;
                                              r.partition = v == "7" ? 5 : 0;
                                            }));
  auto r = env.execute("kafka-sink-delivery-error");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->status, JobStatus::kFailed);
  EXPECT_NE(r->error.to_string().find("delivery failed"), std::string::npos) << r->error.to_string();
  EXPECT_NE(r->error.to_string().find("partition 5"), std::string::npos) << r->error.to_string();
}

TEST(KafkaSinkJob, ExactlyOnceAfterSeededFailuresEachRecordOnceForReadCommitted) {
  constexpr int kRecords = 3000;
  int seeds_with_aborted_records = 0;
  for (uint64_t seed : {3, 4}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::string in = input_topic(kRecords, 3);
    const std::string out = output_topic("sink-eos", 2);
    SeededFailures::arm(seed, 3, kRecords);
    JobDirs dirs;
    auto r = run_pipeline(in, dirs, sink_options(out, DeliveryGuarantee::kExactlyOnce), 2);
    ASSERT_EQ(r.status, JobStatus::kFinished) << r.error.to_string();
    EXPECT_EQ(SeededFailures::fired.load(), 3);
    EXPECT_EQ(read_topic(out, 2, "read_committed"), numbers(kRecords));
    // Aborted records left behind (read_uncommitted sees more than read_committed) show that the failures hit
    // open transactions. Not every run leaves some: a killed producer may drop its queued records before they
    // reach the broker, so this is required of the seeds together, not of each.
    if (read_topic(out, 2, "read_uncommitted").size() > static_cast<size_t>(kRecords)) ++seeds_with_aborted_records;
  }
  EXPECT_GT(seeds_with_aborted_records, 0) << "no seed left aborted records: the failures hit no open transaction";
}

JobExecutionResult run_hooked(const std::string& in, const JobDirs& dirs, KafkaSinkOptions sink, CommitHook hook,
                              const std::string& interval = "50ms") {
  StreamExecutionEnvironment env(checkpointed(dirs, interval));
  env.set_parallelism(1);
  KafkaSourceOptions so;
  so.bootstrap_servers = bootstrap();
  so.topics = {in};
  so.boundedness = Boundedness::kBounded;
  env.from_source(make_kafka_source<std::string>(so, ValueStringDeserializer{}), "kafka-in")
      .map([](const std::string& v) { return SeededFailures::pass(v); })
      .sink_to(HookedSink(std::move(sink), std::move(hook)));
  auto r = env.execute("kafka-sink-hooked");
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? *r : JobExecutionResult{};
}

bool has_records(const std::vector<KafkaCommittable>& cs) {
  for (const auto& c : cs)
    if (!c.records.empty()) return true;
  return false;
}

// Before each of the first commits, none of the records being committed is visible to read_committed; after it,
// all are.
TEST(KafkaSinkJob, ExactlyOnceRecordsBecomeVisibleOnlyWhenTheirCheckpointCompletes) {
  constexpr int kRecords = 2000;
  const std::string in = input_topic(kRecords, 1);
  const std::string out = output_topic("sink-visible", 1);
  SeededFailures::arm(1, 0, kRecords, 25);  // about 1 s of input: several checkpoints
  auto checked = std::make_shared<std::atomic<int>>(0);
  JobDirs dirs;
  auto r = run_hooked(in, dirs, sink_options(out, DeliveryGuarantee::kExactlyOnce),
                      [checked, out](const std::vector<KafkaCommittable>& cs, Committer<KafkaCommittable>& inner, int32_t) {
                        if (*checked >= 3 || !has_records(cs)) {
                          inner.commit(cs);
                          return;
                        }
                        ++*checked;
                        const Values before = read_topic(out, 1, "read_committed", /*open_transaction=*/true);
                        const std::set<std::string> visible(before.begin(), before.end());
                        for (const auto& c : cs)
                          for (const auto& rec : c.records)
                            EXPECT_EQ(visible.count(rec.value), 0U) << rec.value << " visible before its commit";
                        inner.commit(cs);
                        // The marker lands after the commit returned (KIP-98), while the writer already has the
                        // next transaction open: read until the records show, for at most 10 s.
                        std::set<std::string> now;
                        auto all_visible = [&] {
                          for (const auto& c : cs)
                            for (const auto& rec : c.records)
                              if (now.count(rec.value) == 0) return false;
                          return true;
                        };
                        for (int attempt = 0; attempt < 100; ++attempt) {
                          const Values after = read_topic(out, 1, "read_committed", /*open_transaction=*/true);
                          now = std::set<std::string>(after.begin(), after.end());
                          if (all_visible()) break;
                          std::this_thread::sleep_for(std::chrono::milliseconds(100));
                        }
                        for (const auto& c : cs)
                          for (const auto& rec : c.records)
                            EXPECT_EQ(now.count(rec.value), 1U) << rec.value << " not visible after its commit";
                      },
                      "200ms");
  ASSERT_EQ(r.status, JobStatus::kFinished) << r.error.to_string();
  EXPECT_EQ(checked->load(), 3);
  EXPECT_EQ(read_topic(out, 1, "read_committed"), numbers(kRecords));
}

// The task fails once right before a commit (checkpoint complete, transaction pre-committed: the restore finds
// its marker absent and writes it again) and once right after one (marker present: nothing written again).
TEST(KafkaSinkJob, ExactlyOnceAcrossFailuresBeforeAndAfterACommit) {
  constexpr int kRecords = 1500;
  const std::string in = input_topic(kRecords, 2);
  const std::string out = output_topic("sink-commit-fail", 2);
  SeededFailures::arm(1, 0, kRecords);
  auto commits = std::make_shared<std::atomic<int>>(0);
  auto failures = std::make_shared<std::atomic<int>>(0);
  JobDirs dirs;
  auto r = run_hooked(in, dirs, sink_options(out, DeliveryGuarantee::kExactlyOnce),
                      [commits, failures](const std::vector<KafkaCommittable>& cs, Committer<KafkaCommittable>& inner, int32_t) {
                        const int n = ++*commits;
                        if (n == 3 && has_records(cs)) {
                          ++*failures;
                          throw std::runtime_error("injected failure before the commit");
                        }
                        if (n == 3) --*commits;  // wait for a commit with records
                        inner.commit(cs);
                        if (n == 6) {
                          ++*failures;
                          throw std::runtime_error("injected failure after the commit");
                        }
                      });
  ASSERT_EQ(r.status, JobStatus::kFinished) << r.error.to_string();
  EXPECT_EQ(failures->load(), 2);
  EXPECT_EQ(read_topic(out, 2, "read_committed"), numbers(kRecords));
}

// The job is down longer than transaction.timeout.ms between a checkpoint's completion and its commit: the broker
// aborts the pre-committed transaction; the restore finds its marker absent and writes it again.
TEST(KafkaSinkJob, ExactlyOnceAfterTheBrokerAbortedATransactionOnTimeout) {
  constexpr int kRecords = 800;
  const std::string in = input_topic(kRecords, 1);
  const std::string out = output_topic("sink-timeout", 1);
  SeededFailures::arm(1, 0, kRecords);
  KafkaSinkOptions o = sink_options(out, DeliveryGuarantee::kExactlyOnce);
  o.transaction_timeout_ms = 2000;
  auto done = std::make_shared<std::atomic<bool>>(false);
  auto aborted = std::make_shared<std::atomic<int64_t>>(0);
  JobDirs dirs;
  auto r = run_hooked(in, dirs, o,
                      [done, aborted](const std::vector<KafkaCommittable>& cs, Committer<KafkaCommittable>& inner, int32_t) {
                        if (!*done && has_records(cs)) {
                          *done = true;
                          for (const auto& c : cs) *aborted += static_cast<int64_t>(c.records.size());
                          // "Down": the broker aborts the transaction within about a second of its timeout.
                          std::this_thread::sleep_for(std::chrono::milliseconds(4500));
                          throw std::runtime_error("injected: the job was down past transaction.timeout.ms");
                        }
                        inner.commit(cs);
                      });
  ASSERT_EQ(r.status, JobStatus::kFinished) << r.error.to_string();
  ASSERT_GT(aborted->load(), 0);
  EXPECT_EQ(read_topic(out, 1, "read_committed"), numbers(kRecords));
  // The aborted copy is still in the log (invisible): the records were written twice, read once.
  EXPECT_GE(read_topic(out, 1, "read_uncommitted").size(), static_cast<size_t>(kRecords + aborted->load()));
}

// The marker topic: created with the requested partition count when missing (the metadata lookup before it does
// not auto-create it with the broker's default of 1), used as it is when it exists (no CreateTopics: a user
// without the CREATE permission, or librdkafka's mock cluster, can pre-create it).
TEST(KafkaSinkMarkers, AMissingMarkerTopicIsCreatedAndAnExistingOneUsedAsItIs) {
  const KafkaSinkOptions o = sink_options(output_topic("sink-markers-unused", 1), DeliveryGuarantee::kExactlyOnce);
  const std::string missing = unique_name("markers-missing");
  EXPECT_EQ(internal::ensure_topic(o, missing, 3, "marker topic"), 3);
  KafkaPtr admin = make_client(RD_KAFKA_PRODUCER, {});
  rd_kafka_topic_t* t = rd_kafka_topic_new(admin.get(), missing.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  ASSERT_EQ(rd_kafka_metadata(admin.get(), 0, t, &md, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(md->topic_cnt, 1);
  EXPECT_EQ(md->topics[0].partition_cnt, 3);
  rd_kafka_metadata_destroy(md);
  rd_kafka_topic_destroy(t);

  const std::string existing = output_topic("markers-existing", 2);
  EXPECT_EQ(internal::ensure_topic(o, existing, 5, "marker topic"), 2);
}

// A TwoPhaseCommitContext outside a job (for driving a writer and committer by hand).
struct HandContext final : TwoPhaseCommitContext {
  int32_t subtask_index() const override { return 0; }
  int32_t parallelism() const override { return 1; }
  int32_t attempt_number() const override { return attempt; }
  MetricGroup& metric_group() override { return registry.root(); }
  const sluice::Clock& clock() const override { return clock_; }
  std::string job_id() const override { return "0123456789abcdef0123456789abcdef"; }
  std::string job_name() const override { return "kafka-sink-test"; }
  std::string operator_uid() const override { return "kafka-sink"; }
  bool is_restored() const override { return restored; }
  const std::vector<std::vector<uint8_t>>& restored_committables_bytes() const override { return restored_bytes; }
  int64_t next_checkpoint_id() const override { return next_checkpoint; }
  int32_t attempt = 0;
  bool restored = false;
  std::vector<std::vector<uint8_t>> restored_bytes;
  int64_t next_checkpoint = 1;
  MetricRegistry registry;
  SystemClock clock_;
};

// A writer pre-commits checkpoint 2's transaction and is cut off (it stays alive: a zombie). A new attempt restores
// checkpoint 2: it fences the zombie's id, finds the marker absent, writes the records again and commits. The
// zombie can commit neither that transaction nor a next one (whose id falls in the fenced window).
TEST(KafkaSinkZombie, ARestoreFencesTheOldWriter) {
  const std::string out = output_topic("sink-zombie", 1);
  KafkaSinkOptions o = sink_options(out, DeliveryGuarantee::kExactlyOnce);
  auto sink = make_kafka_sink<std::string>(o, ValueStringSerializer{});

  HandContext old_ctx;
  old_ctx.next_checkpoint = 2;
  auto zombie = sink.create_writer(old_ctx);
  auto zombie_committer = sink.create_subtask_committer(old_ctx);
  for (int i = 0; i < 10; ++i) zombie->write("r" + std::to_string(i));
  std::vector<KafkaCommittable> pre = zombie->prepare_commit();
  ASSERT_EQ(pre.size(), 1U);
  EXPECT_EQ(pre[0].records.size(), 10U);
  old_ctx.next_checkpoint = 3;
  zombie->write("zombie-next");  // the next transaction, id <prefix>-0-3
  EXPECT_TRUE(read_topic(out, 1, "read_committed", /*open_transaction=*/true).empty());

  HandContext new_ctx;
  new_ctx.attempt = 1;
  new_ctx.restored = true;
  new_ctx.next_checkpoint = 3;
  new_ctx.restored_bytes = {serialize_bytes(pre[0])};
  // The new attempt, as another process would: its own sink object (no producer of the old one).
  auto restored_sink = make_kafka_sink<std::string>(o, ValueStringSerializer{});
  auto committer = restored_sink.create_subtask_committer(new_ctx);
  committer->commit(pre);  // recovery: fence, marker absent, rewrite, commit
  Values want;
  for (int i = 0; i < 10; ++i) want.push_back("r" + std::to_string(i));
  std::sort(want.begin(), want.end());
  EXPECT_EQ(read_topic(out, 1, "read_committed"), want);

  // The zombie's own commit of the same transaction fails: its producer was fenced.
  EXPECT_THROW(zombie_committer->commit(pre), std::runtime_error);
  // Its next transaction cannot commit either.
  old_ctx.next_checkpoint = 4;
  bool next_failed = false;
  try {
    auto more = zombie->prepare_commit();
    zombie_committer->commit(more);
  } catch (const std::runtime_error&) {
    next_failed = true;
  }
  EXPECT_TRUE(next_failed) << "the zombie's next transaction committed";
  EXPECT_EQ(read_topic(out, 1, "read_committed"), want);
  // Committing the restored transaction again (a second restore from the same checkpoint) finds its marker.
  auto again = make_kafka_sink<std::string>(o, ValueStringSerializer{}).create_subtask_committer(new_ctx);
  again->commit(pre);
  EXPECT_EQ(read_topic(out, 1, "read_committed"), want);
  zombie->close();
}

}  // namespace
}  // namespace sluice::kafka
