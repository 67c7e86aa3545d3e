// execution.runtime-mode BATCH (docs/batch.md) on whole jobs:
// - the same program gives the same results in STREAMING and BATCH (committed by exactly-once file sinks): a rolling keyed reduce (final value per key and
//   number of updates), event-time tumbling windows, and a keyed process function whose event-time timer emits
//   each key's count; across three stages (source | keyed windows | keyed process) at parallelism 2;
// - in BATCH the keyed state holds one key at a time (the backend's entry count seen from process_element), and a
//   processing-time timer fires for every key when its input ends (time jumps to +inf for the key);
// - a sort above execution.sorted-inputs.memory spills runs to disk and still gives the same result;
// - seeded injected failures in each stage recover with the same result, re-running only the failed stage
//   (stage_runs); earlier stages never run again;
// - a failure in a stage's commit phase (after or before a sink subtask committed, also inside a commit retry)
//   retries the commit of the kept committables instead of re-running the stage: the same result, committed once;
// - BATCH with an unbounded source fails at submission naming it; AUTOMATIC picks BATCH for bounded sources.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>
#include <stdexcept>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "batch_it_util.h"
#include "seeded_failover.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/connectors/nexmark/nexmark_source.h"
#include "sluice/connectors/sqlite/sqlite_sinks.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

constexpr int64_t kEvents = 20'000;
constexpr int64_t kKeys = 97;

struct Reading {
  int64_t key = 0;
  int64_t ts = 0;
  int64_t value = 0;
  SLUICE_FIELDS(Reading, key, ts, value)
};

Reading reading(int64_t i) { return Reading{(i * 7919) % kKeys, i, (i * 31) % 1000}; }

std::atomic<int64_t> g_max_entries{0};       // the largest keyed-state entry count process_element saw
std::atomic<int64_t> g_processing_fired{0};  // processing-time timers fired

// Counts its key's records; one event-time timer per key at a fixed far time emits (key, count, sum); a
// processing-time timer an hour ahead counts as fired (BATCH: when the key ends).
struct CountPerKey final : KeyedProcessFunction<int64_t, Reading, std::tuple<int64_t, int64_t, int64_t>> {
  ValueState<std::pair<int64_t, int64_t>>* acc = nullptr;
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    acc = &get_state(ValueStateDescriptor<std::pair<int64_t, int64_t>>("acc"));
    ctx_ = &ctx;
  }
  void process_element(const Reading& r, KeyedProcessContext<int64_t>& ctx,
                       Collector<std::tuple<int64_t, int64_t, int64_t>>&) override {
    auto a = acc->value().value_or(std::pair<int64_t, int64_t>{0, 0});
    if (a.first == 0) {
      ctx.timer_service().register_event_time_timer(int64_t{1} << 40);
      ctx.timer_service().register_processing_time_timer(ctx.timer_service().current_processing_time() + 3'600'000);
    }
    acc->update({a.first + 1, a.second + r.value});
    const int64_t entries = ctx_->keyed_state_backend<KeyedStateBackend<int64_t>>().num_entries();
    int64_t seen = g_max_entries.load();
    while (entries > seen && !g_max_entries.compare_exchange_weak(seen, entries)) {}
  }
  void on_timer(int64_t, KeyedOnTimerContext<int64_t>& ctx, Collector<std::tuple<int64_t, int64_t, int64_t>>& out) override {
    if (ctx.time_domain() == TimeDomain::kProcessingTime) {
      g_processing_fired.fetch_add(1);
      return;
    }
    auto a = acc->value().value_or(std::pair<int64_t, int64_t>{0, 0});
    out.collect({ctx.current_key(), a.first, a.second});
  }
  RuntimeContext* ctx_ = nullptr;
};

// The committed output lines: key,ts,running sum / key,window start,sum / key,count,sum.
struct Results {
  std::multiset<std::string> raw, rolling, windows, per_key;
};

