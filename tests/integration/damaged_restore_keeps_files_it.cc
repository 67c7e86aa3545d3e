// A job that fails for good because the checkpoint it restores is damaged or missing a file deletes no checkpoint
// file, whatever execution.checkpointing.externalized-checkpoint-retention says: the restored checkpoint is the
// evidence, and the job's older checkpoints are the way back. Two ways to get there, each under every retention
// mode and every kind of damage (a state file cut short, flipped in place, or deleted):
// - RestoreDamaged: a new run restores (execution.state-recovery.path, CLAIM and NO_CLAIM) a copy of a retained
//   checkpoint with one state file damaged. On the heap backend the cluster reads the state files while it
//   assigns them, so each case is refused at submission; damaged_checkpoint_it has a claimed restore that starts
//   and then fails (an incremental RocksDB checkpoint, read by the tasks);
// - FailoverToDamaged: a running job's newest checkpoint gets a state file damaged, then a task fails; the
//   failover finds the damage (restart/restart_strategy.h) and fails the job.
// Every file in the checkpoint directory before the failure is still there after the job ended, and the error
// says "missing" (kNotFound) or "damaged" (kCorruption) and names the file.
#include <gtest/gtest.h>

#include <tuple>

#include "checkpoint_it_util.h"
#include "damage_file.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using it::Damage;

const char* const kRetentionModes[] = {"NO_EXTERNALIZED_CHECKPOINTS", "DELETE_ON_CANCELLATION",
                                       "RETAIN_ON_CANCELLATION"};

// Every state handle in a file of its own (no inlining), one restart allowed.
Configuration base_config(const std::string& ck, const std::string& retention, const std::string& interval) {
  Configuration config;
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", interval).is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", ck).is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.num-retained", "2").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.data-inline-threshold", "0").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.externalized-checkpoint-retention", retention).is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.type", "fixed-delay").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.fixed-delay.attempts", "1").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.fixed-delay.delay", "10ms").is_ok());
  return config;
}

// The largest state file of checkpoint folder `chk` (its keyed state, in this job).
std::string largest_state_file(const std::string& chk) {
  std::string best;
  uintmax_t best_size = 0;
  for (const auto& e : fs::directory_iterator(chk)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.starts_with("_")) continue;
    if (e.file_size() > best_size || best.empty()) {
      best_size = e.file_size();
      best = e.path().string();
    }
  }
  EXPECT_FALSE(best.empty()) << "no state file in " << chk;
  return best;
}

// Waits until the job ended (it must, without restarting forever) and returns its result.
JobExecutionResult wait_end(JobClient& client) {
  const bool ended = it::wait_for([&] { return is_globally_terminal(client.status()); }, 120s);
  EXPECT_TRUE(ended) << "the job did not end";
  if (!ended) client.cancel();
  return client.wait();
}

// ---- restoring a damaged copy of a retained checkpoint ----------------------------------------------------------

class RestoreDamaged : public ::testing::TestWithParam<std::tuple<const char*, bool, Damage>> {
 protected:
  // A retained checkpoint of a cancelled run: its job folder and chk-<n> name.
  static void SetUpTestSuite() {
    base_ = new std::string(it::fresh_dir("restore-cases"));
    job_ = new it::MainJob;
    job_->events = 40'000;
    job_->output_dir = *base_ + "/out";
    Configuration config = base_config(*base_ + "/ck", "RETAIN_ON_CANCELLATION", "30ms");
    it::g_throttle_us = 1000;  // still running after a few checkpoints, even on a loaded machine
    StreamExecutionEnvironment env(config);
    env.set_parallelism(2);
    it::build_main_job(env, *job_);
    auto submitted = env.execute_async("source run");
    ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
    std::unique_ptr<JobClient> client = std::move(submitted).value();
    EXPECT_TRUE(it::wait_for([&] { return it::checkpointing(*client).checkpoint_stats().num_completed >= 2; }));
    client->cancel();
    JobExecutionResult result = client->wait();
    it::g_throttle_us = 0;
    ASSERT_EQ(result.status, JobStatus::kCanceled) << result.error.to_string();
    job_dir_ = new std::string(*base_ + "/ck/" + client->job_id().to_hex());
    std::vector<int64_t> retained = it::completed_checkpoints_in(*job_dir_);
    ASSERT_FALSE(retained.empty());
    chk_name_ = new std::string("chk-" + std::to_string(retained.back()));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*base_);
    delete base_;
    delete job_;
    delete job_dir_;
    delete chk_name_;
  }

  static std::string* base_;
  static it::MainJob* job_;
  static std::string* job_dir_;
  static std::string* chk_name_;
};

std::string* RestoreDamaged::base_ = nullptr;
it::MainJob* RestoreDamaged::job_ = nullptr;
std::string* RestoreDamaged::job_dir_ = nullptr;
std::string* RestoreDamaged::chk_name_ = nullptr;

