// Event time in running jobs on the MiniCluster:
//  - watermarks and record timestamps across a hash exchange at parallelism > 1 (in band, never backwards, the
//    end of event time reaches every subtask, timestamps survive the wire, no on-time record behind the
//    watermark);
//  - assign_timestamps_and_watermarks on a stream without timestamps;
//  - per-split watermark state restored to its checkpointed values: with punctuated emission, the late-record
//    decisions of runs with seeded failures equal those of a straightforward pass over the events (the
//    failure-free answer), and both outputs (on-time and late) are exactly-once.
// Event-time timers fired by watermarks: event_time_timers_it.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster/mini_cluster.h"
#include "event_time_source.h"
#include "sluice/connectors/file/transactional_file_sink.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using namespace event_time_test;  // NOLINT: the shared test source

// What the probes downstream of the exchange saw, over all subtasks.
struct ProbeLog {
  std::mutex mu;
  int64_t records = 0;
  int64_t without_timestamp = 0;
  int64_t wrong_timestamp = 0;
  int64_t behind_watermark = 0;   // on-time records at or below the probe's watermark
  int64_t watermarks = 0;
  int64_t backwards = 0;
  int32_t saw_end_of_time = 0;    // subtasks that received kMaxWatermark
  void reset() {
    std::lock_guard l(mu);
    records = without_timestamp = wrong_timestamp = behind_watermark = watermarks = backwards = 0;
    saw_end_of_time = 0;
  }
};
ProbeLog g_probe;

// Checks each record's timestamp (as read from the wire) and its position relative to the watermark.
class Probe final : public OneInputStreamOperator<Ev, Ev> {
 public:
  void collect(Ev&& e) override {
    const RecordTimestamp& rt = record_timestamp();
    ++records_;
    if (!rt.has_timestamp) {
      ++without_ts_;
    } else if (rt.timestamp_ms != e.ts) {
      ++wrong_ts_;
    }
    if (e.ts <= current_watermark_ms()) ++behind_;
    output_->collect(std::move(e));
  }
  void process_watermark(int64_t wm) override {
    ++watermarks_;
    if (wm <= current_watermark_ms()) ++backwards_;
    if (wm == kMaxWatermark) end_ = true;
    StreamOperator::process_watermark(wm);
  }
  void close() override {
    std::lock_guard l(g_probe.mu);
    g_probe.records += records_;
    g_probe.without_timestamp += without_ts_;
    g_probe.wrong_timestamp += wrong_ts_;
    g_probe.behind_watermark += behind_;
    g_probe.watermarks += watermarks_;
    g_probe.backwards += backwards_;
    g_probe.saw_end_of_time += end_ ? 1 : 0;
  }

 private:
  int64_t records_ = 0, without_ts_ = 0, wrong_ts_ = 0, behind_ = 0, watermarks_ = 0, backwards_ = 0;
  bool end_ = false;
};

// Collects records into a global vector (at-least-once; for runs without failures).
std::mutex g_out_mu;
std::vector<Ev> g_out;
struct CollectSink final : Sink<Ev> {
  struct Writer final : SinkWriter<Ev> {
    void write(Ev&& e) override {
      std::lock_guard l(g_out_mu);
      g_out.push_back(e);
    }
    void flush(bool) override {}
  };
  std::unique_ptr<SinkWriter<Ev>> create_writer(SinkInitContext&) const override { return std::make_unique<Writer>(); }
};

TEST(Watermarks, AcrossAHashExchangeAtParallelismAboveOne) {
  g_probe.reset();
  g_out.clear();
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  const int64_t splits = 5, per_split = 400;
  auto events = env.from_source(EvSource(splits, per_split, 0), punctuated_strategy(), "events");
  events.key_by([](const Ev& e) { return e.index % 7; })
      .transform<Ev>("probe", [] { return std::make_unique<Probe>(); })
      .set_parallelism(3)
      .sink_to(CollectSink{});
  auto result = env.execute("watermarks-exchange");
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  ASSERT_EQ(result->status, JobStatus::kFinished) << result->error.to_string();
  const auto late = late_oracle(splits, per_split);
  EXPECT_EQ(g_probe.records, splits * per_split - static_cast<int64_t>(late.size()));
  EXPECT_EQ(g_out.size(), static_cast<size_t>(g_probe.records));
  EXPECT_EQ(g_probe.without_timestamp, 0) << "the edge after a source with a strategy carries timestamps";
  EXPECT_EQ(g_probe.wrong_timestamp, 0);
  EXPECT_EQ(g_probe.backwards, 0) << "a task's watermark never goes backwards";
  EXPECT_EQ(g_probe.behind_watermark, 0) << "an on-time record is never behind the watermark downstream";
  EXPECT_GT(g_probe.watermarks, 3) << "punctuated watermarks travel in band";
  EXPECT_EQ(g_probe.saw_end_of_time, 3) << "the end of event time reaches every subtask";
}

