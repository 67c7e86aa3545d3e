// execution.runtime-mode BATCH with keyed two-input operators (docs/batch.md, "Sorted input"): both inputs of a
// keyed two-input head go through one sorter and reach the operator in one key order, so its keyed state holds one
// key at a time. On two bounded sources of different types, at parallelism 2 (stage 0: the sources; stage 1: the
// two-input operator with its exactly-once file sink):
// - connect().key_by().process(KeyedCoProcessFunction) (per key: count and sum of each input, emitted by an
//   event-time timer), an interval join, and a window join give the same committed output in BATCH and STREAMING,
//   equal to a brute-force oracle, and in BATCH the two-input heads read sorted input (sorted_records), a key's
//   records of both inputs in timestamp order;
// - state-size probes: the co-process function's backend holds one key (its accumulator and two timers) and a
//   processing-time timer fires for every key when the key ends; the interval join's backend never holds more than
//   one key's buffers and cleanup timers (STREAMING holds every key of the subtask);
// - with execution.sorted-inputs.memory far below the input, the sorter spills runs and the result is the same;
// - a seeded failure in the two-input operator re-runs only its stage (stage_runs {1, 2}) with the same result;
// - a custom keyed two-input operator (transform) sees no record of an input after that input's end_input_of, and
//   end_input once after both (the task ends a sorted head's inputs only after its last channel).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "batch_it_util.h"
#include "seeded_failover.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/sluice.h"
#include "sluice/windowing/window_join.h"

namespace sluice {
namespace {

constexpr int64_t kLeftEvents = 6'000;
constexpr int64_t kRightEvents = 4'000;
constexpr int64_t kKeys = 13;
constexpr int64_t kLower = -15;  // interval join: b.ts - a.ts in [kLower, kUpper]
constexpr int64_t kUpper = 10;
constexpr int64_t kWindowMs = 100;

struct Left {
  int64_t key = 0;
  int64_t ts = 0;
  int64_t value = 0;
  SLUICE_FIELDS(Left, key, ts, value)
};
// The right input's own type: its bytes cannot pass for a Left (a mix-up of the inputs fails to decode).
struct Right {
  int64_t key = 0;
  int64_t ts = 0;
  std::string tag;
  SLUICE_FIELDS(Right, key, ts, tag)
};
Left left_of(int64_t i) { return Left{(i * 7919) % kKeys, i, (i * 31) % 1000}; }
Right right_of(int64_t j) { return Right{(j * 104729) % kKeys, j * 3 / 2, "r" + std::to_string(j)}; }
int64_t right_value(const Right& r) { return std::stoll(r.tag.substr(1)) % 977; }

struct Line {
  std::string text;
  SLUICE_FIELDS(Line, text)
};

std::atomic<int64_t> g_max_entries{0};       // the largest keyed-state entry count the two-input function saw
std::atomic<int64_t> g_processing_fired{0};  // processing-time timers fired (co-process)
std::atomic<int64_t> g_key_time_regressions{0};  // co-process: records older than the key's previous record

void probe(RuntimeContext& ctx) {
  const int64_t entries = ctx.keyed_state_backend<KeyedStateBackend<int64_t>>().num_entries();
  int64_t seen = g_max_entries.load();
  while (entries > seen && !g_max_entries.compare_exchange_weak(seen, entries)) {}
}

std::string join(std::initializer_list<int64_t> values) {
  std::string s;
  for (int64_t v : values) s += (s.empty() ? "" : ",") + std::to_string(v);
  return s;
}

// Per key: count and value sum of each input; an event-time timer far ahead emits them (BATCH: when the key
// ends), a processing-time timer an hour ahead counts as fired (BATCH: when the key ends).
struct SumBoth final : KeyedCoProcessFunction<int64_t, Left, Right, Line> {
  struct Acc {
    int64_t count1 = 0, sum1 = 0, count2 = 0, sum2 = 0;
    int64_t last_ts = INT64_MIN;  // the key's previous record's timestamp, either input
    SLUICE_FIELDS(Acc, count1, sum1, count2, sum2, last_ts)
  };
  ValueState<Acc>* acc = nullptr;
  void open(RuntimeContext& ctx) override {
    KeyedCoProcessFunction::open(ctx);
    acc = &get_state(ValueStateDescriptor<Acc>("acc"));
  }
  void add(KeyedProcessContext<int64_t>& ctx, int input, int64_t value) {
    Acc a = acc->value().value_or(Acc{});
    if (a.count1 + a.count2 == 0) {
      ctx.timer_service().register_event_time_timer(int64_t{1} << 40);
      ctx.timer_service().register_processing_time_timer(ctx.timer_service().current_processing_time() + 3'600'000);
    }
    (input == 1 ? a.count1 : a.count2) += 1;
    (input == 1 ? a.sum1 : a.sum2) += value;
    const int64_t ts = ctx.timestamp().value_or(INT64_MIN);
    if (ts < a.last_ts) g_key_time_regressions.fetch_add(1);
    a.last_ts = ts;
    acc->update(a);
    probe(runtime_context());
  }
  void process_element1(const Left& l, KeyedProcessContext<int64_t>& ctx, Collector<Line>&) override {
    add(ctx, 1, l.value);
  }
  void process_element2(const Right& r, KeyedProcessContext<int64_t>& ctx, Collector<Line>&) override {
    add(ctx, 2, right_value(r));
  }
  void on_timer(int64_t, KeyedOnTimerContext<int64_t>& ctx, Collector<Line>& out) override {
    if (ctx.time_domain() == TimeDomain::kProcessingTime) {
      g_processing_fired.fetch_add(1);
      return;
    }
    const Acc a = acc->value().value_or(Acc{});
    out.collect(Line{join({ctx.current_key(), a.count1, a.sum1, a.count2, a.sum2})});
  }
};

struct JoinPair final : ProcessJoinFunction<Left, Right, Line> {
  void process_element(const Left& a, const Right& b, ProcessJoinContext& ctx, Collector<Line>& out) override {
    probe(runtime_context());
    out.collect(Line{join({a.key, a.ts, b.ts, ctx.timestamp(), a.value + right_value(b)})});
  }
};

// A custom keyed two-input operator (ConnectedStreams::transform) that checks the end-of-input contract: no record
// of input n after end_input_of(n), end_input once after both. In BATCH both inputs' records come through one
// channel while the other channels end early, so the task must end the inputs only after the last channel.
// Emits "input,key" per record.
class EndOfInputProbe final : public AbstractKeyedOperator<int64_t, TwoInputStreamOperator<Left, Right, Line>> {
 public:
  void process_element1(Left&& l) override { record(1, l.key); }
  void process_element2(Right&& r) override { record(2, r.key); }
  void end_input_of(int32_t input) override {
    if (ended_[input - 1]) throw std::logic_error("input " + std::to_string(input) + " ended twice");
    ended_[input - 1] = true;
  }
  void end_input() override {
    if (!ended_[0] || !ended_[1]) throw std::logic_error("end_input before both inputs ended");
    AbstractKeyedOperator::end_input();
  }

