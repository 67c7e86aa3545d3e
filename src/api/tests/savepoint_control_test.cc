// Savepoints from the program itself (sluice/api/savepoint_control.h): a savepoint while the job runs, a stop with
// a savepoint that the next run restores without losing or repeating a record in its state - with checkpointing on
// and off - and the refusal of a request without a folder.
#include "sluice/api/savepoint_control.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/sluice.h"

namespace sluice {
namespace {

using KeyedSum = std::pair<int64_t, int64_t>;  // key, running sum of the values of that key
constexpr int64_t kSumRecords = 40'000;
constexpr int64_t kSumKeys = 16;

std::string savepoint_scratch(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "savepoint-control-" + name + "-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  return dir;
}

Configuration checkpointed(const std::string& dir) {
  Configuration c;
  EXPECT_TRUE(c.set_string("execution.checkpointing.interval", "50ms").is_ok());
  EXPECT_TRUE(c.set_string("execution.checkpointing.dir", dir + "/checkpoints").is_ok());
  return c;
}

// Record i is (i % keys, i), paced so the job runs for about four seconds; the keyed running sums go to `out`.
void build_keyed_sums(StreamExecutionEnvironment& env, const std::shared_ptr<CollectedRecords<KeyedSum>>& out) {
  env.set_parallelism(2);
  env.from_generator(kSumRecords, [](int64_t i) { return KeyedSum{i % kSumKeys, i}; }, 10'000)
      .uid("numbers")
      .key_by([](const KeyedSum& r) { return r.first; })
      .reduce([](const KeyedSum& a, const KeyedSum& b) { return KeyedSum{a.first, a.second + b.second}; })
      .uid("sums")
      .sink_to(CollectSink<KeyedSum>(out))
      .uid("sink");
}

// The largest running sum per key: the final one, since every value is >= 0.
std::map<int64_t, int64_t> final_sums(const std::vector<KeyedSum>& records) {
  std::map<int64_t, int64_t> out;
  for (const auto& [key, sum] : records) out[key] = std::max(out[key], sum);
  return out;
}

// Runs the job restoring `savepoint` (configured by `config`) to its end: with the `before` records of the run that
// stopped, every record counts once, and every key's final sum is the sum of all its values.
void expect_resumed_exactly_once(Configuration config, const std::string& savepoint, size_t before) {
  ASSERT_TRUE(config.set_string("execution.state-recovery.path", savepoint).is_ok());
  auto out = std::make_shared<CollectedRecords<KeyedSum>>();
  StreamExecutionEnvironment env(config);
  build_keyed_sums(env, out);
  auto rerun = env.execute("keyed-sums");
  ASSERT_TRUE(rerun.is_ok()) << rerun.status().to_string();
  EXPECT_EQ(rerun->status, JobStatus::kFinished) << rerun->error.to_string();
  EXPECT_EQ(before + out->size(), static_cast<size_t>(kSumRecords));
  std::map<int64_t, int64_t> expected;
  for (int64_t i = 0; i < kSumRecords; ++i) expected[i % kSumKeys] += i;
  EXPECT_EQ(final_sums(out->snapshot()), expected);
}

TEST(SavepointControl, ASavepointWhileRunningThenAStopThatTheNextRunRestores) {
  const std::string dir = savepoint_scratch("stop");
  auto first_out = std::make_shared<CollectedRecords<KeyedSum>>();
  StreamExecutionEnvironment first(checkpointed(dir));
  build_keyed_sums(first, first_out);
  auto job = first.execute_async("keyed-sums");
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  while (first_out->size() < 2'000 && (*job)->status() != JobStatus::kFinished) ::usleep(10'000);

  Result<std::string> taken = trigger_savepoint(**job, dir + "/savepoints");
  ASSERT_TRUE(taken.is_ok()) << taken.status().to_string();
  EXPECT_TRUE(std::filesystem::exists(*taken + "/_metadata")) << *taken;
  EXPECT_EQ((*job)->status(), JobStatus::kRunning);

  Result<std::string> stopped = stop_with_savepoint(**job, dir + "/savepoints");
  ASSERT_TRUE(stopped.is_ok()) << stopped.status().to_string();
  EXPECT_NE(*stopped, *taken);
  EXPECT_TRUE(std::filesystem::exists(*stopped + "/_metadata")) << *stopped;
  const JobExecutionResult ended = (*job)->wait();
  EXPECT_EQ(ended.status, JobStatus::kFinished) << ended.error.to_string();
  const size_t before = first_out->size();
  ASSERT_LT(before, static_cast<size_t>(kSumRecords)) << "the job ended before it was stopped";

  // The next run resumes the sources and the sums where the stop left them.
  expect_resumed_exactly_once(checkpointed(dir), *stopped, before);
  std::filesystem::remove_all(dir);
}

// Checkpointing off (the default interval 0): the job still takes savepoints (Flink's coordinator without periodic
// trigger), a request without a folder is refused naming the key of the default one, and a stop's savepoint
// restores into a run that is still without checkpointing.
TEST(SavepointControl, WithoutCheckpointingSavepointsAreTakenAndAFolderlessRequestNamesTheKey) {
  const std::string dir = savepoint_scratch("unchecked");
  auto first_out = std::make_shared<CollectedRecords<KeyedSum>>();
  StreamExecutionEnvironment unchecked;
  build_keyed_sums(unchecked, first_out);
  auto job = unchecked.execute_async("no-checkpoints");
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  while (first_out->size() < 2'000 && (*job)->status() != JobStatus::kFinished) ::usleep(10'000);
  Result<std::string> taken = trigger_savepoint(**job, dir + "/savepoints");
  ASSERT_TRUE(taken.is_ok()) << taken.status().to_string();
  EXPECT_TRUE(std::filesystem::exists(*taken + "/_metadata")) << *taken;
  Result<std::string> nameless = stop_with_savepoint(**job, "");
  ASSERT_FALSE(nameless.is_ok());
  EXPECT_EQ(nameless.status().code(), StatusCode::kInvalidArgument) << nameless.status().to_string();
  EXPECT_NE(nameless.status().message().find("state.savepoints.dir"), std::string::npos)
      << nameless.status().to_string();
  EXPECT_EQ((*job)->status(), JobStatus::kRunning) << "a refused stop leaves the job running";
  (*job)->cancel();
  EXPECT_EQ((*job)->wait().status, JobStatus::kCanceled);

  // The default folder (Flink's key) takes a request without one; the stop's savepoint restores, still unchecked.
  Configuration with_default;
  ASSERT_TRUE(with_default.set_string("state.savepoints.dir", dir + "/default").is_ok());
  auto second_out = std::make_shared<CollectedRecords<KeyedSum>>();
  StreamExecutionEnvironment second(with_default);
  build_keyed_sums(second, second_out);
  auto running = second.execute_async("no-checkpoints");
  ASSERT_TRUE(running.is_ok()) << running.status().to_string();
  while (second_out->size() < 2'000 && (*running)->status() != JobStatus::kFinished) ::usleep(10'000);
  Result<std::string> stopped = stop_with_savepoint(**running, "");
  ASSERT_TRUE(stopped.is_ok()) << stopped.status().to_string();
  EXPECT_EQ(std::filesystem::path(*stopped).parent_path(), std::filesystem::path(dir + "/default"));
  EXPECT_EQ((*running)->wait().status, JobStatus::kFinished);
  const size_t before = second_out->size();
  ASSERT_LT(before, static_cast<size_t>(kSumRecords)) << "the job ended before it was stopped";

  expect_resumed_exactly_once(Configuration(), *stopped, before);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice
