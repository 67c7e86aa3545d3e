// Whole jobs on the in-process MiniCluster, at parallelism 1..4, compared with single-threaded oracles.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "sluice/sluice.h"

namespace sluice {
namespace {

template <class T>
std::vector<T> sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

JobExecutionResult run(StreamExecutionEnvironment& env) {
  auto r = env.execute("test");
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  if (!r.is_ok()) return {};
  EXPECT_EQ(r->status, JobStatus::kFinished) << r->error.to_string();
  return std::move(r).value();
}

class ParallelismTest : public ::testing::TestWithParam<int32_t> {};

TEST_P(ParallelismTest, MapFilterFlatMapMatchOracle) {
  StreamExecutionEnvironment env;
  env.set_parallelism(GetParam());
  auto out = std::make_shared<CollectedRecords<int64_t>>();
  env.from_sequence(1, 20'000)
      .map([](int64_t x) { return x * 3; })
      .filter([](const int64_t& x) { return x % 2 == 0; })
      .flat_map([](const int64_t& x, Collector<int64_t>& c) {
        c.collect(x);
        c.collect(-x);
      })
      .rebalance()
      .sink_to(CollectSink<int64_t>(out));
  run(env);
  std::vector<int64_t> expected;
  for (int64_t x = 1; x <= 20'000; ++x) {
    if ((x * 3) % 2 == 0) {
      expected.push_back(x * 3);
      expected.push_back(-x * 3);
    }
  }
  EXPECT_EQ(sorted(out->snapshot()), sorted(expected));
}

struct Keyed {
  int64_t key = 0;
  int64_t value = 0;
  bool operator<(const Keyed& o) const { return std::tie(key, value) < std::tie(o.key, o.value); }
  bool operator==(const Keyed&) const = default;
  SLUICE_FIELDS(Keyed, key, value)
};

TEST_P(ParallelismTest, KeyedReduceEmitsRunningSumsPerKey) {
  StreamExecutionEnvironment env;
  env.set_parallelism(GetParam());
  auto out = std::make_shared<CollectedRecords<Keyed>>();
  env.from_sequence(0, 9'999)
      .map([](int64_t x) { return Keyed{x % 97, x}; })
      .key_by([](const Keyed& k) { return k.key; })
      .sum(&Keyed::value)
      .sink_to(CollectSink<Keyed>(out));
  run(env);
  // Each key's running sums: the same multiset in any order of arrival is not guaranteed (the sums depend
  // on the order), but the count per key and the final (largest) sum are.
  std::map<int64_t, int64_t> count, final_sum, oracle_sum, oracle_count;
  for (int64_t x = 0; x < 10'000; ++x) {
    oracle_sum[x % 97] += x;
    oracle_count[x % 97]++;
  }
  for (const auto& r : out->snapshot()) {
    count[r.key]++;
    final_sum[r.key] = std::max(final_sum[r.key], r.value);
  }
  EXPECT_EQ(count, oracle_count);
  EXPECT_EQ(final_sum, oracle_sum);
}

// Counts per key in ValueState and MapState; emits (key, n) after each record.
class CountPerKey final : public KeyedProcessFunction<std::string, std::string, std::pair<std::string, int64_t>> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    count_ = &get_state(ValueStateDescriptor<int64_t>("count"));
    seen_lengths_ = &get_map_state(MapStateDescriptor<int64_t, int64_t>("lengths"));
  }
  void process_element(const std::string& word, KeyedProcessContext<std::string>& ctx,
                       Collector<std::pair<std::string, int64_t>>& out) override {
    if (ctx.current_key() != word) throw std::logic_error("current key is not the record's key");
    int64_t n = count_->value().value_or(0) + 1;
    count_->update(n);
    auto len = static_cast<int64_t>(word.size());
    seen_lengths_->put(len, seen_lengths_->get(len).value_or(0) + 1);
    if (seen_lengths_->get(len).value() != n) throw std::logic_error("map state disagrees with value state");
    out.collect({word, n});
  }

 private:
  ValueState<int64_t>* count_ = nullptr;
  MapState<int64_t, int64_t>* seen_lengths_ = nullptr;
};

TEST_P(ParallelismTest, KeyedProcessStateCountsEachKeyExactlyOnce) {
  StreamExecutionEnvironment env;
  env.set_parallelism(GetParam());
  auto out = std::make_shared<CollectedRecords<std::pair<std::string, int64_t>>>();
  constexpr int64_t kN = 30'000;
  env.from_sequence(0, kN - 1)
      .map([](int64_t x) { return "w" + std::to_string((x * 7919) % 1013); })
      .key_by([](const std::string& w) { return w; })
      .process(CountPerKey{})
      .sink_to(CollectSink<std::pair<std::string, int64_t>>(out));
  run(env);
  std::map<std::string, int64_t> oracle;
  for (int64_t x = 0; x < kN; ++x) oracle["w" + std::to_string((x * 7919) % 1013)]++;
  std::map<std::string, std::vector<int64_t>> got;
  for (auto& [w, n] : out->snapshot()) got[w].push_back(n);
  ASSERT_EQ(got.size(), oracle.size());
  for (auto& [w, counts] : got) {
    std::sort(counts.begin(), counts.end());
    std::vector<int64_t> expected(static_cast<size_t>(oracle[w]));
    for (size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<int64_t>(i) + 1;
    EXPECT_EQ(counts, expected) << w;
  }
}

TEST_P(ParallelismTest, BroadcastDeliversEveryRecordToEverySubtask) {
  StreamExecutionEnvironment env;
  env.set_parallelism(GetParam());
  auto out = std::make_shared<CollectedRecords<int64_t>>();
  env.from_sequence(1, 1000).set_parallelism(1).broadcast().map([](int64_t x) { return x; }).sink_to(CollectSink<int64_t>(out));
  run(env);
  EXPECT_EQ(out->size(), static_cast<size_t>(1000 * GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Parallelism, ParallelismTest, ::testing::Values(1, 2, 3, 4));

TEST(DataStream, UnionMergesStreams) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto out = std::make_shared<CollectedRecords<int64_t>>();
  auto a = env.from_sequence(1, 100);
  auto b = env.from_sequence(1001, 1100);
  auto c = env.from_sequence(2001, 2050).set_parallelism(1);
  a.union_(b, c).map([](int64_t x) { return x; }).sink_to(CollectSink<int64_t>(out));
  run(env);
  EXPECT_EQ(out->size(), 250u);
}

class SplitEvens final : public ProcessFunction<int64_t, int64_t> {
 public:
  explicit SplitEvens(OutputTag<std::string> tag) : tag_(std::move(tag)) {}
  void process_element(const int64_t& x, ProcessContext& ctx, Collector<int64_t>& out) override {
    if (x % 2 == 0) ctx.output(tag_, "even " + std::to_string(x));
    else out.collect(x);
  }

 private:
  OutputTag<std::string> tag_;
};

TEST(DataStream, SideOutputsRouteByTag) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  OutputTag<std::string> evens("evens");
  auto odd_out = std::make_shared<CollectedRecords<int64_t>>();
  auto even_out = std::make_shared<CollectedRecords<std::string>>();
  auto main = env.from_sequence(1, 1000).process(SplitEvens(evens));
  main.sink_to(CollectSink<int64_t>(odd_out));
  main.get_side_output(evens).rebalance().sink_to(CollectSink<std::string>(even_out)).set_parallelism(3);
  run(env);
  EXPECT_EQ(odd_out->size(), 500u);
  auto evs = even_out->snapshot();
  ASSERT_EQ(evs.size(), 500u);
  for (const auto& s : evs) EXPECT_EQ(s.rfind("even ", 0), 0u);
}

TEST(DataStream, UserExceptionFailsJobNamingOperatorAndSubtask) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  env.from_sequence(1, 10'000)
      .map([](int64_t x) {
        if (x == 4242) throw std::runtime_error("bad record 4242");
        return x;
      })
      .name("explode")
      .sink_to(DiscardingSink<int64_t>());
  auto r = env.execute("failing");
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->status, JobStatus::kFailed);
  EXPECT_EQ(r->error.code(), StatusCode::kUserFunction);
  const std::string& m = r->error.message();
  EXPECT_NE(m.find("bad record 4242"), std::string::npos) << m;
  EXPECT_NE(m.find("'explode'"), std::string::npos) << m;
  EXPECT_NE(m.find("subtask "), std::string::npos) << m;
  EXPECT_NE(m.find("/2)"), std::string::npos) << m;
}

// A restore that the program or configuration makes impossible (an operator throws a Status with code
// InvalidArgument, as the keyed-state restore does for an incremental RocksDB snapshot on the heap backend) fails
// the job at once, keeping its code through the task boundary: the restart strategy never restarts it.
std::atomic<int> g_initializations{0};
class RefusingRestore final : public OneInputStreamOperator<int64_t, int64_t> {
 public:
  void initialize_state(const OperatorRestoreState* restored) override {
    OneInputStreamOperator::initialize_state(restored);
    g_initializations.fetch_add(1);
    throw StatusError(Status::invalid_argument("state of 'refuse': expected the RocksDB state backend"));
  }
  void collect(int64_t&& v) override { output()->collect(std::move(v)); }
};

TEST(DataStream, InvalidArgumentFromATaskIsNeverRestarted) {
  g_initializations = 0;
  Configuration config;
  ASSERT_TRUE(config.set_string("restart-strategy.type", "fixed-delay").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.fixed-delay.attempts", "3").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.fixed-delay.delay", "1ms").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  env.from_sequence(1, 10).transform<int64_t>("refuse", [] { return std::make_unique<RefusingRestore>(); })
      .sink_to(DiscardingSink<int64_t>());
  auto r = env.execute("refused");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->status, JobStatus::kFailed);
  EXPECT_EQ(r->error.code(), StatusCode::kInvalidArgument) << r->error.to_string();
  EXPECT_NE(r->error.message().find("expected the RocksDB state backend"), std::string::npos) << r->error.to_string();
  EXPECT_EQ(g_initializations.load(), 1) << "restarted although the failure cannot be fixed by a restart";
}

TEST(DataStream, KeyedStateOnNonKeyedStreamFails) {
  struct Fn final : ProcessFunction<int64_t, int64_t> {
    void open(RuntimeContext& ctx) override {
      ctx.keyed_state_backend<KeyedStateBackend<int64_t>>();  // throws: not keyed
    }
    void process_element(const int64_t&, ProcessContext&, Collector<int64_t>&) override {}
  };
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).process(Fn{}).name("not-keyed").sink_to(DiscardingSink<int64_t>());
  auto r = env.execute("x");
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->status, JobStatus::kFailed);
  EXPECT_NE(r->error.message().find("only available on a keyed stream"), std::string::npos) << r->error.message();
}

