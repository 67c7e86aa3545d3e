// Compatibility across versions: a savepoint written by an earlier build is kept in the repository
// (tests/data/savepoints/v1-keyed-state, ~40 KB) and every later build must restore it and find the values it holds.
//
// The job that wrote it (write mode below): a generator of kRecords numbers (then an endless tail, filtered out, so
// the job is still running when it is stopped) keyed by n % kKeys into a process function with a ValueState (sum),
// a ListState (every value), a MapState (count per n % 7) and one event-time timer per key, at parallelism 2 on the
// heap backend, stopped with a savepoint once every number was processed. Its keyed state is a pure function of
// the numbers, so the expected values are computed here, not recorded.
//
// The check: a job with the same keyed operator (uid "state") and another source (a probe per key; the old
// source's state is dropped with allow-non-restored-state) restores the savepoint at parallelism 1 and 3, on both
// backends; per key the probe reports the restored sum, list and map, and the end of input fires the restored
// timers: the output must be exactly the expected lines.
//
// To write a new one (after a deliberate format change, keeping the old as well):
//   SLUICE_WRITE_COMPAT_SAVEPOINT=/tmp/sp build/release/tests/savepoint_compat_it
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cluster/mini_cluster.h"
#include "sluice/sink/builtin_sinks.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kRecords = 2'000;
constexpr int64_t kKeys = 50;
constexpr int64_t kTimerBase = 1'000'000;
const char* const kSavepoint = SLUICE_SOURCE_DIR "/tests/data/savepoints/v1-keyed-state";

int64_t key_of(const int64_t& v) { return v >= 0 ? v % kKeys : -v - 1; }

// Numbers (n >= 0) update the state; a probe (-(key + 1)) reports it.
class Stateful final : public KeyedProcessFunction<int64_t, int64_t, std::string> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    sum_ = &get_state(ValueStateDescriptor<int64_t>("sum"));
    values_ = &get_list_state(ListStateDescriptor<int64_t>("values"));
    buckets_ = &get_map_state(MapStateDescriptor<int64_t, int64_t>("buckets"));
  }
  void process_element(const int64_t& v, KeyedProcessContext<int64_t>& ctx, Collector<std::string>& out) override {
    if (v >= 0) {
      sum_->update(sum_->value().value_or(0) + v);
      values_->add(v);
      buckets_->put(v % 7, buckets_->get(v % 7).value_or(0) + 1);
      ctx.timer_service().register_event_time_timer(kTimerBase + ctx.current_key());
      return;
    }
    std::vector<int64_t> values = values_->get();
    std::sort(values.begin(), values.end());
    std::string line = "key=" + std::to_string(ctx.current_key()) + " sum=" + std::to_string(sum_->value().value_or(-1)) +
                       " values=";
    for (int64_t x : values) line += std::to_string(x) + ",";
    line += " buckets=";
    for (int64_t b = 0; b < 7; ++b) line += std::to_string(buckets_->get(b).value_or(0)) + ",";
    out.collect(line);
  }
  void on_timer(int64_t ts, KeyedOnTimerContext<int64_t>& ctx, Collector<std::string>& out) override {
    out.collect("timer key=" + std::to_string(ctx.current_key()) + " at=" + std::to_string(ts));
  }

 private:
  ValueState<int64_t>* sum_ = nullptr;
  ListState<int64_t>* values_ = nullptr;
  MapState<int64_t, int64_t>* buckets_ = nullptr;
};

std::vector<std::string> expected_lines() {
  std::vector<std::string> lines;
  for (int64_t k = 0; k < kKeys; ++k) {
    int64_t sum = 0;
    int64_t buckets[7] = {};
    std::string values;
    for (int64_t v = k; v < kRecords; v += kKeys) {
      sum += v;
      ++buckets[v % 7];
      values += std::to_string(v) + ",";
    }
    std::string line = "key=" + std::to_string(k) + " sum=" + std::to_string(sum) + " values=" + values + " buckets=";
    for (int64_t b : buckets) line += std::to_string(b) + ",";
    lines.push_back(line);
    lines.push_back("timer key=" + std::to_string(k) + " at=" + std::to_string(kTimerBase + k));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

Configuration config_for(const std::string& ck) {
  Configuration config;
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", "1h").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", ck).is_ok());
  return config;
}