std::string line_of(int64_t a, int64_t b, int64_t c) {
  return std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c);
}

// Stage 0: the source, its records also straight into a sink; stage 1: rolling reduce, windows, a relay behind a
// rebalance; stage 2: the per-key process. Each result goes to an exactly-once file sink under `out`: raw/,
// rolling/, windows/, per-key/.
void build(StreamExecutionEnvironment& env, const std::string& out) {
  auto src = env.from_source(make_generator_source(kEvents, [](int64_t i) { return reading(i); }),
                             WatermarkStrategy<Reading>::for_bounded_out_of_orderness(std::chrono::milliseconds(kEvents))
                                 .with_timestamp_assigner([](const Reading& r) { return r.ts; }),
                             "readings")
                 .uid("readings");
  auto reading_line = [](const Reading& r, std::string& line) { line += line_of(r.key, r.ts, r.value); };
  src.sink_to(file::TransactionalFileSink<Reading>(out + "/raw", reading_line)).uid("raw-sink");
  src.key_by([](const Reading& r) { return r.key; })
      .reduce([](const Reading& a, const Reading& b) { return Reading{a.key, std::max(a.ts, b.ts), a.value + b.value}; })
      .uid("rolling")
      .sink_to(file::TransactionalFileSink<Reading>(out + "/rolling", reading_line))
      .uid("rolling-sink");
  src.key_by([](const Reading& r) { return r.key; })
      .window(TumblingEventTimeWindows::of(100))
      .reduce([](const Reading& a, const Reading& b) { return Reading{a.key, std::min(a.ts, b.ts), a.value + b.value}; })
      .uid("windows")
      .map([](Reading&& r) { return Reading{r.key, r.ts / 100 * 100, r.value}; })
      .sink_to(file::TransactionalFileSink<Reading>(out + "/windows", reading_line))
      .uid("windows-sink");
  src.rebalance()
      .map([](Reading&& r) { return r; })
      .uid("relay")
      .key_by([](const Reading& r) { return r.key; })
      .process(CountPerKey{})
      .uid("per-key")
      .sink_to(file::TransactionalFileSink<std::tuple<int64_t, int64_t, int64_t>>(
          out + "/per-key",
          [](const std::tuple<int64_t, int64_t, int64_t>& t, std::string& line) {
            line += line_of(std::get<0>(t), std::get<1>(t), std::get<2>(t));
          }))
      .uid("per-key-sink");
}

using batch_test::base_config;
using batch_test::Failure;

// Runs the program; in BATCH directly on the batch runtime with `failures` armed, returning the client's figures.
struct RunResult {
  Results results;
  std::multiset<std::string> rows;  // what a custom program's collect() read
  std::vector<int32_t> stage_runs;  // empty: not the batch runtime
  batch::BatchStats stats;
  std::vector<runtime::InjectedFailure> injected;
};

// A program and how to read its committed output (default: build() and its file sinks).
struct Program {
  std::function<void(StreamExecutionEnvironment&, const std::string& out)> build;
  std::function<void(const std::string& out, RunResult&)> collect;
};

RunResult run(const std::string& mode, const std::vector<std::string>& extra = {}, const std::vector<Failure>& failures = {},
              const Program& program = {}) {
  g_max_entries = 0;
  g_processing_fired = 0;
  static int run_number = 0;
  const std::string out = ::testing::TempDir() + "/batch-it-" + std::to_string(::getpid()) + "-" + std::to_string(++run_number);
  std::filesystem::remove_all(out);
  Configuration c = base_config(mode);
  for (const auto& kv : extra) EXPECT_TRUE(c.apply_dynamic_property(kv).is_ok()) << kv;
  StreamExecutionEnvironment env(c);
  RunResult r;
  std::filesystem::create_directories(out);
  if (program.build) {
    program.build(env, out);
  } else {
    build(env, out);
  }
  batch_test::BatchRun b = batch_test::execute(env, failures);
  r.stage_runs = std::move(b.stage_runs);
  r.stats = b.stats;
  r.injected = std::move(b.injected);
  if (program.collect) program.collect(out, r);
  r.results.raw = failover_test::committed_lines(out + "/raw");
  r.results.rolling = failover_test::committed_lines(out + "/rolling");
  r.results.windows = failover_test::committed_lines(out + "/windows");
  r.results.per_key = failover_test::committed_lines(out + "/per-key");
  std::filesystem::remove_all(out);
  return r;
}