TEST(DataStream, InvalidProgramsAreRejectedBeforeRunning) {
  {
    StreamExecutionEnvironment env;
    env.set_parallelism(4);
    env.from_sequence(1, 10).forward().map([](int64_t x) { return x; }).set_parallelism(2).sink_to(DiscardingSink<int64_t>());
    auto r = env.execute("x");
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("forward"), std::string::npos) << r.status().message();
  }
  {
    StreamExecutionEnvironment env;
    env.set_parallelism(4).set_max_parallelism(2);
    env.from_sequence(1, 10).sink_to(DiscardingSink<int64_t>());
    auto r = env.execute("x");
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("max"), std::string::npos) << r.status().message();
  }
  {
    StreamExecutionEnvironment env;
    auto r = env.execute("empty");
    ASSERT_FALSE(r.is_ok());
  }
}

TEST(DataStream, CancelStopsAnEndlessJob) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  env.from_generator(int64_t{1} << 62, [](int64_t i) { return i; }).rebalance().sink_to(DiscardingSink<int64_t>());
  auto client = env.execute_async("endless");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ((*client)->status(), JobStatus::kRunning);
  (*client)->cancel();
  auto result = (*client)->wait();
  EXPECT_EQ(result.status, JobStatus::kCanceled);
}

TEST(DataStream, MetricsCountRecordsPerOperator) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  env.from_sequence(1, 5000).name("numbers").rebalance().map([](int64_t x) { return x; }).name("id").sink_to(DiscardingSink<int64_t>());
  auto client = env.execute_async("metrics");
  ASSERT_TRUE(client.is_ok());
  auto result = (*client)->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished);
  double out = 0, in = 0;
  for (const auto& m : (*client)->metrics().snapshot()) {
    if (m.name == "numRecordsOut" && m.scope.find(".numbers.") != std::string::npos) out += m.value;
    if (m.name == "numRecordsIn" && m.scope.find(".id.") != std::string::npos) in += m.value;
  }
  EXPECT_EQ(out, 5000);
  EXPECT_EQ(in, 5000);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