// Process functions read the record's timestamp through ctx.timestamp().
std::atomic<int64_t> g_ctx_timestamp_mismatches{0};
std::atomic<int64_t> g_ctx_timestamps_seen{0};
struct CheckContextTimestamp final : ProcessFunction<Ev, Ev> {
  void process_element(const Ev& e, ProcessContext& ctx, Collector<Ev>& out) override {
    g_ctx_timestamps_seen.fetch_add(1);
    if (ctx.timestamp() != std::optional<int64_t>(e.ts)) g_ctx_timestamp_mismatches.fetch_add(1);
    out.collect(Ev(e));
  }
};

TEST(Watermarks, AssignTimestampsAndWatermarksOnAStreamWithoutThem) {
  g_ctx_timestamp_mismatches = 0;
  g_ctx_timestamps_seen = 0;
  g_probe.reset();
  g_out.clear();
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  std::vector<Ev> input;
  for (int64_t i = 0; i < 500; ++i) input.push_back(Ev{0, i, 10 * i});
  env.from_collection(input)
      .assign_timestamps_and_watermarks(
          WatermarkStrategy<Ev>::for_generator([](const WatermarkGeneratorContext&) {
            return std::make_unique<PunctuatedBound>();
          }).with_timestamp_assigner([](const Ev& e) { return e.ts; }))
      .key_by([](const Ev& e) { return e.index % 5; })
      .transform<Ev>("probe", [] { return std::make_unique<Probe>(); })
      .process(CheckContextTimestamp{})
      .sink_to(CollectSink{});
  auto result = env.execute("assign-timestamps");
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  ASSERT_EQ(result->status, JobStatus::kFinished) << result->error.to_string();
  EXPECT_EQ(g_probe.records, 500);
  EXPECT_EQ(g_probe.without_timestamp, 0);
  EXPECT_EQ(g_probe.wrong_timestamp, 0);
  EXPECT_EQ(g_probe.backwards, 0);
  EXPECT_EQ(g_probe.saw_end_of_time, 2);
  EXPECT_EQ(g_ctx_timestamps_seen.load(), 500);
  EXPECT_EQ(g_ctx_timestamp_mismatches.load(), 0) << "ctx.timestamp() is the record's timestamp";
}

// Periodic emission runs on processing time (the task's clock): with a manual clock that the test moves, the
// bounded-out-of-orderness generator's watermarks reach the operators behind the exchange before the end.
TEST(Watermarks, PeriodicEmissionFollowsTheTaskClock) {
  g_probe.reset();
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto clock = std::make_shared<ManualClock>(1'000'000);
  env.set_clock(clock);
  auto strategy = WatermarkStrategy<Ev>::for_bounded_out_of_orderness(std::chrono::milliseconds(kBoundMs))
                      .with_timestamp_assigner([](const Ev& e) { return e.ts; });
  env.from_source(EvSource(4, 600, 4), strategy, "events")
      .key_by([](const Ev& e) { return e.index % 3; })
      .transform<Ev>("probe", [] { return std::make_unique<Probe>(); })
      .sink_to(CollectSink{});
  auto client = env.execute_async("periodic");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  std::atomic<bool> done{false};
  std::thread mover([&] {
    while (!done.load()) {
      clock->advance_ms(50);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  auto result = (*client)->wait();
  done = true;
  mover.join();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  EXPECT_EQ(g_probe.backwards, 0);
  EXPECT_EQ(g_probe.saw_end_of_time, 2);
  EXPECT_GT(g_probe.watermarks, 2) << "periodic watermarks arrived besides the final one of each subtask";
}

// ---- restore of per-split watermark state, exactly-once under seeded failures ----------------------------

std::set<std::pair<int64_t, int64_t>> read_lines(const std::string& dir, int64_t* duplicates) {
  std::set<std::pair<int64_t, int64_t>> out;
  *duplicates = 0;
  if (!fs::exists(dir)) return out;
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.path().filename().string().rfind("part-", 0) != 0) continue;
    std::ifstream in(f.path());
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      int64_t s = 0, i = 0;
      char comma = 0;
      ls >> s >> comma >> i;
      if (!out.insert({s, i}).second) ++*duplicates;
    }
  }
  return out;
}

