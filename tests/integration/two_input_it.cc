// Two-input operators in running jobs at parallelism 2, with a hash exchange (key_by) on both inputs, on the heap
// and RocksDB backends, with checkpoints:
// - keyed connect / co-process: per key and 100 ms event-time window, the count and weight sum of each input's
//   on-time records in MapState, emitted from an event-time timer at the window's last millisecond (fired by
//   the combined watermark of both inputs). Per-record source watermarks make the answer a function of the
//   events alone: it must equal the hand-computed windows;
// - interval join of the two streams (different record types) between [-15, +10] ms: every pair of on-time
//   records with equal keys, each once, equal to a brute-force nested loop;
// - both under seeded failures at random points (seeded_failover.h): the committed output is exactly-once and
//   equal to the failure-free answer (keyed state and timers of the two-input task come back with each
//   restore); one run with unaligned checkpoints behind a slowed-down two-input task, so its checkpoints carry
//   in-flight data of both inputs as channel state, which a restore must give back to the input it came from
//   (the inputs have different types: a mix-up fails to decode or changes the answer).
#include <gtest/gtest.h>
#include <unistd.h>

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
constexpr int64_t kLeftSplits = 4;
constexpr int64_t kRightSplits = 3;
constexpr int64_t kLower = -15;
constexpr int64_t kUpper = 10;

