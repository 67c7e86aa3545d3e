// State schema evolution end to end: a program keeps per-key statistics in a struct, v1; it is stopped
// with a savepoint; the next version of the program, whose struct gained a field with a default (v2), restores
// the savepoint at another parallelism on both backends and finds every value, the new field at its default. A
// version whose struct changed a field's type (v3) fails the restore with an error naming the state and the
// field. The structs live in namespaces so they share the name `Stats`, as one struct across releases does.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
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

constexpr int64_t kRecords = 3'000;
constexpr int64_t kKeys = 30;

namespace v1 {
struct Stats {
  int64_t count = 0;
  int64_t sum = 0;
  SLUICE_FIELDS(Stats, count, sum)
};
}  // namespace v1
namespace v2 {
struct Stats {
  int64_t count = 0;
  std::string label = "unlabelled";  // added, with a default; placed between old fields
  int64_t sum = 0;
  SLUICE_FIELDS(Stats, count, label, sum)
};
}  // namespace v2
namespace v3 {
struct Stats {
  double count = 0;  // another type
  int64_t sum = 0;
  SLUICE_FIELDS(Stats, count, sum)
};
}  // namespace v3

int64_t key_of(const int64_t& v) { return v >= 0 ? v % kKeys : -v - 1; }

// Numbers (n >= 0) update the stats (a ValueState, and a MapState by n % 4); a probe (-(key + 1)) reports them.
template <class Stats>
class Keeper final : public KeyedProcessFunction<int64_t, int64_t, std::string> {
 public:
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    stats_ = &get_state(ValueStateDescriptor<Stats>("stats"));
    buckets_ = &get_map_state(MapStateDescriptor<int64_t, Stats>("buckets"));
  }
  void process_element(const int64_t& v, KeyedProcessContext<int64_t>&, Collector<std::string>& out) override {
    if (v >= 0) {
      Stats s = stats_->value().value_or(Stats{});
      s.count += 1;
      s.sum += v;
      stats_->update(s);
      Stats b = buckets_->get(v % 4).value_or(Stats{});
      b.count += 1;
      buckets_->put(v % 4, b);
      return;
    }
    if constexpr (std::is_same_v<Stats, v2::Stats>) {
      const Stats s = stats_->value().value_or(Stats{});
      std::string line = "key=" + std::to_string(key_of(v)) + " count=" + std::to_string(s.count) +
                         " sum=" + std::to_string(s.sum) + " label=" + s.label + " buckets=";
      for (int64_t b = 0; b < 4; ++b) {
        const Stats bs = buckets_->get(b).value_or(Stats{});
        line += std::to_string(bs.count) + "/" + bs.label + ",";
      }
      out.collect(line);
    }
  }

 private:
  ValueState<Stats>* stats_ = nullptr;
  MapState<int64_t, Stats>* buckets_ = nullptr;
};

