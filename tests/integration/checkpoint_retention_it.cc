// Retained checkpoints end to end, configured by keys as a user would: restoring a new run from each of the
// retained checkpoints of a cancelled job (execution.checkpointing.num-retained 3, RETAIN_ON_CANCELLATION,
// execution.state-recovery.path), and what each externalized-checkpoint-retention mode leaves on disk when a job
// finishes, is cancelled or fails.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checkpoint/checkpoint_verify.h"
#include "checkpoint_it_util.h"
#include "count_per_key.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

Configuration checkpointing_config(const std::string& dir, const std::string& retention, int32_t num_retained) {
  Configuration config;
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", "30ms").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", dir).is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.num-retained", std::to_string(num_retained)).is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.externalized-checkpoint-retention", retention).is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.type", "none").is_ok());
  return config;
}

// What a job folder holding exactly these completed checkpoints lists (sorted by name).
std::vector<std::string> folders_of(const std::vector<int64_t>& ids) {
  std::vector<std::string> out{"shared", "taskowned"};
  for (int64_t id : ids) out.push_back("chk-" + std::to_string(id));
  std::sort(out.begin(), out.end());
  return out;
}

// A job cancelled with three retained checkpoints; a new run restored from each of them in turn (NO_CLAIM) gives
// exactly-once output (from that checkpoint's committed output on), numbers its checkpoints from the restored
// id + 1 in a new job folder, and deletes none of the restored job's checkpoints.
TEST(CheckpointRetention, EachOfThreeRetainedCheckpointsRestoresExactlyOnceAndStays) {
  const std::string base = it::fresh_dir("restore-each");
  const std::string ck = base + "/ck";
  it::MainJob job;
  job.output_dir = base + "/out";
  // Still running after four checkpoints, even on a loaded machine (at 100 us per record a run under load once
  // ended its input before its fourth checkpoint completed, and the cancel then found all output written).
  it::g_throttle_us = 1000;
  std::string job1;
  std::vector<int64_t> retained;
  {
    StreamExecutionEnvironment env(checkpointing_config(ck, "RETAIN_ON_CANCELLATION", 3));
    env.set_parallelism(2);
    it::build_main_job(env, job);
    auto submitted = env.execute_async("first run");
    ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
    std::unique_ptr<JobClient> client = std::move(submitted).value();
    auto& cp = it::checkpointing(*client);
    ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 4; }));
    client->cancel();
    JobExecutionResult result = client->wait();
    ASSERT_EQ(result.status, JobStatus::kCanceled) << result.error.to_string();
    job1 = client->job_id().to_hex();
    auto s = cp.checkpoint_stats();
    ASSERT_TRUE(s.latest_completed);
    retained = it::completed_checkpoints_in(ck + "/" + job1);
    ASSERT_EQ(retained.size(), 3u) << "num-retained 3";
    EXPECT_EQ(retained.back(), s.latest_completed->id.value());
    EXPECT_EQ(it::entries_of(ck + "/" + job1), folders_of(retained)) << "nothing but the retained checkpoints";
  }
  it::g_throttle_us = 0;
  ASSERT_FALSE(it::check_exactly_once(job).empty()) << "the cancelled run must not have produced everything";
  const std::string saved = base + "/out-at-cancel";
  fs::copy(job.output_dir, saved);
  const std::string job1_dir = ck + "/" + job1;

  std::vector<std::string> finished_runs;  // the restored runs' folders, with their finished-restore records
  for (int64_t id : retained) {
    SCOPED_TRACE("restored from checkpoint " + std::to_string(id));
    it::reset_output(saved, job.output_dir, id);
    Configuration config = checkpointing_config(ck, "NO_EXTERNALIZED_CHECKPOINTS", 3);
    ASSERT_TRUE(config.set_string("execution.state-recovery.path", job1_dir + "/chk-" + std::to_string(id)).is_ok());
    StreamExecutionEnvironment env(config);
    env.set_parallelism(2);
    it::build_main_job(env, job);
    auto submitted = env.execute_async("restored run");
    ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
    std::unique_ptr<JobClient> client = std::move(submitted).value();
    auto& cp = it::checkpointing(*client);
    const std::string job2 = client->job_id().to_hex();
    EXPECT_NE(job2, job1);
    JobExecutionResult result = client->wait();
    ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();

    auto s = cp.checkpoint_stats();
    ASSERT_TRUE(s.latest_completed);
    ASSERT_GE(s.num_triggered, 1);
    // Ids continue at the restored id + 1, without gaps: the newest is id + the number triggered.
    auto by_id = it::stats_by_id(s);
    EXPECT_EQ(by_id.rbegin()->first, id + s.num_triggered);
    EXPECT_GT(s.latest_completed->id.value(), id);
    if (s.num_triggered <= static_cast<int64_t>(coordinator::CheckpointStatsTracker::kHistorySize)) {
      EXPECT_EQ(by_id.begin()->first, id + 1);
    }
    // In the new run's own folder, which it emptied when it finished: only the record of the checkpoint it restored
    // stays (`--restore latest` does not pick that one again).
    EXPECT_EQ(s.latest_completed->location.rfind(ck + "/" + job2 + "/chk-", 0), 0u) << s.latest_completed->location;
    EXPECT_EQ(it::entries_of(ck + "/" + job2), (std::vector<std::string>{"_finished-restore"}));
    finished_runs.push_back(job2);
    // The restored job's checkpoints are all still there and intact (NO_CLAIM).
    EXPECT_EQ(it::completed_checkpoints_in(job1_dir), retained);
    auto verified = checkpoint::verify_checkpoint(job1_dir);
    ASSERT_TRUE(verified.is_ok()) << verified.status().to_string();
    EXPECT_TRUE(verified->ok()) << verified->to_string();
    EXPECT_EQ(it::check_exactly_once(job), "");
  }
  finished_runs.push_back(job1);
  std::sort(finished_runs.begin(), finished_runs.end());
  EXPECT_EQ(it::entries_of(ck), finished_runs);
  fs::remove_all(base);
}