// What must be equal across modes: final rolling value and update count per key, the window sums, the per-key
// timer output.
struct Canonical {
  std::multiset<std::string> raw;  // each reading once
  std::map<int64_t, std::pair<int64_t, int64_t>> rolling;  // key -> (updates, final sum)
  std::vector<std::tuple<int64_t, int64_t, int64_t>> windows;
  std::vector<std::tuple<int64_t, int64_t, int64_t>> per_key;
  bool operator==(const Canonical&) const = default;
};

std::tuple<int64_t, int64_t, int64_t> parse(const std::string& line) {
  int64_t a = 0, b = 0, c = 0;
  EXPECT_EQ(std::sscanf(line.c_str(), "%ld,%ld,%ld", &a, &b, &c), 3) << line;
  return {a, b, c};
}

Canonical canonical(const Results& r) {
  Canonical c;
  c.raw = r.raw;
  for (const std::string& line : r.rolling) {
    auto [key, ts, value] = parse(line);
    auto& e = c.rolling[key];
    ++e.first;
    e.second = std::max(e.second, value);  // values are >= 0: the largest running sum is the final one
  }
  for (const std::string& line : r.windows) c.windows.push_back(parse(line));
  std::sort(c.windows.begin(), c.windows.end());
  for (const std::string& line : r.per_key) c.per_key.push_back(parse(line));
  std::sort(c.per_key.begin(), c.per_key.end());
  return c;
}

// The oracle, straight from the stream.
Canonical oracle() {
  Canonical c;
  std::map<std::pair<int64_t, int64_t>, int64_t> win;
  std::map<int64_t, std::pair<int64_t, int64_t>> per;
  for (int64_t i = 0; i < kEvents; ++i) {
    Reading r = reading(i);
    c.raw.insert(line_of(r.key, r.ts, r.value));
    auto& e = c.rolling[r.key];
    ++e.first;
    e.second += r.value;
    win[{r.key, r.ts / 100 * 100}] += r.value;
    auto& p = per[r.key];
    ++p.first;
    p.second += r.value;
  }
  for (auto& [k, v] : win) c.windows.emplace_back(k.first, k.second, v);
  for (auto& [k, v] : per) c.per_key.emplace_back(k, v.first, v.second);
  return c;
}

TEST(BatchModeIT, BatchEqualsStreamingAndTheOracle) {
  const Canonical want = oracle();
  RunResult streaming = run("STREAMING");
  const int64_t streaming_max_entries = g_max_entries.load();
  EXPECT_EQ(canonical(streaming.results), want);
  EXPECT_TRUE(streaming.stage_runs.empty());  // not the batch runtime

  RunResult batch = run("BATCH");
  EXPECT_EQ(canonical(batch.results), want);
  EXPECT_EQ(batch.stage_runs, (std::vector<int32_t>{1, 1, 1}));
  // One key at a time: its accumulator and its two timers; STREAMING holds every key of the subtask.
  EXPECT_LE(g_max_entries.load(), 3);
  EXPECT_GT(streaming_max_entries, 20);
  // Time jumps to +inf for each key when its input ends: every key's processing-time timer fires.
  EXPECT_EQ(g_processing_fired.load(), kKeys);
  EXPECT_GT(batch.stats.sorted_records, 0);
  EXPECT_EQ(batch.stats.sort_spilled_runs, 0);
  EXPECT_GT(batch.stats.exchange_bytes_written, 0);
}

