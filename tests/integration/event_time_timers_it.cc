// Event-time timers fired by watermarks in running jobs, on the heap and RocksDB timer stores:
// - a keyed process function sums its key's on-time records per 100 ms event-time window and registers an
//   event-time timer at the window's last millisecond; it emits only from on_timer. Watermarks are per-record
//   (punctuated) from per-split generators, so the output is fixed by the events alone: it must equal the
//   hand-computed window sums over the records the failure-free late decisions (late_oracle) keep on time.
//   Also checked on the way: every on-time record is ahead of the operator's watermark (TimerService::
//   current_watermark()), on_timer sees current_watermark() >= its time and ctx.timestamp() == its time, and a
//   probe chained behind the operator sees each timer's output before the watermark that fired it (the timers
//   fire, then the watermark goes on);
// - the same job under seeded failures at random points (timers_it's failover pattern): the committed output is
//   exactly-once and equal to the failure-free answer, which needs the timers and the per-split watermark state
//   to come back with every restore.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cluster/mini_cluster.h"
#include "event_time_source.h"
#include "seeded_failover.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

using namespace event_time_test;  // NOLINT: the shared test source

constexpr int64_t kWindowMs = 100;
constexpr int64_t kKeys = 5;
int64_t key_of(const Ev& e) { return e.index % kKeys; }
int64_t window_end(int64_t ts) { return (ts / kWindowMs + 1) * kWindowMs; }  // timestamps are positive
int64_t weight(const Ev& e) { return e.split * 100'000 + e.index; }  // what a window sums

struct WindowSum {
  int64_t key = 0;
  int64_t end = 0;  // exclusive; the timer is at end - 1
  int64_t count = 0;
  int64_t sum = 0;
  SLUICE_FIELDS(WindowSum, key, end, count, sum)
};
std::string line_of(const WindowSum& w) {
  return std::to_string(w.key) + "," + std::to_string(w.end) + "," + std::to_string(w.count) + "," +
         std::to_string(w.sum);
}

// Violations seen inside the job (all must stay 0).
std::atomic<int64_t> g_record_behind_watermark{0};  // an on-time record at or below the operator's watermark
std::atomic<int64_t> g_timer_ahead_of_watermark{0};  // on_timer with current_watermark() < its time
std::atomic<int64_t> g_timer_wrong_context{0};       // on_timer not in event time, or ctx.timestamp() != its time
std::atomic<int64_t> g_output_behind_watermark{0};   // timer output reaching the probe behind its watermark
std::atomic<int64_t> g_output_wrong_timestamp{0};    // timer output not stamped with the timer's time
std::atomic<int64_t> g_processed{0};  // records processed by the keyed operator, all attempts
void reset_violations() {
  g_processed = 0;
  g_record_behind_watermark = 0;
  g_timer_ahead_of_watermark = 0;
  g_timer_wrong_context = 0;
  g_output_behind_watermark = 0;
  g_output_wrong_timestamp = 0;
}

// Per key: (count, sum) of each open window in MapState by window end, and one event-time timer per window.
struct WindowSums final : KeyedProcessFunction<int64_t, Ev, WindowSum> {
  MapState<int64_t, std::pair<int64_t, int64_t>>* windows = nullptr;
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    windows = &get_map_state(MapStateDescriptor<int64_t, std::pair<int64_t, int64_t>>("windows"));
  }
  void process_element(const Ev& e, KeyedProcessContext<int64_t>& ctx, Collector<WindowSum>&) override {
    g_processed.fetch_add(1);
    if (e.ts <= ctx.timer_service().current_watermark()) g_record_behind_watermark.fetch_add(1);
    const int64_t end = window_end(e.ts);
    std::pair<int64_t, int64_t> acc = windows->get(end).value_or(std::pair<int64_t, int64_t>{0, 0});
    windows->put(end, {acc.first + 1, acc.second + weight(e)});
    ctx.timer_service().register_event_time_timer(end - 1);
  }
  void on_timer(int64_t ts, KeyedOnTimerContext<int64_t>& ctx, Collector<WindowSum>& out) override {
    if (ctx.timer_service().current_watermark() < ts) g_timer_ahead_of_watermark.fetch_add(1);
    if (ctx.time_domain() != TimeDomain::kEventTime || ctx.timestamp() != std::optional<int64_t>(ts)) {
      g_timer_wrong_context.fetch_add(1);
    }
    std::optional<std::pair<int64_t, int64_t>> acc = windows->get(ts + 1);
    if (!acc) throw std::logic_error("timer " + std::to_string(ts) + " without its window (fired twice?)");
    windows->remove(ts + 1);
    out.collect(WindowSum{ctx.current_key(), ts + 1, acc->first, acc->second});
  }
};