std::vector<std::string> expected_lines() {
  std::vector<std::string> lines;
  for (int64_t k = 0; k < kKeys; ++k) {
    int64_t count = 0, sum = 0, buckets[4] = {};
    for (int64_t v = k; v < kRecords; v += kKeys) {
      ++count;
      sum += v;
      ++buckets[v % 4];
    }
    std::string line = "key=" + std::to_string(k) + " count=" + std::to_string(count) + " sum=" + std::to_string(sum) +
                       " label=unlabelled buckets=";
    for (int64_t b : buckets) line += std::to_string(b) + "/unlabelled,";
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

Configuration base_config(const std::string& ck) {
  Configuration config;
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", "1h").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", ck).is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.type", "none").is_ok());
  return config;
}

// The v1 program, stopped with a savepoint into `dir`; returns the savepoint's path.
std::string write_v1_savepoint(const std::string& dir) {
  StreamExecutionEnvironment env(base_config(dir + "/ck"));
  env.set_parallelism(2);
  env.from_generator(int64_t{1} << 40, [](int64_t i) { return i; }, 50'000)
      .uid("numbers")
      .filter([](const int64_t& v) { return v < kRecords; })
      .uid("first-numbers")
      .key_by([](const int64_t& v) { return key_of(v); })
      .process(Keeper<v1::Stats>{})
      .uid("stats")
      .sink_to(DiscardingSink<std::string>())
      .uid("discard");
  auto client = env.execute_async("schema-v1");
  EXPECT_TRUE(client.is_ok()) << client.status().to_string();
  if (!client.is_ok()) return "";
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  EXPECT_NE(cp, nullptr);
  if (cp == nullptr) return "";
  std::this_thread::sleep_for(std::chrono::seconds(1));  // well past kRecords at 50 K/s
  auto trigger = cp->stop_with_savepoint(dir, /*drain=*/false);
  EXPECT_TRUE(trigger.is_ok()) << trigger.status().to_string();
  if (!trigger.is_ok()) return "";
  EXPECT_EQ((*client)->wait().status, JobStatus::kFinished);
  auto st = cp->wait_savepoint(*trigger, 60'000);
  EXPECT_TRUE(st && st->state == cluster::SavepointRequestStatus::State::kCompleted);
  return st ? st->location : "";
}

// Restores `savepoint` into the program with struct Stats, at `parallelism` on `backend`, and probes every key.
template <class Stats>
Result<JobExecutionResult> restore(const std::string& savepoint, const std::string& ck, const char* backend,
                                   int32_t parallelism, std::vector<std::string>* lines,
                                   const std::vector<std::string>& settings = {}) {
  Configuration config = base_config(ck);
  for (const std::string& kv : settings) EXPECT_TRUE(config.apply_dynamic_property(kv).is_ok()) << kv;
  EXPECT_TRUE(config.set_string("state.backend.type", backend).is_ok());
  EXPECT_TRUE(config.set_string("execution.state-recovery.path", savepoint).is_ok());
  EXPECT_TRUE(config.set_string("execution.state-recovery.ignore-unclaimed-state", "true").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(parallelism);
  std::vector<int64_t> probes;
  for (int64_t k = 0; k < kKeys; ++k) probes.push_back(-(k + 1));
  auto out = std::make_shared<CollectedRecords<std::string>>();
  env.from_collection(probes)
      .uid("probes")
      .key_by([](const int64_t& v) { return key_of(v); })
      .process(Keeper<Stats>{})
      .uid("stats")
      .sink_to(CollectSink<std::string>(out))
      .uid("collect");
  auto result = env.execute("schema-restore");
  *lines = out->snapshot();
  std::sort(lines->begin(), lines->end());
  return result;
}

TEST(SchemaMigrationIT, AStructThatGainedAFieldRestoresOnBothBackendsAndAChangedTypeFailsNamingIt) {
  const std::string base = ::testing::TempDir() + "schema-migration-it-" + std::to_string(::getpid());
  fs::remove_all(base);
  const std::string savepoint = write_v1_savepoint(base + "/savepoints");
  ASSERT_FALSE(savepoint.empty());
  const std::vector<std::string> expected = expected_lines();

  for (auto [backend, parallelism] : {std::pair{"hashmap", 3}, std::pair{"rocksdb", 1}}) {
    SCOPED_TRACE(std::string(backend) + " at parallelism " + std::to_string(parallelism));
    std::vector<std::string> lines;
    auto result = restore<v2::Stats>(savepoint, base + "/ck-" + backend, backend, parallelism, &lines);
    ASSERT_TRUE(result.is_ok()) << result.status().to_string();
    ASSERT_EQ(result->status, JobStatus::kFinished) << result->error.to_string();
    EXPECT_EQ(lines, expected);
  }

  // An incompatible state fails the job at once, whatever the restart strategy: restarting cannot change the
  // savepoint's bytes (kInvalidArgument is never restarted; docs/fault-tolerance.md). A restart would first wait 60 s.
  std::vector<std::string> lines;
  auto failed = restore<v3::Stats>(savepoint, base + "/ck-v3", "rocksdb", 2, &lines,
                                   {"restart-strategy.type=fixed-delay", "restart-strategy.fixed-delay.attempts=3",
                                    "restart-strategy.fixed-delay.delay=60s"});
  ASSERT_TRUE(failed.is_ok()) << failed.status().to_string();
  EXPECT_EQ(failed->status, JobStatus::kFailed);
  EXPECT_EQ(failed->error.code(), StatusCode::kInvalidArgument) << failed->error.to_string();
  EXPECT_LT(failed->runtime_ms, 60'000) << "restarted: " << failed->error.to_string();
  const std::string error = failed->error.to_string();
  EXPECT_NE(error.find("state 'stats'"), std::string::npos) << error;
  EXPECT_NE(error.find("field 'count': restored as i64, registered as f64"), std::string::npos) << error;
  fs::remove_all(base);
}

}  // namespace
}  // namespace sluice
