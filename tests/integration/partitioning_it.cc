// Partitionings and chaining controls on the in-process MiniCluster, in STREAMING and BATCH mode: each record is
// tagged with the subtask that sent it and the subtask that received it, and the pairs must be the ones the
// partitioning allows - rescale (pointwise: 2 -> 4 gives 0 -> {0, 1}, 1 -> {2, 3}; 4 -> 2 gives {0, 1} -> 0,
// {2, 3} -> 1, round robin within), shuffle (every subtask, about evenly), global (subtask 0 only) and
// partition_custom (the function's index; an index out of range fails the job naming it). disable_chaining and
// start_new_chain are checked by the threads the operators run on (one thread per task).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "sluice/sluice.h"

namespace sluice {
namespace {

struct Tagged {
  int64_t value = 0;
  int64_t producer = -1;  // subtask of the operator before the exchange
  int64_t consumer = -1;  // subtask of the operator after it
  bool operator<(const Tagged& o) const { return value < o.value; }
  SLUICE_FIELDS(Tagged, value, producer, consumer)
};

struct TagProducer final : RichFunction {
  Tagged operator()(int64_t v) const { return Tagged{v, runtime_context().subtask_index(), -1}; }
};
struct TagConsumer final : RichFunction {
  Tagged operator()(Tagged t) const {
    t.consumer = runtime_context().subtask_index();
    return t;
  }
};

constexpr int64_t kRecords = 20'000;

class PartitioningIT : public ::testing::TestWithParam<const char*> {
 protected:
  Configuration config() const {
    Configuration c;
    EXPECT_TRUE(c.apply_dynamic_property(std::string("execution.runtime-mode=") + GetParam()).is_ok());
    EXPECT_TRUE(c.apply_dynamic_property("io.tmp.dirs=" + ::testing::TempDir()).is_ok());
    return c;
  }