TEST(BatchModeIT, SortAboveItsMemoryBudgetSpillsAndGivesTheSameResult) {
  RunResult batch = run("BATCH", {"execution.sorted-inputs.memory=64kb"});
  EXPECT_EQ(canonical(batch.results), oracle());
  EXPECT_GT(batch.stats.sort_spilled_runs, 3);
  EXPECT_GT(batch.stats.sort_spilled_bytes, 0);
  EXPECT_LE(batch.stats.sort_peak_memory_bytes, 64 << 10);
}

TEST(BatchModeIT, AFailureInAStageReRunsOnlyThatStage) {
  const Canonical want = oracle();
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    const int32_t subtask = static_cast<int32_t>(rng() % 2);
    SCOPED_TRACE("seed " + std::to_string(seed) + " subtask " + std::to_string(subtask));
    for (auto [point, uid, stage] : {std::tuple{runtime::FailurePoint::kSource, "readings", 0},
                                     std::tuple{runtime::FailurePoint::kKeyedOperator, "rolling", 1},
                                     std::tuple{runtime::FailurePoint::kKeyedOperator, "per-key", 2}}) {
      SCOPED_TRACE(std::string("stage ") + std::to_string(stage) + " at " + uid);
      RunResult r = run("BATCH", {}, {Failure{point, uid, subtask}});
      ASSERT_EQ(r.injected.size(), 1u);
      EXPECT_EQ(canonical(r.results), want);
      std::vector<int32_t> expected{1, 1, 1};
      expected[static_cast<size_t>(stage)] = 2;
      EXPECT_EQ(r.stage_runs, expected);
    }
  }
}

// A failure once every sink of the stage pre-committed - after a sink subtask committed, or before it did - does
// not re-run the stage: the commit of the kept committables is retried (a committed part file stays as it is), and
// the output equals the failure-free run's. Also a failure inside a retry: the next retry commits.
TEST(BatchModeIT, AFailureWhileTheSinksCommitRetriesTheCommitNotTheStage) {
  const Canonical want = oracle();
  EXPECT_EQ(canonical(run("BATCH").results), want);  // the failure-free run
  using runtime::FailurePoint;
  const char* sinks[] = {"raw-sink", "rolling-sink", "per-key-sink"};  // in stage 0, 1, 2
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    const int32_t subtask = static_cast<int32_t>(rng() % 2);
    const char* sink = sinks[seed - 1];
    SCOPED_TRACE("seed " + std::to_string(seed) + " subtask " + std::to_string(subtask) + " " + sink);
    struct Case {
      const char* what;
      std::vector<Failure> failures;
      int64_t retries;
    };
    const std::vector<Case> cases = {
        {"after the subtask committed", {Failure{FailurePoint::kAfterCommit, sink, subtask}}, 1},
        {"before the subtask committed", {Failure{FailurePoint::kBetweenCompletionAndCommit, sink, subtask}}, 1},
        // The second failure fires in the first retry (the task did not finish, so it commits again there).
        {"before the commit, then in the retry",
         {Failure{FailurePoint::kBetweenCompletionAndCommit, sink, subtask},
          Failure{FailurePoint::kBetweenCompletionAndCommit, sink, subtask}},
         2},
        {"after the commit, then after the retry's commit",
         {Failure{FailurePoint::kAfterCommit, sink, subtask}, Failure{FailurePoint::kAfterCommit, sink, subtask}},
         2},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(c.what);
      RunResult r = run("BATCH", {}, c.failures);
      ASSERT_EQ(r.injected.size(), c.failures.size());
      EXPECT_EQ(canonical(r.results), want);
      EXPECT_EQ(r.stage_runs, (std::vector<int32_t>{1, 1, 1}));  // no stage ran again
      EXPECT_EQ(r.stats.commit_retries, c.retries);
    }
  }
}

