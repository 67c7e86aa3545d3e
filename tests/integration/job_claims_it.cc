// Whose folders a job may write: a job is refused at submission when a running job holds its output folder or
// its checkpoint folder (naming that job), leaving the running job's output exactly-once; two sinks of one job on
// one folder are refused; and restored runs record their lineage, which is what a restored file sink may clean up.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "checkpoint_it_util.h"
#include "damage_file.h"
#include "sluice/connectors/file/file_sink.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

Result<std::unique_ptr<JobClient>> start_main_job(const it::MainJob& job, const std::string& checkpoint_dir,
                                                  const std::string& name, const std::string& restore = "",
                                                  const std::map<std::string, std::string>& extra = {}) {
  SLUICE_ASSIGN_OR_RETURN(Configuration config, it::manual_checkpoint_config(checkpoint_dir, restore));
  for (const auto& [key, value] : extra) SLUICE_RETURN_IF_ERROR(config.set_string(key, value));
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  it::build_main_job(env, job);
  return env.execute_async(name);
}

// The checkpoint the job completes when the test triggers it.
std::string checkpoint_now(JobClient& client) {
  auto& cp = it::checkpointing(client);
  const int64_t before = cp.checkpoint_stats().num_completed;
  auto id = it::when_deployed([&] { return cp.trigger_checkpoint(); });
  EXPECT_TRUE(id.is_ok()) << id.status().to_string();
  EXPECT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed > before; }, 60s));
  const auto stats = cp.checkpoint_stats();
  return stats.latest_completed ? stats.latest_completed->location : "";
}

// A main job kept running (throttled) that completed one checkpoint: its client and that checkpoint's folder.
struct Checkpointed {
  std::unique_ptr<JobClient> client;
  std::string chk;
};
Checkpointed start_and_checkpoint(const it::MainJob& job, const std::string& checkpoint_dir) {
  it::g_throttle_us = 200;
  auto started = start_main_job(job, checkpoint_dir, "first");
  if (!started.is_ok()) {
    ADD_FAILURE() << started.status().to_string();
    return {};
  }
  Checkpointed out{std::move(started).value(), ""};
  EXPECT_TRUE(it::wait_for([&] { return out.client->status() == JobStatus::kRunning; }));
  out.chk = checkpoint_now(*out.client);
  return out;
}

class JobClaimsIT : public ::testing::Test {
 protected:
  void TearDown() override { it::g_throttle_us = 0; }
};

