// The Kafka source against the test broker: the enumerator's offsets (earliest, latest, committed, timestamp,
// specific) and assignment, bounded reads that stop at the end offsets seen at start (also after transaction
// markers and aborted records), exact resumption from a split snapshot, and whole jobs (bounded, and with a
// failure and restore: keyed counts stay exactly-once).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "kafka_test_util.h"
#include "sluice/connectors/kafka/kafka_source.h"
#include "sluice/sluice.h"

namespace sluice::kafka {
namespace {

using namespace testutil;  // NOLINT: test helpers
using Values = std::vector<std::string>;

struct FakeEnumeratorContext final : SplitEnumeratorContext<KafkaPartitionSplit> {
  int32_t current_parallelism() const override { return parallelism; }
  void assign_split(KafkaPartitionSplit split, int32_t subtask) override { assigned.emplace_back(std::move(split), subtask); }
  void signal_no_more_splits(int32_t subtask) override { no_more.insert(subtask); }
  // Tests run the enumerator's periodic calls by hand (fire_async).
  void call_async(std::function<std::function<void()>()> work, int64_t, int64_t period_ms) override {
    async.push_back(std::move(work));
    periods.push_back(period_ms);
  }
  void fire_async() {
    for (auto& work : async) {
      if (auto then = work()) then();
    }
  }
  // The split of `partition`, or a failure.
  KafkaPartitionSplit split(int32_t partition) const {
    for (const auto& [s, subtask] : assigned) {
      if (s.partition == partition) return s;
    }
    ADD_FAILURE() << "partition " << partition << " was not assigned";
    return {};
  }
  int32_t parallelism = 1;
  std::vector<std::pair<KafkaPartitionSplit, int32_t>> assigned;
  std::set<int32_t> no_more;
  std::vector<std::function<std::function<void()>()>> async;
  std::vector<int64_t> periods;
};

KafkaSourceOptions options_for(const std::string& topic) {
  KafkaSourceOptions o;
  o.bootstrap_servers = bootstrap();
  o.topics = {topic};
  o.request_timeout_ms = 20000;
  return o;
}

// Starts an enumerator for `options` and registers readers 0..parallelism-1.
FakeEnumeratorContext enumerate(const KafkaSourceOptions& options, int32_t parallelism = 1) {
  FakeEnumeratorContext ctx;
  ctx.parallelism = parallelism;
  auto e = detail::make_kafka_enumerator(ctx, options);
  e->start();
  for (int32_t s = 0; s < parallelism; ++s) e->add_reader(s);
  return ctx;
}

// Reads with `reader` until it has no active split or `want` records (-1: no limit) or 20 s passed.
Values drain(KafkaSplitReader& reader, int want = -1) {
  Values out;
  KafkaRecordView v;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline && (want < 0 || static_cast<int>(out.size()) < want)) {
    if (reader.next(v)) {
      out.emplace_back(v.value);
      continue;
    }
    if (reader.num_active_splits() == 0) break;
    reader.fetch();
    if (!reader.next(v)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    out.emplace_back(v.value);
  }
  return out;
}

// p0: t=1000,2000,3000 at offsets 0..2; p1: t=1000,2000 at 0..1 (no transactions).
std::string topic_with_timestamps() {
  const std::string topic = unique_name("ts");
  create_topic(topic, 2);
  KafkaPtr p = plain_producer();
  for (int i = 0; i < 3; ++i) produce(p.get(), topic, 0, "p0-" + std::to_string(i), 1000 * (i + 1));
  for (int i = 0; i < 2; ++i) produce(p.get(), topic, 1, "p1-" + std::to_string(i), 1000 * (i + 1));
  EXPECT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  return topic;
}

// Unbounded: the enumerator lists the partitions again every partition_discovery_interval_ms (fired by hand here);
// partitions added since start at offset 0 and go to their owners; the known partitions are part of the state, so a
// restored enumerator adds none twice. Bounded sources schedule no discovery.
TEST(KafkaSourceEnumerator, DiscoversPartitionsAddedLaterOnceAlsoAfterARestore) {
  const std::string topic = unique_name("discovery");
  create_topic(topic, 1);
  KafkaSourceOptions o = options_for(topic);
  o.partition_discovery_interval_ms = 1000;
  FakeEnumeratorContext ctx;
  ctx.parallelism = 2;
  auto e = detail::make_kafka_enumerator(ctx, o);
  e->start();
  e->add_reader(0);
  e->add_reader(1);
  ASSERT_EQ(ctx.periods, std::vector<int64_t>{1000});
  ASSERT_EQ(ctx.assigned.size(), 1U);
  ctx.fire_async();
  EXPECT_EQ(ctx.assigned.size(), 1U) << "nothing new yet";

  add_partitions(topic, 3);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (ctx.assigned.size() < 3 && std::chrono::steady_clock::now() < deadline) {  // metadata may lag a moment
    ctx.fire_async();
    if (ctx.assigned.size() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(ctx.assigned.size(), 3U);
  for (int32_t p : {1, 2}) {
    EXPECT_EQ(ctx.split(p).offset, 0);
    EXPECT_EQ(ctx.split(p).stopping_offset, kNoStoppingOffset);
    for (const auto& [s, subtask] : ctx.assigned) {
      if (s.partition == p) {
        EXPECT_EQ(subtask, kafka_split_owner(topic, p, 2));
      }
    }
  }
  ctx.fire_async();
  EXPECT_EQ(ctx.assigned.size(), 3U) << "a partition was added twice";

  FakeEnumeratorContext restored_ctx;
  restored_ctx.parallelism = 2;
  auto restored = detail::restore_kafka_enumerator(restored_ctx, o, e->snapshot_state(CheckpointId(1)));
  restored->start();
  restored->add_reader(0);
  restored->add_reader(1);
  restored_ctx.fire_async();
  EXPECT_TRUE(restored_ctx.assigned.empty()) << "a restored enumerator re-added known partitions";

  o.boundedness = Boundedness::kBounded;
  FakeEnumeratorContext bounded_ctx;
  detail::make_kafka_enumerator(bounded_ctx, o)->start();
  EXPECT_TRUE(bounded_ctx.periods.empty());
}

TEST(KafkaSourceEnumerator, ResolvesEveryStartingOffsetToAConcreteOne) {
  const std::string topic = topic_with_timestamps();
  KafkaSourceOptions o = options_for(topic);

  auto offsets = [&](OffsetsInitializer init) {
    o.starting_offsets = std::move(init);
    FakeEnumeratorContext ctx = enumerate(o);
    return std::make_pair(ctx.split(0).offset, ctx.split(1).offset);
  };
  EXPECT_EQ(offsets(OffsetsInitializer::earliest()), std::make_pair(int64_t{0}, int64_t{0}));
  EXPECT_EQ(offsets(OffsetsInitializer::latest()), std::make_pair(int64_t{3}, int64_t{2}));
  EXPECT_EQ(offsets(OffsetsInitializer::timestamp(2000)), std::make_pair(int64_t{1}, int64_t{1}));
  EXPECT_EQ(offsets(OffsetsInitializer::timestamp(2500)), std::make_pair(int64_t{2}, int64_t{2}));  // p1: none -> end
  EXPECT_EQ(offsets(OffsetsInitializer::specific({{{topic, 0}, 1}}, OffsetResetStrategy::kLatest)),
            std::make_pair(int64_t{1}, int64_t{2}));

  o.group_id = unique_name("group");
  commit_group_offset(o.group_id, topic, 0, 2);
  EXPECT_EQ(offsets(OffsetsInitializer::committed(OffsetResetStrategy::kEarliest)), std::make_pair(int64_t{2}, int64_t{0}));
  o.starting_offsets = OffsetsInitializer::committed(OffsetResetStrategy::kNone);
  FakeEnumeratorContext ctx;
  auto e = detail::make_kafka_enumerator(ctx, o);
  try {
    e->start();
    ADD_FAILURE() << "committed() without a commit for partition 1 and reset none started";
  } catch (const StatusError& err) {
    EXPECT_NE(std::string(err.what()).find("partition 1 of topic '" + topic + "'"), std::string::npos) << err.what();
  }
}

TEST(KafkaSourceEnumerator, AssignsEachPartitionToItsOwnerAndSignalsTheEndWhenBounded) {
  const std::string topic = unique_name("assign");
  create_topic(topic, 5);
  KafkaSourceOptions o = options_for(topic);
  FakeEnumeratorContext unbounded = enumerate(o, 3);
  ASSERT_EQ(unbounded.assigned.size(), 5U);
  for (const auto& [split, subtask] : unbounded.assigned) {
    EXPECT_EQ(subtask, kafka_split_owner(topic, split.partition, 3));
    EXPECT_EQ(split.stopping_offset, kNoStoppingOffset);
  }
  EXPECT_TRUE(unbounded.no_more.empty()) << "an unbounded source must not end its readers";

  o.boundedness = Boundedness::kBounded;
  FakeEnumeratorContext bounded = enumerate(o, 3);
  ASSERT_EQ(bounded.assigned.size(), 5U);
  for (const auto& [split, subtask] : bounded.assigned) EXPECT_EQ(split.stopping_offset, 0);  // empty partitions
  EXPECT_EQ(bounded.no_more, (std::set<int32_t>{0, 1, 2}));
}

TEST(KafkaSourceEnumerator, MissingTopicFailsTheStartNamingIt) {
  KafkaSourceOptions o = options_for(unique_name("missing"));
  FakeEnumeratorContext ctx;
  auto e = detail::make_kafka_enumerator(ctx, o);
  try {
    e->start();
    ADD_FAILURE() << "started on a missing topic";
  } catch (const StatusError& err) {
    EXPECT_EQ(err.status().code(), StatusCode::kNotFound) << err.what();
    EXPECT_NE(std::string(err.what()).find(o.topics[0]), std::string::npos) << err.what();
  }
}

TEST(KafkaSourceEnumerator, StateKeepsUnassignedSplitsAndARestoreNeedsNoBroker) {
  const std::string topic = topic_with_timestamps();
  KafkaSourceOptions o = options_for(topic);
  o.starting_offsets = OffsetsInitializer::latest();
  FakeEnumeratorContext first;
  first.parallelism = 2;
  auto e = detail::make_kafka_enumerator(first, o);
  e->start();
  const std::vector<uint8_t> state = e->snapshot_state(CheckpointId{1});

  o.bootstrap_servers = "127.0.0.1:1";  // nothing listens there: the restored enumerator looks nothing up
  FakeEnumeratorContext restored;
  restored.parallelism = 1;
  auto r = detail::restore_kafka_enumerator(restored, o, state);
  r->start();
  r->add_reader(0);
  ASSERT_EQ(restored.assigned.size(), 2U);
  EXPECT_EQ(restored.split(0).offset, 3);
  EXPECT_EQ(restored.split(1).offset, 2);
}

// Offsets: c1 0, c2 1, marker 2, a1 3, marker 4: the end offset seen at start is 5, and offsets 3 and 4 are an
// aborted record and a marker. A record committed after the start (offset 5, marker 6) is past the end.
std::string topic_ending_in_markers() {
  const std::string topic = unique_name("bounded");
  create_topic(topic, 1);
  KafkaPtr p = transactional_producer(unique_name("tid"));
  begin(p.get());
  produce(p.get(), topic, 0, "c1");
  produce(p.get(), topic, 0, "c2");
  commit(p.get());
  begin(p.get());
  produce(p.get(), topic, 0, "a1");
  EXPECT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  ErrorPtr e(rd_kafka_abort_transaction(p.get(), 30000));
  EXPECT_FALSE(e) << error_text(e);
  EXPECT_EQ(await_high_watermark(topic, 0, 5), 5) << "the abort marker did not land at offset 4";
  return topic;
}

void commit_one_more(const std::string& topic) {
  KafkaPtr p = transactional_producer(unique_name("tid"));
  begin(p.get());
  produce(p.get(), topic, 0, "late");
  commit(p.get());
}

TEST(KafkaSplitReader, BoundedSplitStopsAtTheEndSeenAtStartWhenTheLastOffsetsAreMarkers) {
  for (IsolationLevel isolation : {IsolationLevel::kReadCommitted, IsolationLevel::kReadUncommitted}) {
    SCOPED_TRACE(isolation == IsolationLevel::kReadCommitted ? "read_committed" : "read_uncommitted");
    const std::string topic = topic_ending_in_markers();
    KafkaSourceOptions o = options_for(topic);
    o.boundedness = Boundedness::kBounded;
    o.isolation = isolation;
    FakeEnumeratorContext ctx = enumerate(o);
    KafkaPartitionSplit split = ctx.split(0);
    EXPECT_EQ(split.offset, 0);
    EXPECT_EQ(split.stopping_offset, 5);
    commit_one_more(topic);  // after the start: not read

    KafkaSplitReader reader(o, 0);
    reader.add_splits({split});
    const Values got = drain(reader);
    EXPECT_EQ(got, isolation == IsolationLevel::kReadCommitted ? (Values{"c1", "c2"}) : (Values{"c1", "c2", "a1"}));
    EXPECT_EQ(reader.num_active_splits(), 0U) << "the split did not end at offset 5";
    EXPECT_EQ(reader.take_finished_splits(), (std::vector<std::string>{topic + "-0"}));
    // The ended split stays in snapshots, at its end, until a completed checkpoint held it (its final offset is
    // then committed back); after that it is gone.
    const std::vector<KafkaPartitionSplit> held = reader.snapshot();
    ASSERT_EQ(held.size(), 1U);
    EXPECT_GE(held[0].offset, 5);
    reader.checkpoint_complete(held);
    EXPECT_TRUE(reader.snapshot().empty());
  }
}

TEST(KafkaSplitReader, AnEmptyBoundedSplitEndsAtOnce) {
  KafkaSourceOptions o = options_for("unused");
  KafkaSplitReader reader(o, 0);
  reader.add_splits({KafkaPartitionSplit{"unused", 0, 7, 7}});
  EXPECT_EQ(reader.num_active_splits(), 0U);
  EXPECT_EQ(reader.take_finished_splits(), (std::vector<std::string>{"unused-0"}));
}

TEST(KafkaSplitReader, ResumesExactlyAtItsSnapshotOffset) {
  const std::string topic = unique_name("resume");
  create_topic(topic, 1);
  {
    KafkaPtr p = plain_producer();
    for (int i = 0; i < 10; ++i) produce(p.get(), topic, 0, "r" + std::to_string(i));
    ASSERT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  KafkaSourceOptions o = options_for(topic);  // unbounded
  std::vector<KafkaPartitionSplit> snapshot;
  {
    KafkaSplitReader reader(o, 0);
    reader.add_splits({KafkaPartitionSplit{topic, 0, 0, kNoStoppingOffset}});
    EXPECT_EQ(drain(reader, 4), (Values{"r0", "r1", "r2", "r3"}));
    snapshot = reader.snapshot();
  }
  ASSERT_EQ(snapshot.size(), 1U);
  EXPECT_EQ(snapshot[0].offset, 4);
  KafkaSplitReader restored(o, 0);
  restored.add_splits(snapshot);
  EXPECT_EQ(drain(restored, 6), (Values{"r4", "r5", "r6", "r7", "r8", "r9"}));
  EXPECT_EQ(restored.snapshot()[0].offset, 10);
}

// Three partitions of transactional data, with aborted transactions and trailing markers: a bounded job at
// parallelism 1 and 2 reads every committed record once and finishes.
TEST(KafkaSourceJob, BoundedJobReadsEveryCommittedRecordAndFinishes) {
  const std::string topic = unique_name("job");
  create_topic(topic, 3);
  Values expected;
  {
    KafkaPtr p = transactional_producer(unique_name("tid"));
    for (int t = 0; t < 4; ++t) {
      begin(p.get());
      for (int i = 0; i < 30; ++i) {
        std::string v = "t" + std::to_string(t) + "-" + std::to_string(i);
        produce(p.get(), topic, i % 3, v);
        if (t != 2) expected.push_back(v);
      }
      if (t == 2) {
        ASSERT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
        ErrorPtr e(rd_kafka_abort_transaction(p.get(), 30000));
        ASSERT_FALSE(e) << error_text(e);
      } else {
        commit(p.get());
      }
    }
  }
  // Per partition: 4 x 10 records and 4 markers. The bounded source stops at the end it sees at start.
  for (int32_t partition = 0; partition < 3; ++partition) {
    ASSERT_EQ(await_high_watermark(topic, partition, 44, "read_committed"), 44) << "partition " << partition;
  }
  std::sort(expected.begin(), expected.end());
  for (int32_t parallelism : {1, 2}) {
    KafkaSourceOptions o = options_for(topic);
    o.boundedness = Boundedness::kBounded;
    StreamExecutionEnvironment env;
    env.set_parallelism(parallelism);
    auto out = std::make_shared<CollectedRecords<std::string>>();
    env.from_source(make_kafka_source<std::string>(o, ValueStringDeserializer{}), "kafka")
        .sink_to(CollectSink<std::string>(out));
    auto r = env.execute("kafka-bounded");
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(r->status, JobStatus::kFinished) << r->error.to_string();
    Values got = out->snapshot();
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, expected) << "parallelism " << parallelism;
  }
}

// One reader owns two partitions far apart in event time (p0 at 100 s, p1 at 1 s). Each partition has its own
// watermark generator, so the subtask's watermark is the slower partition's and no record of p1 arrives behind
// it: event-time windows count every record.
TEST(KafkaSourceJob, PerPartitionWatermarksKeepASlowPartitionsRecordsOnTime) {
  constexpr int kPerPartition = 400;
  const std::string topic = unique_name("event-time");
  create_topic(topic, 2);
  {
    KafkaPtr p = plain_producer();
    for (int i = 0; i < kPerPartition; ++i) produce(p.get(), topic, 0, "fast", 100000 + i);
    ASSERT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
    // From 1 s: librdkafka takes a timestamp of 0 as "now".
    for (int i = 0; i < kPerPartition; ++i) produce(p.get(), topic, 1, "slow", 1000 + i);
    ASSERT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  StreamExecutionEnvironment env;
  env.set_parallelism(1);
  KafkaSourceOptions o = options_for(topic);
  o.boundedness = Boundedness::kBounded;
  using Count = std::pair<int64_t, int64_t>;  // (window start, records)
  auto out = std::make_shared<CollectedRecords<Count>>();
  // Punctuated: a watermark right after each record, so that one generator for both partitions would make p1's
  // records late as soon as a record of p0 went before them (no dependence on the periodic emit's timing).
  struct EveryRecord final : WatermarkGenerator<KafkaRecord> {
    void on_event(const KafkaRecord&, int64_t timestamp_ms, WatermarkOutput& out) override {
      out.emit_watermark(timestamp_ms - 1);
    }
    void on_periodic_emit(WatermarkOutput&) override {}
  };
  auto strategy = WatermarkStrategy<KafkaRecord>::for_generator(
      [](const WatermarkGeneratorContext&) { return std::make_unique<EveryRecord>(); });
  env.from_source(make_kafka_source(o), strategy, "kafka")
      .map([](const KafkaRecord& r) { return Count{r.timestamp_ms / 100 * 100, 1}; })
      .key_by([](const Count& c) { return c.first; })
      .window(TumblingEventTimeWindows::of(100))
      .reduce([](const Count& a, const Count& b) { return Count{a.first, a.second + b.second}; })
      .sink_to(CollectSink<Count>(out));
  auto r = env.execute("kafka-event-time");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->status, JobStatus::kFinished) << r->error.to_string();
  std::map<int64_t, int64_t> per_window;
  for (const auto& [start, n] : out->snapshot()) per_window[start] += n;
  const std::map<int64_t, int64_t> expected{{1000, 100}, {1100, 100}, {1200, 100}, {1300, 100},
                                            {100000, 100}, {100100, 100}, {100200, 100}, {100300, 100}};
  EXPECT_EQ(per_window, expected);
}

// A job that fails once, mid-stream, after checkpoints: the source replays from its checkpointed offsets and
// the keyed counts (restored from the same checkpoint) end exactly at the number of records per key.
TEST(KafkaSourceJob, ReplayAfterAFailureKeepsKeyedCountsExactlyOnce) {
  constexpr int kRecords = 1500;
  constexpr int kKeys = 5;
  const std::string topic = unique_name("replay");
  create_topic(topic, 3);
  {
    KafkaPtr p = plain_producer();
    for (int i = 0; i < kRecords; ++i) produce(p.get(), topic, i % 3, std::to_string(i));
    ASSERT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  const std::string dir = ::testing::TempDir() + "kafka-replay-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "20ms").is_ok());
  ASSERT_TRUE(config.set_string("execution.checkpointing.dir", dir + "/ck").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.type", "fixed-delay").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.fixed-delay.attempts", "3").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.fixed-delay.delay", "10ms").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  KafkaSourceOptions o = options_for(topic);
  o.boundedness = Boundedness::kBounded;

  static std::atomic<int> seen{0};
  static std::atomic<bool> failed{false};
  seen = 0;
  failed = false;
  using Count = std::pair<int64_t, int64_t>;  // (key, count)
  auto out = std::make_shared<CollectedRecords<Count>>();
  env.from_source(make_kafka_source<std::string>(o, ValueStringDeserializer{}), "kafka")
      .map([](const std::string& v) {
        const int n = ++seen;
        if (n % 20 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // spread over checkpoints
        if (n == kRecords / 2 && !failed.exchange(true)) throw std::runtime_error("injected failure");
        return Count{std::stoll(v) % kKeys, 1};
      })
      .key_by([](const Count& c) { return c.first; })
      .reduce([](const Count& a, const Count& b) { return Count{a.first, a.second + b.second}; })
      .sink_to(CollectSink<Count>(out));
  auto r = env.execute("kafka-replay");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->status, JobStatus::kFinished) << r->error.to_string();
  EXPECT_TRUE(failed.load());
  EXPECT_GT(seen.load(), kRecords) << "the failure should make the source replay records";
  std::map<int64_t, int64_t> final_count;
  for (const auto& [key, count] : out->snapshot()) final_count[key] = std::max(final_count[key], count);
  ASSERT_EQ(final_count.size(), static_cast<size_t>(kKeys));
  for (const auto& [key, count] : final_count) EXPECT_EQ(count, kRecords / kKeys) << "key " << key;
  std::filesystem::remove_all(dir);
}

// A topic of 2 partitions with `per_partition` records each ("0", "1", ... alternating).
std::string two_partition_topic(const std::string& name, int per_partition) {
  const std::string topic = unique_name(name);
  create_topic(topic, 2);
  KafkaPtr p = plain_producer();
  for (int i = 0; i < 2 * per_partition; ++i) produce(p.get(), topic, i % 2, std::to_string(i));
  EXPECT_EQ(rd_kafka_flush(p.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
  return topic;
}

// Polls the group's committed offsets of partitions 0 and 1 of `topic` until they equal `want` or 30 s passed
// (commits are asynchronous); returns the last ones read.
std::vector<int64_t> wait_for_committed(const std::string& group, const std::string& topic, const std::vector<int64_t>& want) {
  KafkaPtr c = make_client(RD_KAFKA_CONSUMER, {{"group.id", group}, {"enable.auto.commit", "false"}});
  std::vector<int64_t> committed;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (true) {
    rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(2);
    rd_kafka_topic_partition_list_add(l, topic.c_str(), 0);
    rd_kafka_topic_partition_list_add(l, topic.c_str(), 1);
    EXPECT_EQ(rd_kafka_committed(c.get(), l, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
    committed = {l->elems[0].offset, l->elems[1].offset};
    rd_kafka_topic_partition_list_destroy(l);
    if (committed == want || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  rd_kafka_consumer_close(c.get());
  return committed;
}

// With checkpointing, each completed checkpoint commits the readers' offsets to the consumer group (monitoring
// only): while an unbounded job runs, the group's committed offsets reach the partitions' ends.
TEST(KafkaSourceJob, CommitsCheckpointedOffsetsToTheGroupWhenCheckpointsComplete) {
  constexpr int kPerPartition = 300;
  const std::string topic = two_partition_topic("commit-back", kPerPartition);
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "50ms").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  KafkaSourceOptions o = options_for(topic);
  o.group_id = unique_name("monitoring");
  auto out = std::make_shared<CollectedRecords<std::string>>();
  env.from_source(make_kafka_source<std::string>(o, ValueStringDeserializer{}), "kafka")
      .sink_to(CollectSink<std::string>(out));
  auto job = env.execute_async("kafka-commit-back");
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  const std::vector<int64_t> committed = wait_for_committed(o.group_id, topic, {kPerPartition, kPerPartition});
  (*job)->cancel();
  EXPECT_EQ((*job)->wait().status, JobStatus::kCanceled);
  EXPECT_EQ(committed, (std::vector<int64_t>{kPerPartition, kPerPartition}));
  EXPECT_EQ(out->snapshot().size(), static_cast<size_t>(2 * kPerPartition));
}

// A bounded job commits the final offsets too: the checkpoint taken after a partition ended (at the latest the final
// one, once the input is over) still holds the partition at its end offset, and its completion commits it.
TEST(KafkaSourceJob, BoundedJobCommitsTheFinalOffsetsWhenItsLastCheckpointCompletes) {
  constexpr int kPerPartition = 200;
  const std::string topic = two_partition_topic("commit-back-bounded", kPerPartition);
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "1h").is_ok());  // only the final checkpoint
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  KafkaSourceOptions o = options_for(topic);
  o.group_id = unique_name("monitoring-bounded");
  o.boundedness = Boundedness::kBounded;
  auto out = std::make_shared<CollectedRecords<std::string>>();
  env.from_source(make_kafka_source<std::string>(o, ValueStringDeserializer{}), "kafka")
      .sink_to(CollectSink<std::string>(out));
  auto result = env.execute("kafka-commit-back-bounded");
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  ASSERT_EQ(result->status, JobStatus::kFinished) << result->error.to_string();
  EXPECT_EQ(out->snapshot().size(), static_cast<size_t>(2 * kPerPartition));
  EXPECT_EQ(wait_for_committed(o.group_id, topic, {kPerPartition, kPerPartition}),
            (std::vector<int64_t>{kPerPartition, kPerPartition}));
}

}  // namespace
}  // namespace sluice::kafka