TEST(DataStream, ExceptionInCloseFailsTheJob) {
  struct Fn final : ProcessFunction<int64_t, int64_t> {
    void process_element(const int64_t& x, ProcessContext&, Collector<int64_t>& out) override { out.collect(x); }
    void close() override { throw std::runtime_error("flush at close failed"); }
  };
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).process(Fn{}).name("closer").sink_to(DiscardingSink<int64_t>());
  auto r = env.execute("close");
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->status, JobStatus::kFailed);
  EXPECT_NE(r->error.message().find("flush at close failed"), std::string::npos) << r->error.to_string();
  EXPECT_NE(r->error.message().find("'closer'"), std::string::npos) << r->error.to_string();
}

TEST(DataStream, SideOutputReadWithAnotherTypeFailsClearly) {
  struct Fn final : ProcessFunction<int64_t, int64_t> {
    void process_element(const int64_t& x, ProcessContext& ctx, Collector<int64_t>&) override {
      ctx.output(OutputTag<std::string>("odd"), std::to_string(x));
    }
  };
  StreamExecutionEnvironment env;
  auto main = env.from_sequence(1, 10).process(Fn{});
  main.sink_to(DiscardingSink<int64_t>());
  main.get_side_output(OutputTag<int64_t>("odd")).sink_to(DiscardingSink<int64_t>());
  auto r = env.execute("side");
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->status, JobStatus::kFailed);
  EXPECT_NE(r->error.message().find("side output 'odd'"), std::string::npos) << r->error.to_string();
}

TEST(DataStream, JobWithoutSinkOrExecutedTwiceIsRejected) {
  StreamExecutionEnvironment env;
  env.from_sequence(1, 10).map([](int64_t x) { return x; });
  auto r = env.execute("nosink");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("no sink"), std::string::npos) << r.status().to_string();

  StreamExecutionEnvironment env2;
  env2.from_sequence(1, 10).sink_to(DiscardingSink<int64_t>());
  ASSERT_TRUE(env2.execute("once").is_ok());
  auto again = env2.execute("twice");
  ASSERT_FALSE(again.is_ok());
  EXPECT_NE(again.status().message().find("used up by execute()"), std::string::npos);
}

TEST(Result, ValueOfAnErrorNamesTheStatus) {
  Result<int> r = Status::invalid_argument("parallelism.default: 0 is out of range");
  try {
    (void)r.value();
    FAIL();
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("parallelism.default"), std::string::npos);
  }
}

}  // namespace
}  // namespace sluice
