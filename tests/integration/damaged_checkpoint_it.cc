// A damaged incremental RocksDB checkpoint fails the job loudly instead of restarting forever.
// A real incremental checkpoint of the main job is taken (retained on cancellation); copies of its job folder get
// one SST in shared/ damaged - truncated, bytes flipped in place (same size), or deleted - and a new run restores
// each under the exponential-delay restart strategy (which alone would restart without end). The run must end
// FAILED, or be refused at submission, within the wait, with a message that names the damaged file.
// - truncated / missing: the submission-time check (a stat per file: sizes recorded in `_metadata`) refuses it;
// - flipped: the sizes match, the restore's checksum check fails in the task, and the failover's check of the
//   restore point (checksums, after a kCorruption) fails the job instead of restarting (restart_strategy.h).
#include <gtest/gtest.h>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint_it_util.h"
#include "damage_file.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using it::Damage;

Configuration rocksdb_incremental(const std::string& ck, const std::string& rocks) {
  Configuration config;
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", "30ms").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", ck).is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.incremental", "true").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION")
                  .is_ok());
  EXPECT_TRUE(config.set_string("state.backend.type", "rocksdb").is_ok());
  EXPECT_TRUE(config.set_string("state.backend.rocksdb.localdir", rocks).is_ok());
  return config;
}

// The newest retained checkpoint folder of a cancelled incremental run, or "" on failure.
std::string take_incremental_checkpoint(const std::string& ck, const std::string& rocks, it::MainJob& job) {
  Configuration config = rocksdb_incremental(ck, rocks);
  EXPECT_TRUE(config.set_string("restart-strategy.type", "none").is_ok());
  it::g_throttle_us = 1000;  // still running after a few checkpoints, even on a loaded machine
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  it::build_main_job(env, job);
  auto submitted = env.execute_async("source run");
  EXPECT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  if (!submitted.is_ok()) return "";
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);
  EXPECT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 3; }));
  client->cancel();
  JobExecutionResult result = client->wait();
  it::g_throttle_us = 0;
  EXPECT_EQ(result.status, JobStatus::kCanceled) << result.error.to_string();
  const std::string job_dir = ck + "/" + client->job_id().to_hex();
  std::vector<int64_t> retained = it::completed_checkpoints_in(job_dir);
  EXPECT_FALSE(retained.empty());
  return retained.empty() ? "" : job_dir + "/chk-" + std::to_string(retained.back());
}

// The absolute path of the largest SST in shared/ that `chk` refers to.
std::string largest_shared_sst(const std::string& chk) {
  auto fsys = sluice::fs::local_file_system();
  auto loc = checkpoint::locate_checkpoint(*fsys, chk);
  EXPECT_TRUE(loc.is_ok()) << loc.status().to_string();
  if (!loc.is_ok()) return "";
  auto md = checkpoint::read_checkpoint_metadata(*fsys, *loc);
  EXPECT_TRUE(md.is_ok()) << md.status().to_string();
  if (!md.is_ok()) return "";
  std::string best;
  uint64_t best_size = 0;
  for (const auto& op : md->operators) {
    for (const auto& st : op.subtasks) {
      if (!st.incremental_keyed_state) continue;
      for (const auto& f : st.incremental_keyed_state->shared_files) {
        if (f.file.size_bytes > best_size) {
          best_size = f.file.size_bytes;
          best = sluice::fs::join_path(loc->base_dir, f.file.relative_path);
        }
      }
    }
  }
  EXPECT_FALSE(best.empty()) << "no shared SST in " << chk;
  return fs::weakly_canonical(best).string();
}

// How the new run restores: execution.state-recovery.claim-mode and the retention of its checkpoints.
struct RestoreMode {
  std::string claim_mode = "NO_CLAIM";
  std::string retention = "RETAIN_ON_CANCELLATION";
};