struct RunOutcome {
  JobStatus status = JobStatus::kFailed;
  std::string error;
  size_t fired = 0;
};

RunOutcome run_restore_job(const std::string& base, uint32_t seed, int failures) {
  Configuration config;
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", "20ms").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", base + "/ck").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.type", "fixed-delay").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.fixed-delay.attempts", std::to_string(failures + 2)).is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.fixed-delay.delay", "10ms").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  auto encode = [](const Ev& e, std::string& out) { out = std::to_string(e.split) + "," + std::to_string(e.index); };
  auto events = env.from_source(EvSource(6, 1500, 8), punctuated_strategy(), "events").uid("events");
  events.get_side_output(OutputTag<Ev>("late"))
      .sink_to(file::TransactionalFileSink<Ev>(base + "/late", encode))
      .uid("late-sink");
  events.key_by([](const Ev& e) { return e.index % 7; })
      .transform<Ev>("probe", [] { return std::make_unique<Probe>(); })
      .uid("probe")
      .sink_to(file::TransactionalFileSink<Ev>(base + "/on-time", encode))
      .uid("on-time-sink");
  auto client = env.execute_async("watermark-restore");
  RunOutcome outcome;
  if (!client.is_ok()) {
    outcome.error = client.status().to_string();
    return outcome;
  }
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  std::mt19937 rng(seed);
  const runtime::FailurePoint points[] = {runtime::FailurePoint::kSource, runtime::FailurePoint::kKeyedOperator,
                                          runtime::FailurePoint::kSink};
  for (int i = 0; i < failures && cp != nullptr; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30 + rng() % 120));
    auto point = points[rng() % 3];
    int32_t vertex = point == runtime::FailurePoint::kSource ? 0 : -1;
    Status armed = cp->arm_failure(point, vertex, -1, "watermark restore failure " + std::to_string(i + 1) +
                                                          " of seed " + std::to_string(seed));
    EXPECT_TRUE(armed.is_ok()) << armed.to_string();
  }
  auto result = (*client)->wait();
  outcome.status = result.status;
  outcome.error = result.error.to_string();
  if (cp != nullptr) outcome.fired = cp->injected_failures().size();
  return outcome;
}

std::vector<uint32_t> seeds() {
  std::vector<uint32_t> s;
  if (const char* env = std::getenv("SLUICE_WATERMARK_SEEDS")) {
    std::stringstream ss(env);
    std::string tok;
    while (std::getline(ss, tok, ',')) s.push_back(static_cast<uint32_t>(std::stoul(tok)));
  }
  if (s.empty()) s = {1, 2};
  return s;
}

TEST(Watermarks, PerSplitStateRestoresSoLateDecisionsEqualTheFailureFreeRun) {
  const int64_t splits = 6, per_split = 1500;
  const auto late = late_oracle(splits, per_split);
  ASSERT_GT(late.size(), 100u);
  std::set<std::pair<int64_t, int64_t>> on_time;
  for (int64_t s = 0; s < splits; ++s) {
    for (int64_t i = 0; i < per_split; ++i) {
      if (!late.count({s, i})) on_time.insert({s, i});
    }
  }
  for (uint32_t seed : seeds()) {
    for (int failures : {0, 3}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", failures " + std::to_string(failures));
      const std::string base = ::testing::TempDir() + "sluice-wm-" + std::to_string(::getpid()) + "-" +
                               std::to_string(seed) + "-" + std::to_string(failures);
      fs::remove_all(base);
      g_probe.reset();
      RunOutcome r = run_restore_job(base, seed, failures);
      ASSERT_EQ(r.status, JobStatus::kFinished) << r.error;
      int64_t dup_late = 0, dup_on_time = 0;
      auto got_late = read_lines(base + "/late", &dup_late);
      auto got_on_time = read_lines(base + "/on-time", &dup_on_time);
      EXPECT_EQ(dup_late, 0);
      EXPECT_EQ(dup_on_time, 0);
      EXPECT_TRUE(got_late == late) << "late decisions differ from the failure-free run: " << got_late.size()
                                    << " late records vs " << late.size() << " (" << r.fired << " failures fired)";
      EXPECT_TRUE(got_on_time == on_time) << got_on_time.size() << " on-time records vs " << on_time.size();
      EXPECT_EQ(g_probe.backwards, 0);
      if (failures > 0) {
        EXPECT_GE(r.fired, 1u) << "no failure fired: the test proved nothing about restores";
      }
      fs::remove_all(base);
    }
  }
}

}  // namespace
}  // namespace sluice