// Chained behind the keyed operator: each window's output must come stamped with its timer's time and ahead of
// the watermark the probe has seen (the keyed operator forwards a watermark only after its timers fired).
class OrderProbe final : public OneInputStreamOperator<WindowSum, WindowSum> {
 public:
  void collect(WindowSum&& w) override {
    const RecordTimestamp& rt = record_timestamp();
    if (!rt.has_timestamp || rt.timestamp_ms != w.end - 1) g_output_wrong_timestamp.fetch_add(1);
    if (w.end - 1 <= current_watermark_ms()) g_output_behind_watermark.fetch_add(1);
    output_->collect(std::move(w));
  }
};

// The failure-free answer by hand: window sums per key over the records that are on time.
std::multiset<std::string> expected_windows(int64_t splits, int64_t per_split) {
  const auto late = late_oracle(splits, per_split);
  std::map<std::pair<int64_t, int64_t>, WindowSum> windows;
  for (int64_t s = 0; s < splits; ++s) {
    for (int64_t i = 0; i < per_split; ++i) {
      if (late.count({s, i})) continue;
      const Ev e{s, i, ts_of(s, i)};
      WindowSum& w = windows[{key_of(e), window_end(e.ts)}];
      w.key = key_of(e);
      w.end = window_end(e.ts);
      ++w.count;
      w.sum += weight(e);
    }
  }
  std::multiset<std::string> lines;
  for (const auto& [k, w] : windows) lines.insert(line_of(w));
  return lines;
}

enum class Store { kHeap, kRocksDB, kRocksDBHeapTimers };
std::string store_name(Store s) {
  return s == Store::kHeap ? "HashMap" : s == Store::kRocksDB ? "RocksDB" : "RocksDBHeapTimers";
}
void configure(Configuration& c, Store s) {
  if (s == Store::kHeap) return;
  EXPECT_TRUE(c.set_string("state.backend.type", "rocksdb").is_ok());
  if (s == Store::kRocksDBHeapTimers) {
    EXPECT_TRUE(c.set_string("state.backend.rocksdb.timer-service.factory", "HEAP").is_ok());
  }
}

constexpr const char* kJob = "event-time-timers";

// The job: the test source (splits read interleaved, a 1 ms pause every `pause_every` polls) with punctuated
// per-split watermarks and late records to a side output nobody reads, keyed window sums from timers, the
// probe, and an exactly-once file sink.
std::unique_ptr<JobClient> start_job(Store store, const std::string& base, int64_t splits, int64_t per_split,
                                     int64_t pause_every) {
  Configuration config;
  configure(config, store);
  failover_test::configure_failover(config, base + "/ck");
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  env.from_source(EvSource(splits, per_split, pause_every), punctuated_strategy(), "events")
      .uid("events")
      .key_by([](const Ev& e) { return key_of(e); })
      .process(WindowSums{})
      .name("window-sums")
      .uid("window-sums")
      .transform<WindowSum>("probe", [] { return std::make_unique<OrderProbe>(); })
      .uid("probe")
      .sink_to(file::TransactionalFileSink<WindowSum>(
          base + "/out", [](const WindowSum& w, std::string& line) { line += line_of(w); }))
      .name("sink")
      .uid("sink");
  auto client = env.execute_async(kJob);
  EXPECT_TRUE(client.is_ok()) << client.status().to_string();
  return client.is_ok() ? std::move(client).value() : nullptr;
}