// Restores `chk` under exponential-delay (short backoffs, unlimited attempts). Returns the error the job ended
// with, or the submission's error; fails the test if the job is still running after the wait.
Status restore_damaged(const std::string& chk, const std::string& ck, const std::string& rocks, it::MainJob& job,
                       const RestoreMode& mode, bool* refused_at_submission) {
  Configuration config = rocksdb_incremental(ck, rocks);
  EXPECT_TRUE(config.set_string("execution.state-recovery.path", chk).is_ok());
  EXPECT_TRUE(config.set_string("execution.state-recovery.claim-mode", mode.claim_mode).is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.externalized-checkpoint-retention", mode.retention).is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.type", "exponential-delay").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.exponential-delay.initial-backoff", "10ms").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.exponential-delay.max-backoff", "50ms").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  it::build_main_job(env, job);
  auto submitted = env.execute_async("restoring run");
  *refused_at_submission = !submitted.is_ok();
  if (!submitted.is_ok()) return submitted.status();
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  const bool ended = it::wait_for([&] { return is_globally_terminal(client->status()); }, 180s);
  EXPECT_TRUE(ended) << "the job restores the damaged checkpoint again and again (restart loop)";
  if (!ended) client->cancel();
  JobExecutionResult result = client->wait();
  EXPECT_EQ(result.status, JobStatus::kFailed);
  EXPECT_EQ(it::checkpointing(*client).restarts(), 0) << "a restart restores the same damaged bytes";
  return result.error;
}

class DamagedCheckpoint : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = new std::string(it::fresh_dir("incremental-ck"));
    job_ = new it::MainJob;
    job_->events = 40'000;
    job_->output_dir = *base_ + "/out";
    chk_ = new std::string(take_incremental_checkpoint(*base_ + "/ck", *base_ + "/rocks", *job_));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*base_);
    delete base_;
    delete job_;
    delete chk_;
  }

  // A copy of the checkpoint's job folder with one SST damaged; restores it and checks the error, and that the
  // failed run deleted no file of the restored checkpoint's job folder.
  void run_case(const std::string& name, Damage how, bool expect_refused_at_submission, const RestoreMode& mode = {}) {
    ASSERT_FALSE(chk_->empty());
    const std::string copy = *base_ + "/" + name;
    fs::remove_all(copy);
    fs::create_directories(copy);
    const std::string job_dir = fs::path(*chk_).parent_path().string();
    const std::string copied_job = copy + "/" + fs::path(job_dir).filename().string();
    fs::copy(job_dir, copied_job, fs::copy_options::recursive);
    const std::string chk = copied_job + "/" + fs::path(*chk_).filename().string();
    const std::string sst = largest_shared_sst(chk);
    ASSERT_FALSE(sst.empty());
    const std::set<std::string> before = it::files_under(copied_job);
    it::damage(sst, how);
    bool refused = false;
    Status error = restore_damaged(chk, copy + "/ck-new", copy + "/rocks", *job_, mode, &refused);
    EXPECT_FALSE(error.is_ok());
    EXPECT_EQ(refused, expect_refused_at_submission) << error.to_string();
    it::expect_error_names_damage(error, sst, how);
    it::expect_all_still_there(before, copied_job, sst);
    if (how != Damage::kRemove) {
      EXPECT_NE(error.to_string().find(how == Damage::kTruncate ? "bytes, the checkpoint expects" : "checksum"),
                std::string::npos)
          << "the error says what was expected: " << error.to_string();
    }
    EXPECT_EQ(it::entries_of(copy + "/rocks"), std::vector<std::string>{}) << "no working directory left";
  }

  static std::string* base_;
  static it::MainJob* job_;
  static std::string* chk_;
};

std::string* DamagedCheckpoint::base_ = nullptr;
it::MainJob* DamagedCheckpoint::job_ = nullptr;
std::string* DamagedCheckpoint::chk_ = nullptr;

TEST_F(DamagedCheckpoint, TruncatedSstIsRefusedAtSubmission) { run_case("case-truncate", Damage::kTruncate, true); }

TEST_F(DamagedCheckpoint, MissingSstIsRefusedAtSubmission) { run_case("case-remove", Damage::kRemove, true); }

TEST_F(DamagedCheckpoint, FlippedBytesInSstFailTheJobInsteadOfRestartingForever) {
  run_case("case-flip", Damage::kFlip, false);
}

// A claimed checkpoint belongs to the new run, which deletes its checkpoints when it fails under
// NO_EXTERNALIZED_CHECKPOINTS; not when the failure is that very checkpoint's damage: it stays as evidence.
TEST_F(DamagedCheckpoint, AClaimedDamagedCheckpointStaysWhateverTheRetention) {
  for (const char* retention : {"NO_EXTERNALIZED_CHECKPOINTS", "DELETE_ON_CANCELLATION", "RETAIN_ON_CANCELLATION"}) {
    SCOPED_TRACE(retention);
    run_case(std::string("claimed-flip-") + retention, Damage::kFlip, false, {"CLAIM", retention});
    run_case(std::string("claimed-remove-") + retention, Damage::kRemove, true, {"CLAIM", retention});
  }
}

}  // namespace
}  // namespace sluice