 private:
  void record(int input, int64_t key) {
    if (ended_[input - 1]) throw std::logic_error("a record of input " + std::to_string(input) + " after its end");
    set_record_key(key);
    output_->collect(Line{join({input, key})});
  }
  bool ended_[2] = {false, false};
};

enum class Job { kCoProcess, kIntervalJoin, kWindowJoin, kEndOfInput };
std::string job_name(Job j) {
  switch (j) {
    case Job::kCoProcess:
      return "CoProcess";
    case Job::kIntervalJoin:
      return "IntervalJoin";
    case Job::kWindowJoin:
      return "WindowJoin";
    case Job::kEndOfInput:
      return "EndOfInput";
  }
  return "?";
}

void build(StreamExecutionEnvironment& env, Job job, const std::string& out) {
  // Bounded out-of-orderness as long as the input: in STREAMING no record is late and state is cleaned up only at
  // the end, so both modes see every record.
  const std::chrono::milliseconds out_of_orderness(kLeftEvents);
  auto left = env.from_source(make_generator_source(kLeftEvents, [](int64_t i) { return left_of(i); }),
                              WatermarkStrategy<Left>::for_bounded_out_of_orderness(out_of_orderness)
                                  .with_timestamp_assigner([](const Left& l) { return l.ts; }),
                              "left")
                  .uid("left");
  auto right = env.from_source(make_generator_source(kRightEvents, [](int64_t j) { return right_of(j); }),
                               WatermarkStrategy<Right>::for_bounded_out_of_orderness(out_of_orderness)
                                   .with_timestamp_assigner([](const Right& r) { return r.ts; }),
                               "right")
                   .uid("right");
  auto lk = [](const Left& l) { return l.key; };
  auto rk = [](const Right& r) { return r.key; };
  DataStream<Line> result = [&] {
    switch (job) {
      case Job::kCoProcess:
        return left.connect(right).key_by(lk, rk).process(SumBoth{});
      case Job::kIntervalJoin:
        return left.key_by(lk).interval_join(right.key_by(rk)).between(kLower, kUpper).process(JoinPair{});
      case Job::kEndOfInput:
        return left.connect(right).key_by(lk, rk).transform<Line>("end-of-input-probe", [] {
          return std::make_unique<EndOfInputProbe>();
        });
      case Job::kWindowJoin:
        break;
    }
    return left.join(right).where(lk).equal_to(rk).window(TumblingEventTimeWindows::of(kWindowMs)).apply(
        [](const Left& a, const Right& b) { return Line{join({a.key, a.ts, b.ts, a.value + right_value(b)})}; });
  }();
  result.uid("two-input")
      .sink_to(file::TransactionalFileSink<Line>(out, [](const Line& l, std::string& s) { s += l.text; }))
      .uid("sink");
}

std::multiset<std::string> oracle(Job job) {
  std::multiset<std::string> lines;
  if (job == Job::kCoProcess) {
    std::map<int64_t, std::array<int64_t, 4>> acc;
    for (int64_t i = 0; i < kLeftEvents; ++i) {
      auto& a = acc[left_of(i).key];
      a[0] += 1;
      a[1] += left_of(i).value;
    }
    for (int64_t j = 0; j < kRightEvents; ++j) {
      auto& a = acc[right_of(j).key];
      a[2] += 1;
      a[3] += right_value(right_of(j));
    }
    for (const auto& [k, a] : acc) lines.insert(join({k, a[0], a[1], a[2], a[3]}));
    return lines;
  }
  if (job == Job::kEndOfInput) {
    for (int64_t i = 0; i < kLeftEvents; ++i) lines.insert(join({1, left_of(i).key}));
    for (int64_t j = 0; j < kRightEvents; ++j) lines.insert(join({2, right_of(j).key}));
    return lines;
  }
  for (int64_t i = 0; i < kLeftEvents; ++i) {
    const Left a = left_of(i);
    for (int64_t j = 0; j < kRightEvents; ++j) {
      const Right b = right_of(j);
      if (a.key != b.key) continue;
      if (job == Job::kIntervalJoin && b.ts - a.ts >= kLower && b.ts - a.ts <= kUpper) {
        lines.insert(join({a.key, a.ts, b.ts, std::max(a.ts, b.ts), a.value + right_value(b)}));
      } else if (job == Job::kWindowJoin && a.ts / kWindowMs == b.ts / kWindowMs) {
        lines.insert(join({a.key, a.ts, b.ts, a.value + right_value(b)}));
      }
    }
  }
  return lines;
}

// The most records of one key on both inputs: the interval join's backend holds, for one key, its two buffers (a
// map per side is one entry) and at most one cleanup timer per record.
int64_t max_records_of_a_key() {
  std::map<int64_t, int64_t> n;
  for (int64_t i = 0; i < kLeftEvents; ++i) ++n[left_of(i).key];
  for (int64_t j = 0; j < kRightEvents; ++j) ++n[right_of(j).key];
  int64_t most = 0;
  for (const auto& [k, c] : n) most = std::max(most, c);
  return most;
}

struct RunResult {
  std::multiset<std::string> lines;
  batch_test::BatchRun run;
};

RunResult run(Job job, const std::string& mode, const std::vector<std::string>& extra = {},
              const std::vector<batch_test::Failure>& failures = {}) {
  g_max_entries = 0;
  g_processing_fired = 0;
  g_key_time_regressions = 0;
  static int run_number = 0;
  const std::string out = ::testing::TempDir() + "/batch-two-input-it-" + std::to_string(::getpid()) + "-" +
                          std::to_string(++run_number);
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  Configuration c = batch_test::base_config(mode);
  for (const auto& kv : extra) EXPECT_TRUE(c.apply_dynamic_property(kv).is_ok()) << kv;
  StreamExecutionEnvironment env(c);
  build(env, job, out);
  RunResult r;
  r.run = batch_test::execute(env, failures);
  r.lines = failover_test::committed_lines(out);
  std::filesystem::remove_all(out);
  return r;
}

class BatchTwoInputIT : public ::testing::TestWithParam<Job> {};

TEST_P(BatchTwoInputIT, BatchEqualsStreamingAndTheOracle) {
  const Job job = GetParam();
  const std::multiset<std::string> want = oracle(job);
  ASSERT_GE(want.size(), static_cast<size_t>(kKeys));
  RunResult streaming = run(job, "STREAMING");
  const int64_t streaming_max_entries = g_max_entries.load();
  EXPECT_EQ(streaming.lines, want);
  EXPECT_TRUE(streaming.run.stage_runs.empty());  // not the batch runtime

  RunResult batch = run(job, "BATCH");
  EXPECT_EQ(batch.lines, want);
  EXPECT_EQ(batch.run.stage_runs, (std::vector<int32_t>{1, 1}));
  // Every record went through the two-input (or, for the window join, the union's) head's sorter.
  EXPECT_EQ(batch.run.stats.sorted_records, kLeftEvents + kRightEvents);
  EXPECT_EQ(batch.run.stats.sort_spilled_runs, 0);
  if (job == Job::kCoProcess) {
    // One key at a time: its accumulator and its two timers; STREAMING holds every key of the subtask.
    EXPECT_LE(g_max_entries.load(), 3);
    EXPECT_GT(streaming_max_entries, kKeys);
    // Time jumps to +inf for each key when it ends: every key's processing-time timer fires.
    EXPECT_EQ(g_processing_fired.load(), kKeys);
    // Within a key, both inputs' records come in timestamp order (Flink's sorted inputs), not input 1 then input 2.
    EXPECT_EQ(g_key_time_regressions.load(), 0);
  }
  if (job == Job::kIntervalJoin) {
    // At most one key's buffers and cleanup timers; STREAMING keeps them for every key until the end.
    EXPECT_LE(g_max_entries.load(), 2 + max_records_of_a_key());
    EXPECT_GT(streaming_max_entries, 4 * max_records_of_a_key());
    std::printf("interval join: most keyed-state entries %ld (BATCH), %ld (STREAMING); a key has at most %ld records\n",
                g_max_entries.load(), streaming_max_entries, max_records_of_a_key());
  }
}

TEST_P(BatchTwoInputIT, SortAboveItsMemoryBudgetSpillsAndGivesTheSameResult) {
  const Job job = GetParam();
  RunResult batch = run(job, "BATCH", {"execution.sorted-inputs.memory=64kb"});
  EXPECT_EQ(batch.lines, oracle(job));
  EXPECT_GT(batch.run.stats.sort_spilled_runs, 3);
  EXPECT_GT(batch.run.stats.sort_spilled_bytes, 0);
  EXPECT_LE(batch.run.stats.sort_peak_memory_bytes, 64 << 10);
  EXPECT_EQ(batch.run.stats.sorted_records, kLeftEvents + kRightEvents);
}

TEST_P(BatchTwoInputIT, AFailureInTheTwoInputStageReRunsOnlyThatStage) {
  const Job job = GetParam();
  const std::multiset<std::string> want = oracle(job);
  for (uint32_t seed : {1u, 2u}) {
    std::mt19937 rng(seed);
    const int32_t subtask = static_cast<int32_t>(rng() % 2);
    SCOPED_TRACE("seed " + std::to_string(seed) + " subtask " + std::to_string(subtask));
    const batch_test::Failure failure{runtime::FailurePoint::kKeyedOperator, "two-input", subtask};
    RunResult r = run(job, "BATCH", {}, {failure});
    ASSERT_EQ(r.run.injected.size(), 1u);
    EXPECT_EQ(r.lines, want);
    EXPECT_EQ(r.run.stage_runs, (std::vector<int32_t>{1, 2}));
    // The re-run read sorted input too (the count adds up every run's sorters; the failed run's may have been
    // cancelled before its sort finished).
    EXPECT_GE(r.run.stats.sorted_records, kLeftEvents + kRightEvents);
  }
}

INSTANTIATE_TEST_SUITE_P(Jobs, BatchTwoInputIT,
                         ::testing::Values(Job::kCoProcess, Job::kIntervalJoin, Job::kWindowJoin, Job::kEndOfInput),
                         [](const ::testing::TestParamInfo<Job>& p) { return job_name(p.param); });

}  // namespace
}  // namespace sluice