void expect_no_violations() {
  EXPECT_EQ(g_record_behind_watermark.load(), 0) << "an on-time record behind the keyed operator's watermark";
  EXPECT_EQ(g_timer_ahead_of_watermark.load(), 0) << "on_timer before current_watermark() reached its time";
  EXPECT_EQ(g_timer_wrong_context.load(), 0) << "on_timer's domain or ctx.timestamp() wrong";
  EXPECT_EQ(g_output_wrong_timestamp.load(), 0) << "timer output not stamped with the timer's time";
  EXPECT_EQ(g_output_behind_watermark.load(), 0) << "the watermark went downstream before its timers fired";
}

std::string base_dir(const std::string& what, Store s) {
  return ::testing::TempDir() + "event-time-timers-" + what + "-" + std::to_string(::getpid()) + "-" + store_name(s);
}

class EventTimeTimersIT : public ::testing::TestWithParam<Store> {};

TEST_P(EventTimeTimersIT, TimersFiredByWatermarksGiveTheHandComputedWindows) {
  constexpr int64_t kSplits = 4, kPerSplit = 1200;
  const std::string base = base_dir("run", GetParam());
  std::filesystem::remove_all(base);
  reset_violations();
  auto client = start_job(GetParam(), base, kSplits, kPerSplit, /*pause_every=*/0);
  ASSERT_NE(client, nullptr);
  auto result = client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  const auto expected = expected_windows(kSplits, kPerSplit);
  ASSERT_GT(expected.size(), 200u);
  failover_test::expect_committed(base + "/out", expected);
  expect_no_violations();
  std::filesystem::remove_all(base);
}

INSTANTIATE_TEST_SUITE_P(Stores, EventTimeTimersIT,
                         ::testing::Values(Store::kHeap, Store::kRocksDB, Store::kRocksDBHeapTimers),
                         [](const auto& p) { return store_name(p.param); });

class EventTimeTimerFailoverIT : public ::testing::TestWithParam<Store> {};

TEST_P(EventTimeTimerFailoverIT, WindowsAreExactlyOnceAndEqualToTheFailureFreeRunUnderSeededFailures) {
  constexpr int64_t kSplits = 6, kPerSplit = 2000;
  constexpr int32_t kFailures = 3;
  const uint64_t seed = 21 + static_cast<uint64_t>(GetParam());
  std::printf("event-time timer failover: %s, seed %llu\n", store_name(GetParam()).c_str(),
              static_cast<unsigned long long>(seed));
  const std::string base = base_dir("failover", GetParam());
  std::filesystem::remove_all(base);
  reset_violations();
  // Paced (a 1 ms pause every 2 records of a subtask: 3 s or more) so that failures land while records flow.
  auto client = start_job(GetParam(), base, kSplits, kPerSplit, /*pause_every=*/2);
  ASSERT_NE(client, nullptr);
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client.get());
  ASSERT_NE(cp, nullptr);

  // Progress: on-time records processed by the keyed operator, over all attempts (a restarted task's metrics
  // start again from 0).
  const int64_t on_time = kSplits * kPerSplit - static_cast<int64_t>(late_oracle(kSplits, kPerSplit).size());
  failover_test::inject_seeded_failures(*client, *cp, seed, kFailures, on_time, [] { return g_processed.load(); },
                                        "event-time timer");
  auto result = client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  failover_test::print_injected_failures(*cp);
  EXPECT_EQ(static_cast<int32_t>(cp->injected_failures().size()), kFailures);
  failover_test::expect_committed(base + "/out", expected_windows(kSplits, kPerSplit));
  expect_no_violations();
  std::filesystem::remove_all(base);
}

INSTANTIATE_TEST_SUITE_P(Stores, EventTimeTimerFailoverIT, ::testing::Values(Store::kHeap, Store::kRocksDB),
                         [](const auto& p) { return store_name(p.param); });

}  // namespace
}  // namespace sluice
