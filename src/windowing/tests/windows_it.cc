// Windows in running jobs (DataStream API on the in-process cluster), on the heap and RocksDB backends:
// - processing-time tumbling windows driven by a ManualClock: nothing fires while the clock stands still, each
//   key's window fires once when the clock passes its end, with every element of the window;
// - global windows with count and purging triggers through reduce, aggregate, process and aggregate+process on a
//   bounded input (no timestamps needed), each checked against the hand-computed result.
// - event-time tumbling and sliding (pane-sharing) windows on records stamped by assign_timestamps_and_watermarks:
//   every window's count and sum hand-computed, and each result carries its window's max timestamp downstream.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sluice/sluice.h"

namespace sluice {
namespace {

enum class Store { kHeap, kRocksDB };
std::string store_name(Store s) { return s == Store::kHeap ? "HashMap" : "RocksDB"; }
void configure(Configuration& c, Store s) {
  if (s == Store::kRocksDB) {
    EXPECT_TRUE(c.set_string("state.backend.type", "rocksdb").is_ok());
  }
}

bool wait_until(const std::function<bool()>& done, int seconds = 60) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

std::mutex g_mu;
std::vector<std::string> g_out;
std::atomic<int64_t> g_added{0};

class CollectSink final : public Sink<std::string> {
 public:
  std::unique_ptr<SinkWriter<std::string>> create_writer(SinkInitContext&) const override {
    return std::make_unique<W>();
  }

 private:
  struct W final : SinkWriter<std::string> {
    void write(std::string&& s) override {
      std::lock_guard lock(g_mu);
      g_out.push_back(std::move(s));
    }
    void flush(bool) override {}
  };
};
size_t out_count() {
  std::lock_guard lock(g_mu);
  return g_out.size();
}
std::multiset<std::string> out_set() {
  std::lock_guard lock(g_mu);
  return {g_out.begin(), g_out.end()};
}
void reset() {
  std::lock_guard lock(g_mu);
  g_out.clear();
  g_added = 0;
}

// A user trigger: the processing-time trigger, counting the elements added to windows (so the test knows every
// element reached the window operator before it moves the clock past the window's end).
struct CountingProcessingTimeTrigger final : Trigger<int64_t, int64_t, TimeWindow> {
  ProcessingTimeTrigger inner;
  TriggerResult on_element(const int64_t& e, int64_t ts, const TimeWindow& w, Context& ctx) override {
    g_added.fetch_add(1);
    return inner.on_element(e, ts, w, ctx);
  }
  TriggerResult on_event_time(int64_t t, const TimeWindow& w, Context& ctx) override {
    return inner.on_event_time(t, w, ctx);
  }
  TriggerResult on_processing_time(int64_t t, const TimeWindow& w, Context& ctx) override {
    return inner.on_processing_time(t, w, ctx);
  }
  bool can_merge() const override { return true; }
  void on_merge(const TimeWindow& w, Context& ctx) override { inner.on_merge(w, ctx); }
  void clear(const TimeWindow& w, Context& ctx) override { inner.clear(w, ctx); }
};

struct CountAndSum final : AggregateFunction<int64_t, std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> {
  std::pair<int64_t, int64_t> create_accumulator() const override { return {0, 0}; }
  void add(const int64_t& v, std::pair<int64_t, int64_t>& acc) const override {
    acc.first += 1;
    acc.second += v;
  }
  std::pair<int64_t, int64_t> get_result(const std::pair<int64_t, int64_t>& acc) const override { return acc; }
  void merge(std::pair<int64_t, int64_t>& t, const std::pair<int64_t, int64_t>& o) const override {
    t.first += o.first;
    t.second += o.second;
  }
};

// "key,window start,count,sum"
template <class W>
struct Describe final : ProcessWindowFunction<std::pair<int64_t, int64_t>, std::string, int64_t, W> {
  using Context = typename ProcessWindowFunction<std::pair<int64_t, int64_t>, std::string, int64_t, W>::Context;
  void process(const int64_t& key, Context& ctx, const std::vector<std::pair<int64_t, int64_t>>& r,
               Collector<std::string>& out) override {
    int64_t start = 0;
    if constexpr (std::is_same_v<W, TimeWindow>) start = ctx.window().start_ms;
    out.collect(std::to_string(key) + "," + std::to_string(start) + "," + std::to_string(r.at(0).first) + "," +
                std::to_string(r.at(0).second));
  }
};

constexpr int64_t kT0 = 1'000'000;

class WindowsIT : public ::testing::TestWithParam<Store> {};

TEST_P(WindowsIT, ProcessingTimeWindowsFollowTheManualClock) {
  reset();
  auto clock = std::make_shared<ManualClock>(kT0);
  Configuration config;
  configure(config, GetParam());
  StreamExecutionEnvironment env(config);
  env.set_clock(clock);
  env.set_parallelism(2);
  // Paced by the manual clock (1000 records per second in all); only the first 100 go on.
  env.from_generator(int64_t{1} << 40, [](int64_t i) { return i; }, /*records_per_second=*/1000)
      .filter([](const int64_t& i) { return i < 100; })
      .key_by([](const int64_t& i) { return i % 4; })
      .window(TumblingProcessingTimeWindows::of(1000))
      .trigger(CountingProcessingTimeTrigger{})
      .aggregate(CountAndSum{}, Describe<TimeWindow>{})
      .uid("windows")
      .sink_to(CollectSink());
  auto client = env.execute_async("processing-time-windows");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();

  // The generator paces from its first record: move the clock only after it (generator_source.h).
  ASSERT_TRUE(wait_until([] { return g_added.load() >= 1; }));
  clock->set_ms(kT0 + 900);  // every element falls into [kT0, kT0 + 1000)
  ASSERT_TRUE(wait_until([] { return g_added.load() == 100; })) << g_added.load();
  clock->set_ms(kT0 + 998);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(out_count(), 0u) << "the window fires at its max_timestamp, kT0 + 999";

  clock->set_ms(kT0 + 1000);
  ASSERT_TRUE(wait_until([] { return out_count() >= 4; }));
  clock->set_ms(kT0 + 5000);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*client)->cancel();
  (*client)->wait();