// ---- externalized checkpoint retention ----

enum class End { kFinished, kCanceled, kFailed };

// Runs a small keyed job until it ends as `end`, having completed at least two checkpoints; returns its
// job folder.
std::string run_until(const std::string& ck, const std::string& retention, End end) {
  StreamExecutionEnvironment env(checkpointing_config(ck, retention, 2));
  env.set_parallelism(2);
  const int64_t count = end == End::kFinished ? 3'000 : 1'000'000'000;
  env.from_generator(count, [](int64_t i) { return i; }, 20'000)
      .key_by([](const int64_t& v) { return v % 100; })
      .process(it::RunningCount{})
      .uid("count")
      .sink_to(DiscardingSink<int64_t>());
  auto submitted = env.execute_async("retention");
  EXPECT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  if (!submitted.is_ok()) return "";
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);
  EXPECT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 2; }));
  if (end == End::kCanceled) client->cancel();
  if (end == End::kFailed) cp.fail_task(1, 0, "injected failure");
  JobExecutionResult result = client->wait();
  const JobStatus expected = end == End::kFinished   ? JobStatus::kFinished
                             : end == End::kCanceled ? JobStatus::kCanceled
                                                     : JobStatus::kFailed;
  EXPECT_EQ(result.status, expected) << result.error.to_string();
  if (end == End::kFailed) {
    EXPECT_NE(result.error.to_string().find("injected failure"), std::string::npos) << result.error.to_string();
  }
  return ck + "/" + client->job_id().to_hex();
}

TEST(CheckpointRetention, ExternalizedRetentionDecidesWhatStaysOnDisk) {
  struct Case {
    const char* mode;
    End end;
    bool kept;
  };
  // docs/checkpoints.md, "Which checkpoints are kept".
  const Case cases[] = {
      {"NO_EXTERNALIZED_CHECKPOINTS", End::kFinished, false}, {"NO_EXTERNALIZED_CHECKPOINTS", End::kCanceled, false},
      {"NO_EXTERNALIZED_CHECKPOINTS", End::kFailed, false},   {"DELETE_ON_CANCELLATION", End::kFinished, false},
      {"DELETE_ON_CANCELLATION", End::kCanceled, false},      {"DELETE_ON_CANCELLATION", End::kFailed, true},
      {"RETAIN_ON_CANCELLATION", End::kFinished, false},      {"RETAIN_ON_CANCELLATION", End::kCanceled, true},
      {"RETAIN_ON_CANCELLATION", End::kFailed, true},
  };
  const char* end_names[] = {"finished", "canceled", "failed"};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.mode) + ", job " + end_names[static_cast<int>(c.end)]);
    const std::string base = it::fresh_dir("retention");
    const std::string ck = base + "/ck";
    const std::string job_dir = run_until(ck, c.mode, c.end);
    ASSERT_FALSE(job_dir.empty());
    const std::string job = fs::path(job_dir).filename().string();
    if (!c.kept) {
      EXPECT_EQ(it::entries_of(ck), std::vector<std::string>{}) << "the job folder and its checkpoints are deleted";
    } else {
      EXPECT_EQ(it::entries_of(ck), std::vector<std::string>{job});
      // The newest two completed checkpoints (num-retained 2), nothing half-written, intact.
      std::vector<int64_t> ids = it::completed_checkpoints_in(job_dir);
      ASSERT_EQ(ids.size(), 2u);
      EXPECT_EQ(it::entries_of(job_dir), folders_of(ids));
      auto verified = checkpoint::verify_checkpoint(job_dir);
      ASSERT_TRUE(verified.is_ok()) << verified.status().to_string();
      EXPECT_TRUE(verified->ok()) << verified->to_string();
    }
    fs::remove_all(base);
  }
}

}  // namespace
}  // namespace sluice