// The same through write-ahead-log sinks on SQLite (no server): they commit after their stage too, and the retry
// writes only the batches whose marker is missing. The rows equal the failure-free run's, each once.
TEST(BatchModeIT, WriteAheadSinksOnSqliteCommitOnceAfterAFailureWhileCommitting) {
  const sqlite::SqliteRowEncoder<Reading> encode = [](const Reading& r, sqlite::SqliteRow& row) {
    row = {std::to_string(r.key), std::to_string(r.ts), std::to_string(r.value)};
  };
  const auto table = [](const std::string& out, const std::string& name) {
    sqlite::SqliteTableOptions o;
    o.path = out + "/results.db";
    o.table = name;
    o.columns = {"k", "a", "b"};
    o.mode = sqlite::SqliteWriteMode::kInsert;
    return o;
  };
  Program program;
  program.build = [&](StreamExecutionEnvironment& env, const std::string& out) {
    for (const char* name : {"raw", "windows"}) {
      ASSERT_TRUE(sqlite::sqlite_execute(out + "/results.db", std::string("CREATE TABLE ") + name +
                                                                   " (k INTEGER, a INTEGER, b INTEGER)")
                      .is_ok());
    }
    auto src = env.from_source(make_generator_source(kEvents, [](int64_t i) { return reading(i); }),
                               WatermarkStrategy<Reading>::for_bounded_out_of_orderness(std::chrono::milliseconds(kEvents))
                                   .with_timestamp_assigner([](const Reading& r) { return r.ts; }),
                               "readings")
                   .uid("readings");
    src.sink_to(sqlite::SqliteWriteAheadSink<Reading>(table(out, "raw"), encode)).uid("raw-sink");
    src.key_by([](const Reading& r) { return r.key; })
        .window(TumblingEventTimeWindows::of(100))
        .reduce([](const Reading& a, const Reading& b) { return Reading{a.key, std::min(a.ts, b.ts), a.value + b.value}; })
        .uid("windows")
        .map([](Reading&& r) { return Reading{r.key, r.ts / 100 * 100, r.value}; })
        .sink_to(sqlite::SqliteWriteAheadSink<Reading>(table(out, "windows"), encode))
        .uid("windows-sink");
  };
  program.collect = [](const std::string& out, RunResult& r) {
    for (const char* name : {"raw", "windows"}) {
      auto rows = sqlite::sqlite_query(out + "/results.db", std::string("SELECT k, a, b FROM ") + name);
      ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
      for (const auto& row : *rows) r.rows.insert(std::string(name) + ":" + row[0] + "," + row[1] + "," + row[2]);
    }
  };
  const Canonical want = oracle();
  std::multiset<std::string> expected;
  for (const std::string& line : want.raw) expected.insert("raw:" + line);
  for (const auto& [k, a, b] : want.windows) expected.insert("windows:" + line_of(k, a, b));
  EXPECT_EQ(run("BATCH", {}, {}, program).rows, expected);  // the failure-free run

  using runtime::FailurePoint;
  const char* sinks[] = {"raw-sink", "windows-sink"};  // in stage 0, 1
  for (uint32_t seed : {1u, 2u}) {
    std::mt19937 rng(seed);
    const int32_t subtask = static_cast<int32_t>(rng() % 2);
    const char* sink = sinks[seed - 1];
    SCOPED_TRACE("seed " + std::to_string(seed) + " subtask " + std::to_string(subtask) + " " + sink);
    for (FailurePoint point : {FailurePoint::kAfterCommit, FailurePoint::kBetweenCompletionAndCommit}) {
      SCOPED_TRACE(runtime::failure_point_name(point));
      RunResult r = run("BATCH", {}, {Failure{point, sink, subtask}}, program);
      ASSERT_EQ(r.injected.size(), 1u);
      EXPECT_EQ(r.rows, expected);
      EXPECT_EQ(r.stage_runs, (std::vector<int32_t>{1, 1}));
      EXPECT_EQ(r.stats.commit_retries, 1);
    }
  }
}