  // numbers (1) -> rebalance -> "tag producer" (`producers`) -> `exchange` -> "tag consumer" (`consumers`) -> sink.
  // Returns every record with its two subtasks; expects the job to finish and every record exactly once.
  template <class Exchange>
  std::vector<Tagged> run(int32_t producers, int32_t consumers, Exchange exchange) {
    StreamExecutionEnvironment env(config());
    auto out = std::make_shared<CollectedRecords<Tagged>>();
    auto tagged = env.from_sequence(0, kRecords - 1).set_parallelism(1).rebalance().map(TagProducer{});
    tagged.name("tag producer").set_parallelism(producers);
    exchange(tagged)
        .map(TagConsumer{})
        .name("tag consumer")
        .set_parallelism(consumers)
        .sink_to(CollectSink<Tagged>(out))
        .set_parallelism(consumers);
    auto r = env.execute("partitioning");
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    if (!r.is_ok()) return {};
    EXPECT_EQ(r->status, JobStatus::kFinished) << r->error.to_string();
    std::vector<Tagged> got = out->snapshot();
    std::set<int64_t> values;
    for (const Tagged& t : got) {
      EXPECT_GE(t.producer, 0);
      EXPECT_LT(t.producer, producers);
      EXPECT_GE(t.consumer, 0);
      EXPECT_LT(t.consumer, consumers);
      values.insert(t.value);
    }
    EXPECT_EQ(got.size(), static_cast<size_t>(kRecords));
    EXPECT_EQ(values.size(), static_cast<size_t>(kRecords)) << "every record exactly once";
    return got;
  }
};

// Counts per (producer, consumer).
std::map<std::pair<int64_t, int64_t>, int64_t> pairs_of(const std::vector<Tagged>& records) {
  std::map<std::pair<int64_t, int64_t>, int64_t> n;
  for (const Tagged& t : records) ++n[{t.producer, t.consumer}];
  return n;
}

TEST_P(PartitioningIT, RescaleFansOutEachProducerToItsOwnConsumersRoundRobin) {
  const auto n = pairs_of(run(2, 4, [](DataStream<Tagged> s) { return s.rescale(); }));
  for (const auto& [pair, count] : n) {
    EXPECT_EQ(pair.second / 2, pair.first) << "producer " << pair.first << " reached consumer " << pair.second;
  }
  // Round robin from its first consumer: each producer's two consumers got equal shares, the first maybe one more.
  for (int64_t p = 0; p < 2; ++p) {
    const int64_t first = n.count({p, 2 * p}) ? n.at({p, 2 * p}) : 0;
    const int64_t second = n.count({p, 2 * p + 1}) ? n.at({p, 2 * p + 1}) : 0;
    EXPECT_GT(first, 0) << "producer " << p;
    EXPECT_TRUE(first == second || first == second + 1) << "producer " << p << ": " << first << " and " << second;
  }
}

TEST_P(PartitioningIT, RescaleFansInEachPairOfProducersToOneConsumer) {
  const auto n = pairs_of(run(4, 2, [](DataStream<Tagged> s) { return s.rescale(); }));
  std::set<int64_t> producers;
  for (const auto& [pair, count] : n) {
    EXPECT_EQ(pair.second, pair.first / 2) << "producer " << pair.first << " reached consumer " << pair.second;
    producers.insert(pair.first);
  }
  EXPECT_EQ(producers.size(), 4u) << "the rebalance before feeds every producer";
}

TEST_P(PartitioningIT, ShuffleReachesEverySubtaskAboutEvenly) {
  std::map<int64_t, int64_t> per_consumer;
  for (const Tagged& t : run(2, 4, [](DataStream<Tagged> s) { return s.shuffle(); })) ++per_consumer[t.consumer];
  ASSERT_EQ(per_consumer.size(), 4u);
  for (const auto& [c, count] : per_consumer) EXPECT_NEAR(count, kRecords / 4, kRecords / 20) << "consumer " << c;
}

TEST_P(PartitioningIT, GlobalSendsEveryRecordToTheFirstSubtask) {
  for (const Tagged& t : run(2, 3, [](DataStream<Tagged> s) { return s.global(); })) {
    ASSERT_EQ(t.consumer, 0) << "record " << t.value << " from producer " << t.producer;
  }
}

TEST_P(PartitioningIT, PartitionCustomSendsEachRecordWhereTheFunctionSays) {
  const auto partition = [](DataStream<Tagged> s) {
    return s.partition_custom([](const int64_t& key, int32_t n) { return static_cast<int32_t>((key / 10) % n); },
                              [](const Tagged& t) { return t.value; });
  };
  const std::vector<Tagged> got = run(2, 3, partition);
  for (const Tagged& t : got) ASSERT_EQ(t.consumer, (t.value / 10) % 3) << "record " << t.value;
}

TEST_P(PartitioningIT, APartitionIndexOutOfRangeFailsTheJobNamingTheOperatorAndTheIndex) {
  StreamExecutionEnvironment env(config());
  env.from_sequence(0, 999)
      .set_parallelism(1)
      .map(TagProducer{})
      .name("tag producer")
      .set_parallelism(1)
      .partition_custom([](const int64_t& key, int32_t n) { return key == 500 ? n + 3 : 0; },
                        [](const Tagged& t) { return t.value; })
      .map(TagConsumer{})
      .name("tag consumer")
      .set_parallelism(4)
      .sink_to(DiscardingSink<Tagged>())
      .set_parallelism(4);
  auto r = env.execute("bad-partitioner");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->status, JobStatus::kFailed);
  const std::string error = r->error.to_string();
  EXPECT_EQ(r->error.code(), StatusCode::kInvalidArgument) << error;
  EXPECT_NE(error.find("returned partition 7 for 4 partitions"), std::string::npos) << error;
  EXPECT_NE(error.find("operator 'tag producer'"), std::string::npos) << error;
}

std::string mode_name(const ::testing::TestParamInfo<const char*>& param) { return param.param; }

INSTANTIATE_TEST_SUITE_P(Modes, PartitioningIT, ::testing::Values("STREAMING", "BATCH"), mode_name);

// The threads each operator ran on, by name.
std::mutex g_mu;
std::map<std::string, std::set<std::thread::id>> g_threads;

struct RecordThread final : RichFunction {
  explicit RecordThread(std::string l) : label(std::move(l)) {}
  std::string label;
  int64_t operator()(int64_t v) const {
    std::lock_guard lock(g_mu);
    g_threads[label].insert(std::this_thread::get_id());
    return v;
  }
};

TEST(ChainingIT, DisableChainingAndStartNewChainRunOperatorsInTheirOwnTasks) {
  g_threads.clear();
  StreamExecutionEnvironment env;
  env.set_parallelism(1);
  auto out = std::make_shared<CollectedRecords<int64_t>>();
  env.from_sequence(1, 5'000)
      .map(RecordThread("src-side")).name("src-side")
      .map(RecordThread("a")).name("a").disable_chaining()
      .map(RecordThread("b")).name("b").start_new_chain()
      .map(RecordThread("c")).name("c")
      .sink_to(CollectSink<int64_t>(out));
  auto r = env.execute("chaining");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->status, JobStatus::kFinished) << r->error.to_string();
  std::vector<int64_t> got = out->snapshot();
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got.size(), 5'000u);
  EXPECT_EQ(got.front(), 1);
  EXPECT_EQ(got.back(), 5'000);
  std::lock_guard lock(g_mu);
  for (const char* op : {"src-side", "a", "b", "c"}) {
    ASSERT_EQ(g_threads[op].size(), 1u) << op;
  }
  const auto thread = [](const char* op) { return *g_threads[op].begin(); };
  EXPECT_NE(thread("src-side"), thread("a")) << "a does not chain to its predecessor";
  EXPECT_NE(thread("a"), thread("b")) << "nor its successor to it";
  EXPECT_EQ(thread("b"), thread("c")) << "c chains to b, which started a new chain";
}

}  // namespace
}  // namespace sluice