int64_t window_end(int64_t ts) { return (ts / kWindowMs + 1) * kWindowMs; }
int64_t weight(int64_t split, int64_t index) { return split * 100'000 + index; }

// The right input's own type (input 2), so that its bytes cannot pass for the left input's.
struct Tick {
  int64_t split = 0;
  int64_t index = 0;
  int64_t ts = 0;
  std::string tag;
  SLUICE_FIELDS(Tick, split, index, ts, tag)
};
Tick tick_of(const Ev& e) { return Tick{e.split, e.index, e.ts, "t" + std::to_string(e.index % 7)}; }

struct Line {
  std::string text;
  SLUICE_FIELDS(Line, text)
};

std::atomic<int64_t> g_processed{0};  // records processed by the co-process function, all attempts
std::atomic<int64_t> g_output{0};     // records out of the two-input operator, all attempts
std::atomic<bool> g_slow{false};      // slow the two-input task down (its inputs back up)
void maybe_slow(int64_t n) {
  if (g_slow.load(std::memory_order_relaxed) && n % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
}

// ---- keyed co-process: per-window counts of both inputs ----
struct Acc {
  int64_t count1 = 0, sum1 = 0, count2 = 0, sum2 = 0;
  SLUICE_FIELDS(Acc, count1, sum1, count2, sum2)
};
std::string window_line(int64_t key, int64_t end, const Acc& a) {
  return std::to_string(key) + "," + std::to_string(end) + "," + std::to_string(a.count1) + "," +
         std::to_string(a.sum1) + "," + std::to_string(a.count2) + "," + std::to_string(a.sum2);
}

struct TwoWindowSums final : KeyedCoProcessFunction<int64_t, Ev, Tick, Line> {
  MapState<int64_t, Acc>* windows = nullptr;
  void open(RuntimeContext& ctx) override {
    KeyedCoProcessFunction::open(ctx);
    windows = &get_map_state(MapStateDescriptor<int64_t, Acc>("windows"));
  }
  void add(int64_t ts, KeyedProcessContext<int64_t>& ctx, int input, int64_t w) {
    maybe_slow(g_processed.fetch_add(1));
    if (ctx.timestamp() != std::optional<int64_t>(ts)) throw std::logic_error("record timestamp lost on the wire");
    if (ts <= ctx.timer_service().current_watermark()) throw std::logic_error("an on-time record behind the watermark");
    const int64_t end = window_end(ts);
    Acc a = windows->get(end).value_or(Acc{});
    if (input == 1) {
      ++a.count1;
      a.sum1 += w;
    } else {
      ++a.count2;
      a.sum2 += w;
    }
    windows->put(end, a);
    ctx.timer_service().register_event_time_timer(end - 1);
  }
  void process_element1(const Ev& e, KeyedProcessContext<int64_t>& ctx, Collector<Line>&) override {
    add(e.ts, ctx, 1, weight(e.split, e.index));
  }
  void process_element2(const Tick& t, KeyedProcessContext<int64_t>& ctx, Collector<Line>&) override {
    if (t.tag != "t" + std::to_string(t.index % 7)) throw std::logic_error("a garbled right record");
    add(t.ts, ctx, 2, weight(t.split, t.index));
  }
  void on_timer(int64_t ts, KeyedOnTimerContext<int64_t>& ctx, Collector<Line>& out) override {
    std::optional<Acc> a = windows->get(ts + 1);
    if (!a) throw std::logic_error("timer " + std::to_string(ts) + " without its window (fired twice?)");
    windows->remove(ts + 1);
    out.collect(Line{window_line(ctx.current_key(), ts + 1, *a)});
  }
};

std::multiset<std::string> expected_windows(int64_t per_split) {
  std::map<std::pair<int64_t, int64_t>, Acc> windows;
  for (int input = 1; input <= 2; ++input) {
    const int64_t splits = input == 1 ? kLeftSplits : kRightSplits;
    const auto late = late_oracle(splits, per_split);
    for (int64_t s = 0; s < splits; ++s) {
      for (int64_t i = 0; i < per_split; ++i) {
        if (late.count({s, i})) continue;
        Acc& a = windows[{i % kKeys, window_end(ts_of(s, i))}];
        if (input == 1) {
          ++a.count1;
          a.sum1 += weight(s, i);
        } else {
          ++a.count2;
          a.sum2 += weight(s, i);
        }
      }
    }
  }
  std::multiset<std::string> lines;
  for (const auto& [k, a] : windows) lines.insert(window_line(k.first, k.second, a));
  return lines;
}

// ---- interval join ----
struct JoinLine final : ProcessJoinFunction<Ev, Tick, Line> {
  void process_element(const Ev& a, const Tick& b, ProcessJoinContext& ctx, Collector<Line>& out) override {
    maybe_slow(a.index + b.index);
    out.collect(Line{std::to_string(a.split) + "," + std::to_string(a.index) + "," + std::to_string(b.split) + "," +
                     std::to_string(b.index) + "," + std::to_string(ctx.timestamp())});
  }
};
std::multiset<std::string> expected_pairs(int64_t per_split) {
  std::vector<Ev> left, right;
  for (int input = 1; input <= 2; ++input) {
    const int64_t splits = input == 1 ? kLeftSplits : kRightSplits;
    const auto late = late_oracle(splits, per_split);
    for (int64_t s = 0; s < splits; ++s) {
      for (int64_t i = 0; i < per_split; ++i) {
        if (!late.count({s, i})) (input == 1 ? left : right).push_back(Ev{s, i, ts_of(s, i)});
      }
    }
  }
  std::multiset<std::string> lines;
  for (const Ev& a : left) {
    for (const Ev& b : right) {
      if (a.index % kKeys != b.index % kKeys || b.ts - a.ts < kLower || b.ts - a.ts > kUpper) continue;
      lines.insert(std::to_string(a.split) + "," + std::to_string(a.index) + "," + std::to_string(b.split) + "," +
                   std::to_string(b.index) + "," + std::to_string(std::max(a.ts, b.ts)));
    }
  }
  return lines;
}

enum class Job { kCoProcess, kIntervalJoin };
enum class Mode { kHeap, kRocksDB, kUnalignedHeap };
std::string mode_name(Mode m) { return m == Mode::kHeap ? "HashMap" : m == Mode::kRocksDB ? "RocksDB" : "UnalignedHashMap"; }
std::string job_name(Job j) { return j == Job::kCoProcess ? "CoProcess" : "IntervalJoin"; }

std::unique_ptr<JobClient> start_job(Job job, Mode mode, const std::string& base, int64_t per_split,
                                     int64_t pause_every) {
  Configuration config;
  if (mode == Mode::kRocksDB) {
    EXPECT_TRUE(config.set_string("state.backend.type", "rocksdb").is_ok());
  }
  failover_test::configure_failover(config, base + "/ck");
  if (mode == Mode::kUnalignedHeap) {
    EXPECT_TRUE(config.set_string("execution.checkpointing.unaligned.enabled", "true").is_ok());
    // Small in-flight buffers fill up behind the slowed-down two-input task, so barriers overtake data.
    EXPECT_TRUE(config.set_string("execution.checkpointing.interval", "20ms").is_ok());
  }
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  auto left = env.from_source(EvSource(kLeftSplits, per_split, pause_every), punctuated_strategy(), "left")
                  .uid("left")
                  .key_by([](const Ev& e) { return e.index % kKeys; });
  auto right = env.from_source(EvSource(kRightSplits, per_split, pause_every), punctuated_strategy(), "right")
                   .uid("right")
                   .map([](Ev&& e) { return tick_of(e); })
                   .uid("to-tick")
                   .key_by([](const Tick& t) { return t.index % kKeys; });
  DataStream<Line> out = job == Job::kCoProcess
                             ? left.connect(right).process(TwoWindowSums{})  // KeyedStream::connect
                             : left.interval_join(right).between(kLower, kUpper).process(JoinLine{});
  out.uid("two-input").name("two-input");
  g_slow = mode == Mode::kUnalignedHeap;
  out.map([](Line&& l) {
       g_output.fetch_add(1);
       return std::move(l);
     })
      .uid("after")
      .sink_to(file::TransactionalFileSink<Line>(base + "/out", [](const Line& l, std::string& s) { s += l.text; }))
      .name("sink")
      .uid("sink");
  auto client = env.execute_async("two-input-" + job_name(job));
  EXPECT_TRUE(client.is_ok()) << client.status().to_string();
  return client.is_ok() ? std::move(client).value() : nullptr;
}

std::multiset<std::string> expected_of(Job job, int64_t per_split) {
  return job == Job::kCoProcess ? expected_windows(per_split) : expected_pairs(per_split);
}

std::string base_dir(const std::string& what, Job job, Mode mode) {
  return ::testing::TempDir() + "two-input-" + what + "-" + std::to_string(::getpid()) + "-" + job_name(job) + "-" +
         mode_name(mode);
}

using Param = std::tuple<Job, Mode>;
std::string param_name(const ::testing::TestParamInfo<Param>& p) {
  return job_name(std::get<0>(p.param)) + "_" + mode_name(std::get<1>(p.param));
}

class TwoInputIT : public ::testing::TestWithParam<Param> {};

TEST_P(TwoInputIT, OutputEqualsTheOracle) {
  const auto [job, mode] = GetParam();
  constexpr int64_t kPerSplit = 800;
  const std::string base = base_dir("run", job, mode);
  std::filesystem::remove_all(base);
  auto client = start_job(job, mode, base, kPerSplit, /*pause_every=*/0);
  ASSERT_NE(client, nullptr);
  auto result = client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  const auto expected = expected_of(job, kPerSplit);
  ASSERT_GT(expected.size(), 150u);
  failover_test::expect_committed(base + "/out", expected);
  std::filesystem::remove_all(base);
}

INSTANTIATE_TEST_SUITE_P(Jobs, TwoInputIT,
                         ::testing::Combine(::testing::Values(Job::kCoProcess, Job::kIntervalJoin),
                                            ::testing::Values(Mode::kHeap, Mode::kRocksDB)),
                         param_name);

// Inputs of different partitioning and parallelism: a broadcast control stream from one subtask (every subtask of
// the operator sees all of it) and a rebalanced data stream from three, into a co-map at parallelism 2; and a
// non-keyed co-process with forward inputs. Every record arrives once per subtask that should see it.
TEST(TwoInputPartitioningIT, BroadcastRebalanceAndForwardInputsOfDifferentParallelism) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto out = std::make_shared<CollectedRecords<std::string>>();
  auto data = env.from_sequence(1, 5000).set_parallelism(3);
  auto control = env.from_sequence(1, 20).set_parallelism(1).map([](int64_t x) { return "c" + std::to_string(x); });
  control.set_parallelism(1);
  data.rebalance()
      .connect(control.broadcast())
      .map([](int64_t&& x) { return "d" + std::to_string(x); }, [](std::string&& c) { return c; })
      .sink_to(CollectSink<std::string>(out));
  auto forward_out = std::make_shared<CollectedRecords<std::string>>();
  env.from_sequence(1, 300)
      .connect(env.from_sequence(1, 200).map([](int64_t x) { return std::to_string(x); }))
      .flat_map<std::string>([](const int64_t& x, Collector<std::string>& c) { c.collect("l" + std::to_string(x)); },
                             [](const std::string& x, Collector<std::string>& c) { c.collect("r" + x); })
      .sink_to(CollectSink<std::string>(forward_out));
  auto client = env.execute_async("two-input-partitioning");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  auto result = (*client)->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();

  std::multiset<std::string> expected, expected_forward;
  for (int64_t x = 1; x <= 5000; ++x) expected.insert("d" + std::to_string(x));
  for (int64_t x = 1; x <= 20; ++x) {
    expected.insert("c" + std::to_string(x));
    expected.insert("c" + std::to_string(x));  // once per operator subtask
  }
  for (int64_t x = 1; x <= 300; ++x) expected_forward.insert("l" + std::to_string(x));
  for (int64_t x = 1; x <= 200; ++x) expected_forward.insert("r" + std::to_string(x));
  const auto got = out->snapshot();
  EXPECT_EQ(std::multiset<std::string>(got.begin(), got.end()), expected);
  const auto got_forward = forward_out->snapshot();
  EXPECT_EQ(std::multiset<std::string>(got_forward.begin(), got_forward.end()), expected_forward);
}

class TwoInputFailoverIT : public ::testing::TestWithParam<Param> {};

TEST_P(TwoInputFailoverIT, ExactlyOnceAndEqualToTheFailureFreeRunUnderSeededFailures) {
  const auto [job, mode] = GetParam();
  constexpr int64_t kPerSplit = 1500;
  constexpr int32_t kFailures = 3;
  const uint64_t seed = 31 + 3 * static_cast<uint64_t>(job) + static_cast<uint64_t>(mode);
  std::printf("two-input failover: %s on %s, seed %llu\n", job_name(job).c_str(), mode_name(mode).c_str(),
              static_cast<unsigned long long>(seed));
  const std::string base = base_dir("failover", job, mode);
  std::filesystem::remove_all(base);
  g_processed = 0;
  g_output = 0;
  const auto expected = expected_of(job, kPerSplit);
  // Paced (a 1 ms pause every 2 records of a subtask) so that failures land while records flow.
  auto client = start_job(job, mode, base, kPerSplit, /*pause_every=*/2);
  ASSERT_NE(client, nullptr);
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client.get());
  ASSERT_NE(cp, nullptr);
  // Progress over all attempts: records into the co-process function, or pairs out of the join.
  const int64_t on_time = kPerSplit * (kLeftSplits + kRightSplits) -
                          static_cast<int64_t>(late_oracle(kLeftSplits, kPerSplit).size() +
                                               late_oracle(kRightSplits, kPerSplit).size());
  const bool co_process = job == Job::kCoProcess;
  failover_test::inject_seeded_failures(
      *client, *cp, seed, kFailures, co_process ? on_time : static_cast<int64_t>(expected.size()),
      [co_process] { return co_process ? g_processed.load() : g_output.load(); }, "two-input");
  auto result = client->wait();
  g_slow = false;
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  failover_test::print_injected_failures(*cp);
  EXPECT_EQ(static_cast<int32_t>(cp->injected_failures().size()), kFailures);
  failover_test::expect_committed(base + "/out", expected);
  std::filesystem::remove_all(base);
}

INSTANTIATE_TEST_SUITE_P(Jobs, TwoInputFailoverIT,
                         ::testing::Combine(::testing::Values(Job::kCoProcess, Job::kIntervalJoin),
                                            ::testing::Values(Mode::kHeap, Mode::kRocksDB, Mode::kUnalignedHeap)),
                         param_name);

}  // namespace
}  // namespace sluice