// A stage whose map throws the same error on every run: exponential-delay (unlimited attempts) would re-run it
// forever; with restart-strategy.max-identical-failures 3 its third run fails the job naming the error.
TEST(BatchModeIT, AStageFailingIdenticallyStopsAtMaxIdenticalFailures) {
  Configuration c = base_config("BATCH");
  ASSERT_TRUE(c.apply_dynamic_property("restart-strategy.type=exponential-delay").is_ok());
  ASSERT_TRUE(c.apply_dynamic_property("restart-strategy.exponential-delay.initial-backoff=5ms").is_ok());
  ASSERT_TRUE(c.apply_dynamic_property("restart-strategy.exponential-delay.max-backoff=10ms").is_ok());
  ASSERT_TRUE(c.apply_dynamic_property("restart-strategy.max-identical-failures=3").is_ok());
  StreamExecutionEnvironment env(c);
  env.from_sequence(1, 100, "numbers")
      .map([](int64_t v) -> int64_t { throw std::runtime_error("value " + std::to_string(v) + " is not allowed"); })
      .name("reject")
      .sink_to(DiscardingSink<int64_t>());
  auto client = env.execute_async("identical-failures");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  JobExecutionResult res = (*client)->wait();
  ASSERT_EQ(res.status, JobStatus::kFailed) << res.error.to_string();
  EXPECT_NE(res.error.message().find("3 times in a row"), std::string::npos) << res.error.to_string();
  EXPECT_NE(res.error.message().find("is not allowed"), std::string::npos) << res.error.to_string();
  auto* b = dynamic_cast<batch::BatchJobClient*>(client->get());
  ASSERT_NE(b, nullptr) << "the batch runtime ran the job";
  EXPECT_EQ(b->stage_runs(), (std::vector<int32_t>{3}));
}

TEST(BatchModeIT, BatchWithAnUnboundedSourceFailsNamingIt) {
  Configuration c = base_config("BATCH");
  StreamExecutionEnvironment env(c);
  nexmark::NexmarkSourceOptions o;  // max_events -1: unbounded
  env.from_source(nexmark::NexmarkSource(o), "endless-bids").sink_to(DiscardingSink<nexmark::Event>());
  auto client = env.execute_async("unbounded");
  ASSERT_FALSE(client.is_ok());
  EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(client.status().message().find("endless-bids"), std::string::npos) << client.status().to_string();
}

TEST(BatchModeIT, AutomaticPicksBatchForBoundedSourcesAndStreamingOtherwise) {
  {
    StreamExecutionEnvironment env(base_config("AUTOMATIC"));
    env.from_sequence(1, 100).key_by([](int64_t v) { return v % 3; }).sum().sink_to(DiscardingSink<int64_t>());
    auto client = env.execute_async("automatic-bounded");
    ASSERT_TRUE(client.is_ok()) << client.status().to_string();
    EXPECT_NE(dynamic_cast<batch::BatchJobClient*>(client->get()), nullptr);
    EXPECT_EQ((*client)->wait().status, JobStatus::kFinished);
  }
  {
    StreamExecutionEnvironment env(base_config("AUTOMATIC"));
    nexmark::NexmarkSourceOptions o;
    env.from_source(nexmark::NexmarkSource(o), "endless").sink_to(DiscardingSink<nexmark::Event>());
    auto client = env.execute_async("automatic-unbounded");
    ASSERT_TRUE(client.is_ok()) << client.status().to_string();
    EXPECT_EQ(dynamic_cast<batch::BatchJobClient*>(client->get()), nullptr);
    (*client)->cancel();
    EXPECT_EQ((*client)->wait().status, JobStatus::kCanceled);
  }
}

}  // namespace
}  // namespace sluice