TEST_P(RestoreDamaged, TheFailedRunDeletesNoCheckpointFile) {
  const auto [retention, claim, how] = GetParam();
  ASSERT_NE(job_dir_, nullptr);
  // A copy of the job folder in a checkpoint directory of its own, which the new run also writes to.
  // Folder names without "missing" or "damaged" in them: the error's text is checked for those words.
  static int cases = 0;
  const std::string dir = *base_ + "/case-" + std::to_string(++cases);
  const std::string ck = dir + "/ck";
  fs::remove_all(dir);
  fs::create_directories(ck);
  const std::string copied_job = ck + "/" + fs::path(*job_dir_).filename().string();
  fs::copy(*job_dir_, copied_job, fs::copy_options::recursive);
  const std::string file = largest_state_file(copied_job + "/" + *chk_name_);
  const std::set<std::string> before = it::files_under(ck);
  it::damage(file, how);

  Configuration config = base_config(ck, retention, "30ms");
  EXPECT_TRUE(config.set_string("execution.state-recovery.path", copied_job + "/" + *chk_name_).is_ok());
  EXPECT_TRUE(config.set_string("execution.state-recovery.claim-mode", claim ? "CLAIM" : "NO_CLAIM").is_ok());
  it::MainJob job = *job_;
  job.output_dir = dir + "/out";
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  it::build_main_job(env, job);
  auto submitted = env.execute_async("restoring run");
  Status error = submitted.status();
  if (submitted.is_ok()) {
    JobExecutionResult result = wait_end(**submitted);
    EXPECT_EQ(result.status, JobStatus::kFailed) << result.error.to_string();
    error = result.error;
  }
  EXPECT_FALSE(error.is_ok());
  it::expect_error_names_damage(error, file, how);
  it::expect_all_still_there(before, ck, file);
  // The failed run leaves no folder of its own behind (it never wrote a checkpoint), refused at submission or not.
  EXPECT_EQ(it::entries_of(ck), std::vector<std::string>{fs::path(copied_job).filename().string()});
}

// ---- a failover to the job's own damaged checkpoint ---------------------------------------------------------------

class FailoverToDamaged : public ::testing::TestWithParam<std::tuple<const char*, Damage>> {};

TEST_P(FailoverToDamaged, TheFailedJobDeletesNoCheckpointFile) {
  const auto [retention, how] = GetParam();
  const std::string dir =
      it::fresh_dir(std::string("failover-") + retention + "-" + std::to_string(static_cast<int>(how)));
  const std::string ck = dir + "/ck";
  it::MainJob job;
  job.events = 40'000;
  job.output_dir = dir + "/out";
  // No periodic checkpoint within the test: the checkpoints are the two triggered below, so the damaged one is
  // what the failover restores.
  Configuration config = base_config(ck, retention, "1h");
  it::g_throttle_us = 1000;
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  it::build_main_job(env, job);
  auto submitted = env.execute_async("failover to damaged");
  ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);
  for (int64_t n = 1; n <= 2; ++n) {
    ASSERT_TRUE(it::wait_for([&] { return cp.trigger_checkpoint().is_ok(); })) << "checkpoint " << n;
    ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= n; })) << "checkpoint " << n;
  }
  const std::string job_dir = ck + "/" + client->job_id().to_hex();
  const std::vector<int64_t> retained = it::completed_checkpoints_in(job_dir);
  ASSERT_EQ(retained, (std::vector<int64_t>{1, 2}));
  const std::string file = largest_state_file(job_dir + "/chk-2");
  const std::set<std::string> before = it::files_under(ck);
  it::damage(file, how);

  cp.fail_task(0, 0, "a failure after checkpoint 2");
  JobExecutionResult result = wait_end(*client);
  it::g_throttle_us = 0;
  EXPECT_EQ(result.status, JobStatus::kFailed) << result.error.to_string();
  it::expect_error_names_damage(result.error, file, how);
  it::expect_all_still_there(before, ck, file);
  fs::remove_all(dir);
}

std::string retention_case_name(const char* retention) {
  std::string name;
  for (const char* c = retention; *c != '\0'; ++c) name += *c == '_' ? "" : std::string(1, *c);
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllModes, RestoreDamaged,
                         ::testing::Combine(::testing::ValuesIn(kRetentionModes), ::testing::Bool(),
                                            ::testing::Values(Damage::kRemove, Damage::kTruncate, Damage::kFlip)),
                         [](const auto& p) {
                           return retention_case_name(std::get<0>(p.param)) +
                                  (std::get<1>(p.param) ? "_Claim_" : "_NoClaim_") +
                                  it::damage_name(std::get<2>(p.param));
                         });

INSTANTIATE_TEST_SUITE_P(AllModes, FailoverToDamaged,
                         ::testing::Combine(::testing::ValuesIn(kRetentionModes),
                                            ::testing::Values(Damage::kRemove, Damage::kTruncate, Damage::kFlip)),
                         [](const auto& p) {
                           return retention_case_name(std::get<0>(p.param)) + "_" +
                                  it::damage_name(std::get<1>(p.param));
                         });

}  // namespace
}  // namespace sluice