  std::multiset<std::string> expected;
  for (int64_t k = 0; k < 4; ++k) {
    int64_t sum = 0;
    for (int64_t i = k; i < 100; i += 4) sum += i;
    expected.insert(std::to_string(k) + "," + std::to_string(kT0) + ",25," + std::to_string(sum));
  }
  EXPECT_EQ(out_set(), expected);
}

// Keys i % 3 over 0..89 (30 elements each); per key windows of 4 elements by a purging count trigger: 7 firings
// of 4 elements, the last 2 stay in the window (global windows never end).
TEST_P(WindowsIT, GlobalWindowsWithCountTriggersThroughEveryWindowFunction) {
  auto run = [&](auto build) {
    reset();
    Configuration config;
    configure(config, GetParam());
    StreamExecutionEnvironment env(config);
    env.set_parallelism(2);
    auto keyed = env.from_sequence(0, 89).key_by([](const int64_t& i) { return i % 3; });
    build(keyed).sink_to(CollectSink());
    auto result = env.execute("global-windows");
    EXPECT_TRUE(result.is_ok()) << result.status().to_string();
    return out_set();
  };
  // Two source subtasks interleave, so which elements make up each four is not fixed; firings and counts per key are.
  auto totals = [](const std::multiset<std::string>& out) {
    std::map<int64_t, std::pair<int64_t, int64_t>> per_key;  // key -> (firings, sum of counts)
    for (const std::string& s : out) {
      const int64_t key = std::stoll(s.substr(0, s.find(',')));
      const int64_t count = std::stoll(s.substr(s.find(',', s.find(',') + 1) + 1));
      per_key[key].first += 1;
      per_key[key].second += count;
    }
    return per_key;
  };
  const std::map<int64_t, std::pair<int64_t, int64_t>> expected{{0, {7, 28}}, {1, {7, 28}}, {2, {7, 28}}};

  auto agg = run([](auto keyed) {
    return keyed.window(GlobalWindows::create()).trigger(purging(CountTrigger::of(4))).aggregate(CountAndSum{},
                                                                                               Describe<GlobalWindow>{});
  });
  EXPECT_EQ(totals(agg), expected);

  // aggregate alone: (count, sum) pairs, mapped to text.
  auto plain = run([](auto keyed) {
    return keyed.window(GlobalWindows::create())
        .trigger(purging(CountTrigger::of(4)))
        .aggregate(CountAndSum{})
        .map([](const std::pair<int64_t, int64_t>& r) { return "0,0," + std::to_string(r.first); });
  });
  EXPECT_EQ(plain.size(), 21u);
  EXPECT_EQ(plain.count("0,0,4"), 21u);

  // reduce: sums of 4; all sums together are the total of 0..89 minus the 2 leftovers per key.
  auto reduced = run([](auto keyed) {
    return keyed.window(GlobalWindows::create())
        .trigger(purging(CountTrigger::of(4)))
        .reduce([](const int64_t& a, const int64_t& b) { return a + b; })
        .map([](const int64_t& s) { return std::to_string(s); });
  });
  EXPECT_EQ(reduced.size(), 21u);

  // process: all elements of each firing.
  struct Count final : ProcessWindowFunction<int64_t, std::string, int64_t, GlobalWindow> {
    void process(const int64_t& key, Context&, const std::vector<int64_t>& all, Collector<std::string>& out) override {
      for (int64_t v : all) EXPECT_EQ(v % 3, key);
      out.collect(std::to_string(key) + ",0," + std::to_string(all.size()));
    }
  };
  auto processed = run([](auto keyed) {
    return keyed.window(GlobalWindows::create()).trigger(purging(CountTrigger::of(4))).process(Count{});
  });
  EXPECT_EQ(totals(processed), expected);
}

// Appends the record's timestamp (or "none") to the line: window results must carry their window's end - 1.
struct AppendTimestamp final : ProcessFunction<std::string, std::string> {
  void process_element(const std::string& v, ProcessContext& ctx, Collector<std::string>& out) override {
    out.collect(v + "@" + (ctx.timestamp() ? std::to_string(*ctx.timestamp()) : std::string("none")));
  }
};

TEST_P(WindowsIT, EventTimeWindowsOnStampedRecords) {
  // Records 0..999 stamped with their value (ms); two source subtasks, each monotonous: none is late.
  auto run = [&](auto build) {
    reset();
    Configuration config;
    configure(config, GetParam());
    StreamExecutionEnvironment env(config);
    env.set_parallelism(2);
    auto keyed = env.from_sequence(0, 999)
                     .assign_timestamps_and_watermarks(
                         WatermarkStrategy<int64_t>::for_monotonous_timestamps().with_timestamp_assigner(
                             [](const int64_t& i) { return i; }))
                     .key_by([](const int64_t& i) { return i % 3; });
    build(keyed).process(AppendTimestamp{}).sink_to(CollectSink());
    auto result = env.execute("event-time-windows");
    EXPECT_TRUE(result.is_ok()) << result.status().to_string();
    return out_set();
  };
  // "key,start,count,sum@start+size-1" for every window [start, start + size) that holds elements of the key.
  auto expected = [](int64_t size, int64_t slide) {
    std::multiset<std::string> e;
    for (int64_t start = -size + slide; start < 1000; start += slide) {
      for (int64_t k = 0; k < 3; ++k) {
        int64_t count = 0, sum = 0;
        for (int64_t i = std::max<int64_t>(start, 0); i < std::min<int64_t>(start + size, 1000); ++i) {
          if (i % 3 == k) {
            ++count;
            sum += i;
          }
        }
        if (count > 0) {
          e.insert(std::to_string(k) + "," + std::to_string(start) + "," + std::to_string(count) + "," +
                   std::to_string(sum) + "@" + std::to_string(start + size - 1));
        }
      }
    }
    return e;
  };
  EXPECT_EQ(run([](auto k) {
              return k.window(TumblingEventTimeWindows::of(100)).aggregate(CountAndSum{}, Describe<TimeWindow>{});
            }),
            expected(100, 100));
  // Sliding with aggregate + process: the pane-sharing path.
  EXPECT_EQ(run([](auto k) {
              return k.window(SlidingEventTimeWindows::of(100, 50)).aggregate(CountAndSum{}, Describe<TimeWindow>{});
            }),
            expected(100, 50));
}

// reduce / aggregate on sliding event-time windows with the default trigger take the pane-sharing operator; other
// combinations the per-window one.
TEST(WindowedStreamTest, SlidingEventTimeIncrementalAggregationSharesPanes) {
  auto operator_of = [](auto build) {
    StreamExecutionEnvironment env;
    build(env.from_sequence(0, 9).key_by([](const int64_t& i) { return i % 3; }));
    for (const StreamNode& n : env.stream_graph().nodes) {
      if (n.name == "Window") {
        std::unique_ptr<StreamOperator> op = n.create_operator();
        const StreamOperator& ref = *op;
        return std::string(typeid(ref).name());
      }
    }
    return std::string("none");
  };
  const auto sum = [](const int64_t& a, const int64_t& b) { return a + b; };
  auto is_slicing = [](const std::string& type) { return type.find("SlicingWindowOperator") != std::string::npos; };
  EXPECT_TRUE(is_slicing(operator_of([&](auto k) { return k.window(SlidingEventTimeWindows::of(100, 20)).reduce(sum); })));
  EXPECT_TRUE(is_slicing(operator_of([&](auto k) {
    return k.window(SlidingEventTimeWindows::of(100, 20)).aggregate(CountAndSum{}).map([](const auto& p) {
      return std::to_string(p.first);
    });
  })));
  // Per window: tumbling (slide == size), another trigger, process().
  EXPECT_FALSE(is_slicing(operator_of([&](auto k) { return k.window(SlidingEventTimeWindows::of(100, 100)).reduce(sum); })));
  EXPECT_FALSE(is_slicing(operator_of(
      [&](auto k) { return k.window(SlidingEventTimeWindows::of(100, 20)).trigger(CountTrigger::of(2)).reduce(sum); })));
  EXPECT_FALSE(is_slicing(operator_of([&](auto k) { return k.window(SlidingProcessingTimeWindows::of(100, 20)).reduce(sum); })));
}

INSTANTIATE_TEST_SUITE_P(Stores, WindowsIT, ::testing::Values(Store::kHeap, Store::kRocksDB),
                         [](const auto& p) { return store_name(p.param); });

}  // namespace
}  // namespace sluice
