// The write-ahead-log sink (sink/write_ahead_sink.h) without a server: over plain files under seeded failures of
// every class (at-least-once: every line of the failure-free run, nothing else), and the deterministic
// at-least-once cell: a failure between a batch's data and its committed-checkpoint marker writes the batch again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cluster/mini_cluster.h"
#include "seeded_failover.h"
#include "sluice/connectors/file/write_ahead_file_sink.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

std::string temp_dir(const std::string& name) {
  std::string d = ::testing::TempDir() + "wal-" + std::to_string(::getpid()) + "-" + name;
  std::filesystem::remove_all(d);
  return d;
}

// v -> "key,count" with key v % 100: one line per record, each distinct.
struct RunningCount final : KeyedProcessFunction<int64_t, int64_t, std::string> {
  ValueState<int64_t>* count = nullptr;
  void open(RuntimeContext& ctx) override {
    KeyedProcessFunction::open(ctx);
    count = &get_state(ValueStateDescriptor<int64_t>("count"));
  }
  void process_element(const int64_t&, KeyedProcessContext<int64_t>& ctx, Collector<std::string>& out) override {
    const int64_t n = count->value().value_or(0) + 1;
    count->update(n);
    out.collect(std::to_string(ctx.current_key()) + "," + std::to_string(n));
  }
};

std::multiset<std::string> failure_free_lines(int64_t records) {
  std::multiset<std::string> out;
  std::map<int64_t, int64_t> n;
  for (int64_t v = 0; v < records; ++v) out.insert(std::to_string(v % 100) + "," + std::to_string(++n[v % 100]));
  return out;
}

auto counts(StreamExecutionEnvironment& env, int64_t records) {
  return env.from_generator(records, [](int64_t i) { return i; }, 20'000)
      .name("numbers")
      .uid("numbers")
      .key_by([](const int64_t& v) { return v % 100; })
      .process(RunningCount{})
      .name("counts")
      .uid("counts");
}

class WriteAheadFileFailover : public ::testing::TestWithParam<uint64_t> {};

TEST_P(WriteAheadFileFailover, EveryLineAtLeastOnceUnderSeededFailures) {
  constexpr int64_t kRecords = 30'000;
  const std::string base = temp_dir("files-" + std::to_string(GetParam()));
  Configuration config;
  failover_test::configure_failover(config, base + "/ck");
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  counts(env, kRecords)
      .sink_to(file::WriteAheadFileSink<std::string>(base + "/out", [](const std::string& s, std::string& l) { l += s; }))
      .name("sink")
      .uid("sink");
  auto client = env.execute_async("wal-files");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  ASSERT_NE(cp, nullptr);
  std::printf("write-ahead file sink: seed %llu\n", static_cast<unsigned long long>(GetParam()));
  failover_test::inject_seeded_failures(**client, *cp, GetParam(), 4, kRecords, [&] {
    return failover_test::records_out((*client)->metrics(), "wal-files.numbers.");
  }, "wal");
  auto result = (*client)->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  failover_test::print_injected_failures(*cp);
  const auto got = failover_test::committed_lines(base + "/out");
  const auto want = failure_free_lines(kRecords);
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), std::set<std::string>(want.begin(), want.end()));
  EXPECT_GE(got.size(), want.size());
  std::filesystem::remove_all(base);
}

INSTANTIATE_TEST_SUITE_P(Seeds, WriteAheadFileFailover, ::testing::Values(1, 2));

// A target in memory whose first commit_checkpoint after `fail_after_batches` batches throws: the failure lands
// after the batch's data and before its marker.
struct MemoryTarget {
  std::mutex mu;
  std::vector<std::string> lines;
  std::set<std::string> markers;
  int64_t batches = 0;
  int64_t fail_after_batches = 3;
  bool failed = false;
};
MemoryTarget g_target;

class FailingMarkerSink final : public WriteAheadSink<std::string> {
 public:
  std::unique_ptr<WriteAheadTarget<std::string>> create_target(WriteAheadContext& ctx) const override {
    return std::make_unique<Target>(ctx);
  }

 private:
  class Target final : public WriteAheadTarget<std::string> {
   public:
    explicit Target(WriteAheadContext& ctx) : ctx_(ctx) {}
    bool is_checkpoint_committed(int32_t subtask, int64_t checkpoint) override {
      std::lock_guard lock(g_target.mu);
      return g_target.markers.count(write_ahead_batch_id(ctx_, subtask, checkpoint)) > 0;
    }
    void send_values(const std::vector<std::string>& values, int32_t, int64_t) override {
      std::lock_guard lock(g_target.mu);
      g_target.lines.insert(g_target.lines.end(), values.begin(), values.end());
      ++g_target.batches;
    }
    void commit_checkpoint(int32_t subtask, int64_t checkpoint) override {
      std::lock_guard lock(g_target.mu);
      if (!g_target.failed && g_target.batches >= g_target.fail_after_batches) {
        g_target.failed = true;
        throw std::runtime_error("failure between a batch's data and its marker");
      }
      g_target.markers.insert(write_ahead_batch_id(ctx_, subtask, checkpoint));
    }

   private:
    WriteAheadContext& ctx_;
  };
};

TEST(WriteAheadSink, AFailureBetweenDataAndMarkerWritesTheBatchAgainAndLosesNothing) {
  constexpr int64_t kRecords = 6'000;
  const std::string base = temp_dir("marker");
  Configuration config;
  failover_test::configure_failover(config, base + "/ck");
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  counts(env, kRecords).sink_to(FailingMarkerSink{}).name("sink").uid("sink");
  auto result = env.execute("wal-marker");
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  ASSERT_EQ(result->status, JobStatus::kFinished) << result->error.to_string();
  ASSERT_TRUE(g_target.failed);
  const std::multiset<std::string> got(g_target.lines.begin(), g_target.lines.end());
  const auto want = failure_free_lines(kRecords);
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), std::set<std::string>(want.begin(), want.end()));
  EXPECT_GT(got.size(), want.size()) << "the batch whose marker failed must have been written twice";
  std::filesystem::remove_all(base);
}

}  // namespace
}  // namespace sluice