// Write mode: the job described above, stopped with a savepoint into `dir`.
void write_savepoint(const std::string& dir) {
  Configuration config = config_for(dir + "/ck");
  // State in files of their own, not inlined into _metadata: the restore reads both.
  ASSERT_TRUE(config.set_string("execution.checkpointing.data-inline-threshold", "0b").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  auto processed = std::make_shared<std::atomic<int64_t>>(0);
  env.from_generator(int64_t{1} << 40, [](int64_t i) { return i; }, 50'000)
      .uid("numbers")
      .filter([](const int64_t& v) { return v < kRecords; })
      .uid("first-numbers")
      .key_by([](const int64_t& v) { return key_of(v); })
      .process(Stateful{})
      .uid("state")
      .map([processed](std::string&& s) {
        processed->fetch_add(1);
        return s;
      })
      .uid("count")
      .sink_to(DiscardingSink<std::string>())
      .uid("discard");
  auto client = env.execute_async("compat-writer");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  ASSERT_NE(cp, nullptr);
  // Every number is in once the generator is well past kRecords (it emits 50 K/s).
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto trigger = cp->stop_with_savepoint(dir, /*drain=*/false);
  ASSERT_TRUE(trigger.is_ok()) << trigger.status().to_string();
  ASSERT_EQ((*client)->wait().status, JobStatus::kFinished);
  auto st = cp->wait_savepoint(*trigger, 60'000);
  ASSERT_TRUE(st && st->state == cluster::SavepointRequestStatus::State::kCompleted);
  std::printf("wrote %s\n", st->location.c_str());
}

struct Target {
  int32_t parallelism;
  const char* backend;
};

TEST(SavepointCompatIT, TheSavepointInTheRepositoryRestoresWithTheExpectedValues) {
  if (const char* dir = std::getenv("SLUICE_WRITE_COMPAT_SAVEPOINT")) {
    write_savepoint(dir);
    return;
  }
  ASSERT_TRUE(fs::exists(std::string(kSavepoint) + "/_metadata")) << kSavepoint;
  const std::vector<std::string> expected = expected_lines();
  for (const Target& t : {Target{1, "hashmap"}, Target{3, "rocksdb"}, Target{3, "hashmap"}, Target{1, "rocksdb"}}) {
    SCOPED_TRACE(std::string("parallelism ") + std::to_string(t.parallelism) + " on " + t.backend);
    const std::string base = ::testing::TempDir() + "savepoint-compat-" + std::to_string(::getpid());
    fs::remove_all(base);
    // A copy: a restore never writes into a savepoint, but the repository's must not even risk it.
    fs::create_directories(base);
    fs::copy(kSavepoint, base + "/savepoint", fs::copy_options::recursive);
    Configuration config = config_for(base + "/ck");
    ASSERT_TRUE(config.set_string("state.backend.type", t.backend).is_ok());
    ASSERT_TRUE(config.set_string("execution.state-recovery.path", base + "/savepoint").is_ok());
    ASSERT_TRUE(config.set_string("execution.state-recovery.ignore-unclaimed-state", "true").is_ok());
    StreamExecutionEnvironment env(config);
    env.set_parallelism(t.parallelism);
    std::vector<int64_t> probes;
    for (int64_t k = 0; k < kKeys; ++k) probes.push_back(-(k + 1));
    auto out = std::make_shared<CollectedRecords<std::string>>();
    env.from_collection(probes)
        .uid("probes")
        .key_by([](const int64_t& v) { return key_of(v); })
        .process(Stateful{})
        .uid("state")
        .sink_to(CollectSink<std::string>(out))
        .uid("collect");
    auto result = env.execute("compat-reader");
    ASSERT_TRUE(result.is_ok()) << result.status().to_string();
    ASSERT_EQ(result->status, JobStatus::kFinished) << result->error.to_string();
    std::vector<std::string> lines = out->snapshot();
    std::sort(lines.begin(), lines.end());
    EXPECT_EQ(lines, expected);
    fs::remove_all(base);
  }
}

}  // namespace
}  // namespace sluice
