// Timers in running jobs, on every timer store (heap backend; RocksDB with timers in RocksDB; RocksDB with
// state.backend.rocksdb.timer-service.factory: HEAP):
// - processing-time timers of a KeyedProcessFunction driven by a ManualClock: nothing fires while the clock stands
//   still, timers fire once the clock passes them, one per (key, timestamp), in timestamp order per key;
// - exactly-once output that comes only from timers, under seeded failures at random points (failover style):
//   every record registers a timer (processing time in the past: fires at the task's next loop iteration; or
//   event time: fires with the sources' final watermark at the end of input), kept with its payload in state;
//   the committed output must hold every record exactly once, as the failure-free run does. Timers cross
//   checkpoints and restores on the way. (Event-time timers fired by watermarks during the run:
//   event_time_timers_it.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cluster/mini_cluster.h"
#include "seeded_failover.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {


enum class Store { kHeap, kRocksDB, kRocksDBHeapTimers, kRocksDBIncremental };
std::string store_name(Store s) {
  switch (s) {
    case Store::kHeap:
      return "HashMap";
    case Store::kRocksDB:
      return "RocksDB";
    case Store::kRocksDBHeapTimers:
      return "RocksDBHeapTimers";
    case Store::kRocksDBIncremental:
      return "RocksDBIncremental";
  }
  return "?";
}
void configure(Configuration& c, Store s) {
  if (s == Store::kHeap) return;
  EXPECT_TRUE(c.set_string("state.backend.type", "rocksdb").is_ok());
  if (s == Store::kRocksDBHeapTimers) {
    EXPECT_TRUE(c.set_string("state.backend.rocksdb.timer-service.factory", "HEAP").is_ok());
  }
  if (s == Store::kRocksDBIncremental) {
    EXPECT_TRUE(c.set_string("execution.checkpointing.incremental", "true").is_ok());
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

// ---- processing-time timers with a manual clock ----

constexpr int64_t kT0 = 1'000'000;
std::atomic<int64_t> g_processed{0};
std::mutex g_mu;
std::vector<std::string> g_fired;

class CollectSink final : public Sink<std::string> {
 public:
  std::unique_ptr<SinkWriter<std::string>> create_writer(SinkInitContext&) const override {
    return std::make_unique<W>();
  }

 private:
  struct W final : SinkWriter<std::string> {
    void write(std::string&& s) override {
      std::lock_guard lock(g_mu);
      g_fired.push_back(std::move(s));
    }
    void flush(bool) override {}
  };
};
size_t fired_count() {
  std::lock_guard lock(g_mu);
  return g_fired.size();
}

// Per key: a timer at kT0 + 1000 + 10 * key (registered by every record of the key: one timer), and one at
// kT0 + 2000 + record. Emits "key,timestamp,count of the key's records".
struct ClockTimers final : KeyedProcessFunction<int64_t, int64_t, std::string> {
  ValueState<int64_t>* count = nullptr;
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    count = &get_state(ValueStateDescriptor<int64_t>("count"));
  }
  void process_element(const int64_t& v, KeyedProcessContext<int64_t>& ctx, Collector<std::string>&) override {
    count->update(count->value().value_or(0) + 1);
    ctx.timer_service().register_processing_time_timer(kT0 + 1000 + 10 * ctx.current_key());
    ctx.timer_service().register_processing_time_timer(kT0 + 2000 + v);
    g_processed.fetch_add(1);
  }
  void on_timer(int64_t ts, KeyedOnTimerContext<int64_t>& ctx, Collector<std::string>& out) override {
    EXPECT_EQ(ctx.time_domain(), TimeDomain::kProcessingTime);
    out.collect(std::to_string(ctx.current_key()) + "," + std::to_string(ts) + "," +
                std::to_string(count->value().value_or(0)));
  }
};

class ClockTimersIT : public ::testing::TestWithParam<Store> {};

TEST_P(ClockTimersIT, ProcessingTimeTimersFollowTheManualClock) {
  g_processed = 0;
  {
    std::lock_guard lock(g_mu);
    g_fired.clear();
  }
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
      .process(ClockTimers{})
      .sink_to(CollectSink());
  auto client = env.execute_async("clock-timers");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();

  // The generator paces from its first record (index 0, on the subtask that got the first split): moving the clock
  // before that would make T0 + 900 its start and allow it a single record.
  ASSERT_TRUE(wait_until([] { return g_processed.load() >= 1; }));
  clock->set_ms(kT0 + 900);  // 500 records per second per subtask: far enough for the first 100; no timer is due
  ASSERT_TRUE(wait_until([] { return g_processed.load() == 100; })) << g_processed.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(fired_count(), 0u) << "time stands still: no timer is due";

  clock->set_ms(kT0 + 1015);  // keys 0 and 1
  ASSERT_TRUE(wait_until([] { return fired_count() >= 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  {
    std::lock_guard lock(g_mu);
    EXPECT_EQ(std::set<std::string>(g_fired.begin(), g_fired.end()),
              (std::set<std::string>{"0," + std::to_string(kT0 + 1000) + ",25", "1," + std::to_string(kT0 + 1010) + ",25"}));
    EXPECT_EQ(g_fired.size(), 2u);
  }

  clock->set_ms(kT0 + 3000);  // everything else
  ASSERT_TRUE(wait_until([] { return fired_count() >= 104; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*client)->cancel();
  (*client)->wait();

  std::lock_guard lock(g_mu);
  std::set<std::string> expected;
  for (int64_t k = 0; k < 4; ++k) expected.insert(std::to_string(k) + "," + std::to_string(kT0 + 1000 + 10 * k) + ",25");
  for (int64_t i = 0; i < 100; ++i) expected.insert(std::to_string(i % 4) + "," + std::to_string(kT0 + 2000 + i) + ",25");
  EXPECT_EQ(std::set<std::string>(g_fired.begin(), g_fired.end()), expected);
  EXPECT_EQ(g_fired.size(), expected.size()) << "a timer fired twice";
  std::map<int64_t, int64_t> last;  // per key: timestamps ascend
  for (const std::string& f : g_fired) {
    const int64_t key = std::stoll(f.substr(0, f.find(',')));
    const int64_t ts = std::stoll(f.substr(f.find(',') + 1));
    EXPECT_GT(ts, last[key]) << f;
    last[key] = ts;
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, ClockTimersIT,
                         ::testing::Values(Store::kHeap, Store::kRocksDB, Store::kRocksDBHeapTimers),
                         [](const auto& p) { return store_name(p.param); });

// ---- exactly-once output from timers under failures ----

// Record v: its payload waits in MapState until its timer fires: processing time v (long past: the next loop
// iteration) for even v, event time v (the end of input) for odd v. Emits "key,v,domain,payload".
struct TimerEmit final : KeyedProcessFunction<int64_t, int64_t, std::string> {
  MapState<int64_t, int64_t>* pending = nullptr;
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    pending = &get_map_state(MapStateDescriptor<int64_t, int64_t>("pending"));
  }
  void process_element(const int64_t& v, KeyedProcessContext<int64_t>& ctx, Collector<std::string>&) override {
    pending->put(v, v * 7);
    if (v % 2 == 0) {
      ctx.timer_service().register_processing_time_timer(v);
    } else {
      ctx.timer_service().register_event_time_timer(v);
    }
  }
  void on_timer(int64_t ts, KeyedOnTimerContext<int64_t>& ctx, Collector<std::string>& out) override {
    std::optional<int64_t> payload = pending->get(ts);
    if (!payload) throw std::logic_error("timer " + std::to_string(ts) + " without its payload (fired twice?)");
    pending->remove(ts);
    out.collect(std::to_string(ctx.current_key()) + "," + std::to_string(ts) + "," +
                std::string(time_domain_name(ctx.time_domain())) + "," + std::to_string(*payload));
  }
};

std::string expected_line(int64_t v) {
  return std::to_string(v % 1000) + "," + std::to_string(v) + "," + (v % 2 == 0 ? "PROCESSING_TIME" : "EVENT_TIME") +
         "," + std::to_string(v * 7);
}

class TimerFailoverIT : public ::testing::TestWithParam<Store> {};

TEST_P(TimerFailoverIT, TimerOutputIsExactlyOnceUnderSeededFailures) {
  constexpr int64_t kRecords = 60'000;
  constexpr int32_t kFailures = 3;
  const uint64_t seed = 11 + static_cast<uint64_t>(GetParam());
  std::printf("timer failover: %s, seed %llu\n", store_name(GetParam()).c_str(), static_cast<unsigned long long>(seed));
  const std::string base = ::testing::TempDir() + "timers-failover-" + std::to_string(::getpid()) + "-" +
                           store_name(GetParam());
  std::filesystem::remove_all(base);
  Configuration config;
  configure(config, GetParam());
  failover_test::configure_failover(config, base + "/ck");
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  // Slow enough for the failures to land while records flow (about 1.5 s at 40 K/s).
  env.from_generator(kRecords, [](int64_t i) { return i; }, /*records_per_second=*/40'000)
      .name("numbers")
      .uid("numbers")
      .key_by([](const int64_t& v) { return v % 1000; })
      .process(TimerEmit{})
      .name("timers")
      .uid("timers")
      .sink_to(file::TransactionalFileSink<std::string>(base + "/out",
                                                        [](const std::string& s, std::string& line) { line += s; }))
      .name("sink")
      .uid("sink");
  auto client = env.execute_async("timers-failover");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  ASSERT_NE(cp, nullptr);

  const auto source_records = [&] {
    return failover_test::records_out((*client)->metrics(), "timers-failover.numbers.");
  };
  failover_test::inject_seeded_failures(**client, *cp, seed, kFailures, kRecords, source_records, "timer");
  auto result = (*client)->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  failover_test::print_injected_failures(*cp);
  EXPECT_EQ(static_cast<int32_t>(cp->injected_failures().size()), kFailures);

  // The failure-free run's output: every record once, from its timer.
  std::multiset<std::string> expected;
  for (int64_t v = 0; v < kRecords; ++v) expected.insert(expected_line(v));
  failover_test::expect_committed(base + "/out", expected);
  std::filesystem::remove_all(base);
}

INSTANTIATE_TEST_SUITE_P(Stores, TimerFailoverIT,
                         ::testing::Values(Store::kHeap, Store::kRocksDB, Store::kRocksDBHeapTimers,
                                           Store::kRocksDBIncremental),
                         [](const auto& p) { return store_name(p.param); });

}  // namespace
}  // namespace sluice