TEST_F(JobClaimsIT, ASecondJobOnARunningJobsFoldersIsRefusedNamingItAndLosesNothing) {
  const std::string dir = it::fresh_dir("claims-running");
  it::MainJob job;
  job.output_dir = dir + "/out";
  it::g_throttle_us = 200;  // keeps the first job running while the others are submitted
  auto first = start_main_job(job, dir + "/ck", "first");
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  ASSERT_TRUE(it::wait_for([&] { return (*first)->status() == JobStatus::kRunning; }));
  ASSERT_FALSE(checkpoint_now(**first).empty());
  const std::string first_id = (*first)->job_id().to_hex();

  // Same output folder, its own checkpoint folder.
  auto same_output = start_main_job(job, dir + "/ck-2", "second");
  ASSERT_FALSE(same_output.is_ok());
  EXPECT_EQ(same_output.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(same_output.status().message().find("output folder '" + job.output_dir + "' is in use by job 'first' (job id " +
                                                first_id),
            std::string::npos)
      << same_output.status().to_string();
  EXPECT_NE(same_output.status().message().find("job 'second' refused"), std::string::npos)
      << same_output.status().to_string();

  // Same checkpoint folder, its own output folder.
  it::MainJob other = job;
  other.output_dir = dir + "/out-3";
  auto same_checkpoints = start_main_job(other, dir + "/ck", "third");
  ASSERT_FALSE(same_checkpoints.is_ok());
  EXPECT_EQ(same_checkpoints.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(same_checkpoints.status().message().find("checkpoint folder '" + dir + "/ck' (execution.checkpointing.dir) is in use by job 'first'"),
            std::string::npos)
      << same_checkpoints.status().to_string();
  EXPECT_FALSE(std::filesystem::exists(other.output_dir + "/.sluice-job.lock"))
      << "the refused job took a claim it then held";

  it::g_throttle_us = 0;
  const JobExecutionResult r = (*first)->wait();
  ASSERT_EQ(r.status, JobStatus::kFinished) << r.error.to_string();
  EXPECT_EQ(it::check_exactly_once(job), "");

  // The first job ended: its folders are free at once.
  auto after = start_main_job(other, dir + "/ck", "fourth");
  ASSERT_TRUE(after.is_ok()) << after.status().to_string();
  EXPECT_EQ((*after)->wait().status, JobStatus::kFinished);
}

TEST_F(JobClaimsIT, TwoSinksOfOneJobOnOneFolderAreRefused) {
  const std::string dir = it::fresh_dir("claims-two-sinks");
  StreamExecutionEnvironment env;
  auto numbers = env.from_collection(std::vector<int64_t>{1, 2, 3});
  auto encode = [](const int64_t& v, std::string& out) { out += std::to_string(v); };
  numbers.sink_to(file::TransactionalFileSink<int64_t>(dir, encode)).name("a").uid("a");
  numbers.sink_to(file::FileSink<int64_t>::for_row_format(dir, encode)).name("b").uid("b");
  auto r = env.execute("two-sinks");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("sink 'a' (uid 'a') and sink 'b' (uid 'b') both write to output folder '" + dir + "'"),
            std::string::npos)
      << r.status().to_string();

  // One folder spelled two ways is one folder: refused the same way, not by the job's own lock.
  StreamExecutionEnvironment env2;
  auto again = env2.from_collection(std::vector<int64_t>{1, 2, 3});
  again.sink_to(file::TransactionalFileSink<int64_t>(dir, encode)).name("a").uid("a");
  again.sink_to(file::TransactionalFileSink<int64_t>(dir + "/./", encode)).name("c").uid("c");
  r = env2.execute("two-spellings");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
  EXPECT_NE(r.status().message().find("sink 'a' (uid 'a') and sink 'c' (uid 'c') both write to output folder '" + dir +
                                      "' and to output folder '" + dir + "/./', one folder"),
            std::string::npos)
      << r.status().to_string();
}

TEST_F(JobClaimsIT, AnOutputFolderThatIsTheCheckpointFolderIsRefused) {
  const std::string dir = it::fresh_dir("claims-output-is-ck");
  it::MainJob job;
  job.output_dir = dir + "/ck";
  auto r = start_main_job(job, dir + "/ck/.", "one-folder");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
  EXPECT_NE(r.status().message().find("the checkpoint storage and sink"), std::string::npos) << r.status().to_string();
  EXPECT_NE(r.status().message().find("one folder: give each its own"), std::string::npos) << r.status().to_string();
}

// A restore in CLAIM mode deletes the restored checkpoint's files once subsumed, so the folder of the job that
// wrote it must be free: a running job's checkpoint is not taken from under it. NO_CLAIM only reads it.
TEST_F(JobClaimsIT, AClaimRestoreOfARunningJobsCheckpointIsRefused) {
  const std::string dir = it::fresh_dir("claims-restore-running");
  it::MainJob job;
  job.output_dir = dir + "/out";
  auto [first, chk] = start_and_checkpoint(job, dir + "/ck");
  ASSERT_TRUE(first && !chk.empty());

  it::MainJob other = job;
  other.output_dir = dir + "/out-2";
  auto claiming = start_main_job(other, dir + "/ck-2", "claiming", chk, {{"execution.state-recovery.claim-mode", "CLAIM"}});
  ASSERT_FALSE(claiming.is_ok());
  EXPECT_EQ(claiming.status().code(), StatusCode::kFailedPrecondition) << claiming.status().to_string();
  EXPECT_NE(claiming.status().message().find("checkpoint folder '" + dir + "/ck' (of " + chk +
                                             ", restored in CLAIM mode) is in use by job 'first'"),
            std::string::npos)
      << claiming.status().to_string();
  EXPECT_TRUE(std::filesystem::exists(chk + "/_metadata"));

  // The same checkpoint reached through a symbolic link (to the chk-<n> folder, or to its job's folder) is the
  // running job's checkpoint all the same.
  const std::filesystem::path chk_path(chk);
  const std::string job_hex = chk_path.parent_path().filename().string();
  std::filesystem::create_directories(dir + "/linked-chk/" + job_hex);
  std::filesystem::create_directory_symlink(chk_path, dir + "/linked-chk/" + job_hex + "/" + chk_path.filename().string());
  std::filesystem::create_directories(dir + "/linked-job");
  std::filesystem::create_directory_symlink(chk_path.parent_path(), dir + "/linked-job/" + job_hex);
  for (const std::string& linked : {dir + "/linked-chk/" + job_hex + "/" + chk_path.filename().string(),
                                    dir + "/linked-job/" + job_hex + "/" + chk_path.filename().string()}) {
    auto via_link = start_main_job(other, dir + "/ck-2", "claiming", linked,
                                   {{"execution.state-recovery.claim-mode", "CLAIM"}});
    ASSERT_FALSE(via_link.is_ok()) << linked;
    EXPECT_EQ(via_link.status().code(), StatusCode::kFailedPrecondition) << via_link.status().to_string();
    EXPECT_NE(via_link.status().message().find(", restored in CLAIM mode) is in use by job 'first'"), std::string::npos)
        << via_link.status().to_string();
  }
  EXPECT_TRUE(std::filesystem::exists(chk + "/_metadata"));

  // NO_CLAIM only reads the checkpoint: accepted while the first job runs. Its restored committables name part
  // files of the first job's output folder, so with a folder of its own this run fails ("committable data is
  // gone") unless it is cancelled before its first commit; either way the first job's files stay.
  auto reading = start_main_job(other, dir + "/ck-2", "reading", chk, {{"execution.state-recovery.claim-mode", "NO_CLAIM"}});
  ASSERT_TRUE(reading.is_ok()) << reading.status().to_string();
  (*reading)->cancel();
  const JobExecutionResult read = (*reading)->wait();
  EXPECT_TRUE(read.status == JobStatus::kCanceled ||
              (read.status == JobStatus::kFailed &&
               read.error.message().find("committable data is gone") != std::string::npos))
      << job_status_name(read.status) << ": " << read.error.to_string();
  EXPECT_TRUE(std::filesystem::exists(chk + "/_metadata"));
  first->cancel();
  EXPECT_EQ(first->wait().status, JobStatus::kCanceled);
}

// A run that restored a checkpoint in CLAIM mode and failed before any checkpoint of its own keeps that
// checkpoint, even under NO_EXTERNALIZED_CHECKPOINTS: it is the only way back.
TEST_F(JobClaimsIT, AFailedClaimRestoreKeepsTheCheckpointItRestored) {
  const std::string dir = it::fresh_dir("claims-restore-fails");
  it::MainJob job;
  job.output_dir = dir + "/out";
  auto [first, chk] = start_and_checkpoint(job, dir + "/ck");
  ASSERT_TRUE(first && !chk.empty());
  first->cancel();
  ASSERT_EQ(first->wait().status, JobStatus::kCanceled);
  const std::set<std::string> before = it::files_under(chk);
  ASSERT_FALSE(before.empty());

  auto second = start_main_job(job, dir + "/ck", "claiming", chk,
                               {{"execution.state-recovery.claim-mode", "CLAIM"},
                                {"execution.checkpointing.externalized-checkpoint-retention", "NO_EXTERNALIZED_CHECKPOINTS"},
                                {"restart-strategy.type", "none"}});
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  ASSERT_TRUE(it::wait_for([&] { return (*second)->status() == JobStatus::kRunning; }));
  it::checkpointing(**second).fail_task(0, 0, "a failure before the run's first checkpoint");
  const JobExecutionResult r = (*second)->wait();
  EXPECT_EQ(r.status, JobStatus::kFailed) << r.error.to_string();
  EXPECT_EQ(it::files_under(chk), before) << "the failed run deleted the checkpoint it claimed";

  // It is still a restore point: the next run finishes from it, exactly once.
  it::g_throttle_us = 0;
  auto third = start_main_job(job, dir + "/ck", "again", chk, {{"execution.state-recovery.claim-mode", "CLAIM"}});
  ASSERT_TRUE(third.is_ok()) << third.status().to_string();
  ASSERT_EQ((*third)->wait().status, JobStatus::kFinished);
  EXPECT_EQ(it::check_exactly_once(job), "");
}

TEST_F(JobClaimsIT, RestoredRunsRecordTheirLineageNewestFirst) {
  const std::string dir = it::fresh_dir("claims-lineage");
  it::MainJob job;
  job.output_dir = dir + "/out";
  it::g_throttle_us = 200;
  std::vector<std::string> ids;
  std::string restore;
  for (int run = 0; run < 3; ++run) {
    auto client = start_main_job(job, dir + "/ck", "lineage", restore);
    ASSERT_TRUE(client.is_ok()) << client.status().to_string();
    ASSERT_TRUE(it::wait_for([&] { return (*client)->status() == JobStatus::kRunning; }));
    restore = checkpoint_now(**client);
    ASSERT_FALSE(restore.empty());
    ids.push_back((*client)->job_id().to_hex());
    (*client)->cancel();
    EXPECT_EQ((*client)->wait().status, JobStatus::kCanceled);
    auto point = checkpoint::resolve_restore_path(restore, "");
    ASSERT_TRUE(point.is_ok()) << point.status().to_string();
    std::vector<std::string> lineage;
    for (const JobId& id : point->metadata.lineage) lineage.push_back(id.to_hex());
    std::vector<std::string> expected(ids.rbegin() + 1, ids.rend());  // the earlier runs, newest first
    EXPECT_EQ(lineage, expected) << "run " << run;
  }
  it::g_throttle_us = 0;
  auto last = start_main_job(job, dir + "/ck", "lineage", restore);
  ASSERT_TRUE(last.is_ok()) << last.status().to_string();
  ASSERT_EQ((*last)->wait().status, JobStatus::kFinished);
  EXPECT_EQ(it::check_exactly_once(job), "") << "the restored chain's output";
}

}  // namespace
}  // namespace sluice
