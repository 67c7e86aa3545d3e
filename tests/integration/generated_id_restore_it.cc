// Generated operator ids cannot hand state to the wrong operator: a keyed operator without a uid, with a second one
// of the same name inserted before it, would give the inserted operator the old one's state under the same
// generated id. The restore is refused, naming both operators' graph positions; the same graph restores; the
// override restores by generated id as before; uids restore whatever was inserted.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "checkpoint_it_util.h"
#include "count_per_key.h"
#include "sluice/sink/builtin_sinks.h"
#include "sluice/source/generator_source.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

enum class Shape {
  kOne,           // source -> count -> sink
  kInsertedFirst  // source -> (new) count -> count -> sink
};

// `with_uids`: every operator gets a uid (the old counter "count", the inserted one "inserted-count").
Result<std::unique_ptr<JobClient>> start(const std::string& dir, Shape shape, bool with_uids,
                                         const std::string& restore = "",
                                         const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  SLUICE_ASSIGN_OR_RETURN(Configuration config, it::manual_checkpoint_config(dir, restore));
  for (const auto& [k, v] : extra) SLUICE_RETURN_IF_ERROR(config.set_string(k, v));
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  auto src = env.from_source(make_generator_source(1'000'000'000, [](int64_t i) { return i % 10; }, 2000), "numbers");
  src.uid("numbers");
  DataStream<int64_t> stream = src;
  if (shape == Shape::kInsertedFirst) {
    auto inserted = stream.key_by([](const int64_t& v) { return v; }).process(it::RunningCount{});
    inserted.name("count");
    if (with_uids) inserted.uid("inserted-count");
    stream = inserted;
  }
  auto counted = stream.key_by([](const int64_t& v) { return v; }).process(it::RunningCount{});
  counted.name("count");
  if (with_uids) counted.uid("count");
  auto sink = counted.sink_to(DiscardingSink<int64_t>());
  if (with_uids) sink.uid("sink");
  return env.execute_async("generated-ids");
}

// Runs the one-counter job until a manual checkpoint completed; returns the checkpoint's folder.
std::string checkpoint_of_one_counter(const std::string& dir, bool with_uids) {
  auto job = start(dir, Shape::kOne, with_uids);
  EXPECT_TRUE(job.is_ok()) << job.status().to_string();
  if (!job.is_ok()) return "";
  auto& cp = it::checkpointing(**job);
  EXPECT_TRUE(it::wait_for([&] { return (*job)->status() == JobStatus::kRunning; }));
  std::this_thread::sleep_for(100ms);  // some records counted
  EXPECT_TRUE(it::when_deployed([&] { return cp.trigger_checkpoint(); }).is_ok());
  EXPECT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 1; }, 60s));
  const auto stats = cp.checkpoint_stats();
  (*job)->cancel();
  EXPECT_EQ((*job)->wait().status, JobStatus::kCanceled);
  return stats.latest_completed ? stats.latest_completed->location : "";
}

void expect_runs_then_cancel(Result<std::unique_ptr<JobClient>> job) {
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  ASSERT_TRUE(it::wait_for([&] { return (*job)->status() == JobStatus::kRunning; }));
  (*job)->cancel();
  EXPECT_EQ((*job)->wait().status, JobStatus::kCanceled);
}

TEST(GeneratedIds, AnOperatorInsertedBeforeOneWithoutAUidIsRefusedNamingBoth) {
  const std::string dir = it::fresh_dir("generated-ids-refused") + "/ck";
  const std::string snapshot = checkpoint_of_one_counter(dir, /*with_uids=*/false);
  ASSERT_FALSE(snapshot.empty());

  auto refused = start(dir, Shape::kInsertedFirst, false, snapshot);
  ASSERT_FALSE(refused.is_ok()) << "restored the old counter's state into the inserted one";
  const Status& s = refused.status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  for (const char* part : {"without a uid", "generated id", "in the snapshot inputs: numbers; outputs:", "; now inputs:",
                           "execution.state-recovery.ignore-generated-id-changes"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " not in: " << s.message();
  }
  EXPECT_NE(s.message().find(snapshot), std::string::npos) << s.message();

  // The same graph restores; the override restores by generated id as before.
  expect_runs_then_cancel(start(dir, Shape::kOne, false, snapshot));
  expect_runs_then_cancel(
      start(dir, Shape::kInsertedFirst, false, snapshot, {{"execution.state-recovery.ignore-generated-id-changes", "true"}}));
}

TEST(GeneratedIds, WithUidsAnInsertedOperatorStartsEmptyAndTheOldOneKeepsItsState) {
  const std::string dir = it::fresh_dir("generated-ids-uids") + "/ck";
  const std::string snapshot = checkpoint_of_one_counter(dir, /*with_uids=*/true);
  ASSERT_FALSE(snapshot.empty());
  expect_runs_then_cancel(start(dir, Shape::kInsertedFirst, true, snapshot));
}

}  // namespace
}  // namespace sluice
