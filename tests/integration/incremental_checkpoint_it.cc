// Incremental RocksDB checkpoints end to end (docs/state-backends.md): the main job on RocksDB with
// execution.checkpointing.incremental, num-retained 3, cancelled after 20 checkpoints with some uploads failed on
// purpose (declined checkpoints). Then:
// - shared/ holds exactly the files the 3 retained checkpoints refer to (nothing of the aborted ones, nothing
//   subsumed), and every retained checkpoint verifies;
// - a new run restored from each retained checkpoint (NO_CLAIM) gives exactly-once output, and leaves every file
//   of the restored job byte for byte as it was (checksums before and after);
// - rescaling: restores at parallelism 1 and 3 from a checkpoint taken at parallelism 2, and back to 2 from a
//   checkpoint taken at 1, give exactly-once output;
// - CLAIM: the new run owns the restored checkpoint and deletes it (folder and shared files) once subsumed.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <fstream>
#include <iterator>

#include "checkpoint/checkpoint_files.h"
#include "checkpoint/checkpoint_verify.h"
#include "fs/fault_injection_file_system.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint_it_util.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

Configuration incremental_config(const std::string& ck, const std::string& rocks, const std::string& retention) {
  Configuration config;
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", "30ms").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", ck).is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.num-retained", "3").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.externalized-checkpoint-retention", retention).is_ok());
  EXPECT_TRUE(config.set_string("state.backend.incremental", "true").is_ok());  // the deprecated key, on purpose
  EXPECT_TRUE(config.set_string("state.backend.type", "rocksdb").is_ok());
  EXPECT_TRUE(config.set_string("state.backend.rocksdb.localdir", rocks).is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.type", "none").is_ok());
  return config;
}

checkpoint::CheckpointMetadata read_metadata(const std::string& chk_dir) {
  auto fs = sluice::fs::local_file_system();
  auto loc = checkpoint::locate_checkpoint(*fs, chk_dir);
  EXPECT_TRUE(loc.is_ok()) << loc.status().to_string();
  auto md = checkpoint::read_checkpoint_metadata(*fs, *loc);
  EXPECT_TRUE(md.is_ok()) << md.status().to_string();
  return md.is_ok() ? *md : checkpoint::CheckpointMetadata{};
}

// XXH3-64 of every file under `dir`, by path relative to it.
std::map<std::string, uint64_t> checksums_under(const std::string& dir) {
  std::map<std::string, uint64_t> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    out[fs::relative(e.path(), dir).string()] = XXH3_64bits(bytes.data(), bytes.size());
  }
  return out;
}

std::set<std::string> files_in_shared(const std::string& job_dir) {
  std::set<std::string> out;
  for (const std::string& name : it::entries_of(job_dir + "/shared")) out.insert("shared/" + name);
  return out;
}

// Runs the main job restored from `chk` at `parallelism` to its end; expects exactly-once output. Returns the
// new run's job id.
std::string restore_and_finish(const std::string& ck, const std::string& rocks, const std::string& chk,
                               const std::string& claim_mode, int32_t parallelism, it::MainJob& job) {
  Configuration config = incremental_config(ck, rocks, "NO_EXTERNALIZED_CHECKPOINTS");
  EXPECT_TRUE(config.set_string("execution.state-recovery.path", chk).is_ok());
  EXPECT_TRUE(config.set_string("execution.state-recovery.claim-mode", claim_mode).is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(parallelism);
  it::build_main_job(env, job);
  auto submitted = env.execute_async("restored run");
  EXPECT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  if (!submitted.is_ok()) return "";
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  JobExecutionResult result = client->wait();
  EXPECT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  EXPECT_GE(it::checkpointing(*client).checkpoint_stats().num_completed, 1);
  EXPECT_EQ(it::check_exactly_once(job), "");
  const std::string id = client->job_id().to_hex();
  // A finished run deletes its checkpoints, shared files included; what stays is the record of the checkpoint it
  // restored, for `--restore latest` (docs/checkpoints.md).
  std::vector<std::string> left;
  if (fs::exists(ck + "/" + id)) {
    for (const auto& e : fs::directory_iterator(ck + "/" + id)) left.push_back(e.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"_finished-restore"});
  return id;
}

struct CancelledRun {
  std::string job_dir;
  std::vector<int64_t> retained;
  coordinator::CheckpointStatsSnapshot stats;
};

// The main job at `parallelism`, incremental, cancelled after `checkpoints` completed checkpoints, retaining 3.
// `fs` (optional) may fail uploads. The output at cancellation is copied to `saved`.
CancelledRun run_and_cancel(const std::string& ck, const std::string& rocks, int32_t parallelism, int64_t checkpoints,
                            it::MainJob& job, const std::string& saved,
                            std::shared_ptr<sluice::fs::FaultInjectionFileSystem> faults) {
  CancelledRun run;
  // Slow enough that the job is still running after `checkpoints` checkpoints on a loaded machine under
  // sanitizers (about 40 s of input); cancelled as soon as they completed.
  it::g_throttle_us = 1000;
  StreamExecutionEnvironment env(incremental_config(ck, rocks, "RETAIN_ON_CANCELLATION"));
  env.set_parallelism(parallelism);
  it::build_main_job(env, job);
  Result<std::unique_ptr<JobClient>> submitted = Status::internal("not submitted");
  if (faults) {
    cluster::MiniClusterConfig mc;
    mc.state_backend_type = "ROCKSDB";
    mc.rocksdb.local_dir = rocks;
    mc.incremental_checkpoints = true;
    mc.checkpointing = true;
    mc.checkpoint_config.interval = 30ms;
    mc.checkpoint_config.tolerable_failures = 1000;  // declined checkpoints are the point here
    checkpoint::FileSystemStorageOptions so;
    so.file_system = faults;
    mc.storage = std::make_shared<checkpoint::FileSystemCheckpointStorage>(ck, so);
    mc.num_retained = 3;
    mc.retention = checkpoint::ExternalizedCheckpointRetention::kRetainOnCancellation;
    submitted = it::submit(env, mc, "incremental");
  } else {
    submitted = env.execute_async("incremental");
  }
  EXPECT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  if (!submitted.is_ok()) return run;
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);
  EXPECT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= checkpoints; }));
  client->cancel();
  JobExecutionResult result = client->wait();
  EXPECT_EQ(result.status, JobStatus::kCanceled) << result.error.to_string();
  it::g_throttle_us = 0;
  run.job_dir = ck + "/" + client->job_id().to_hex();
  run.retained = it::completed_checkpoints_in(run.job_dir);
  run.stats = cp.checkpoint_stats();
  fs::remove_all(saved);
  fs::copy(job.output_dir, saved);
  return run;
}

TEST(IncrementalCheckpoints, SharedFilesRestoreEachClaimModesAndRescaling) {
  const std::string base = it::fresh_dir("incremental");
  const std::string ck = base + "/ck", rocks = base + "/rocks", saved = base + "/out-at-cancel";
  it::MainJob job;
  job.events = 40'000;
  job.output_dir = base + "/out";

  // Uploads to shared/ fail now and then: those checkpoints are declined and their uploads must vanish.
  auto faults = std::make_shared<sluice::fs::FaultInjectionFileSystem>();
  for (int skip : {3, 11, 25}) faults->inject_failure(sluice::fs::FileOp::kWriteFile, "/shared/", 1, skip);
  CancelledRun run = run_and_cancel(ck, rocks, 2, 20, job, saved, faults);
  ASSERT_EQ(run.retained.size(), 3u) << "num-retained 3";
  EXPECT_GE(run.stats.num_completed, 20);
  EXPECT_GE(run.stats.num_failed, 1) << "an injected upload failure declines its checkpoint";

  // shared/ holds exactly what the retained checkpoints refer to.
  std::set<std::string> referenced;
  for (int64_t id : run.retained) {
    checkpoint::CheckpointMetadata md = read_metadata(run.job_dir + "/chk-" + std::to_string(id));
    ASSERT_TRUE(md.has_incremental_state()) << "checkpoint " << id;
    for (const std::string& f : md.shared_files()) referenced.insert(f);
    EXPECT_LE(md.checkpointed_size_bytes(), md.state_size_bytes());
  }
  EXPECT_FALSE(referenced.empty());
  EXPECT_EQ(files_in_shared(run.job_dir), referenced);
  auto verified = checkpoint::verify_checkpoint(run.job_dir);
  ASSERT_TRUE(verified.is_ok()) << verified.status().to_string();
  EXPECT_TRUE(verified->ok()) << verified->to_string();
  EXPECT_EQ(it::entries_of(rocks), std::vector<std::string>{}) << "working and local snapshot folders are gone";
  ASSERT_FALSE(it::check_exactly_once(job).empty()) << "the cancelled run must not have produced everything";

  // NO_CLAIM from each retained checkpoint: exactly once, and the restored job's files stay byte for byte.
  const std::map<std::string, uint64_t> before = checksums_under(run.job_dir);
  for (int64_t id : run.retained) {
    SCOPED_TRACE("NO_CLAIM restore of checkpoint " + std::to_string(id));
    it::reset_output(saved, job.output_dir, id);
    restore_and_finish(ck, rocks, run.job_dir + "/chk-" + std::to_string(id), "NO_CLAIM", 2, job);
  }
  EXPECT_EQ(checksums_under(run.job_dir), before) << "NO_CLAIM must leave the restored checkpoint untouched";

  // Rescaling 2 -> 1 and 2 -> 3 from the newest checkpoint.
  const int64_t newest = run.retained.back();
  for (int32_t p : {1, 3}) {
    SCOPED_TRACE("rescaled restore at parallelism " + std::to_string(p));
    it::reset_output(saved, job.output_dir, newest);
    restore_and_finish(ck, rocks, run.job_dir + "/chk-" + std::to_string(newest), "NO_CLAIM", p, job);
  }
  EXPECT_EQ(checksums_under(run.job_dir), before);

  // CLAIM: the new run owns the newest checkpoint; once subsumed (and at the latest when the run finishes), its
  // folder and its shared files are deleted.
  const std::string claimed = run.job_dir + "/chk-" + std::to_string(newest);
  const std::vector<std::string> claimed_files = read_metadata(claimed).shared_files();
  it::reset_output(saved, job.output_dir, newest);
  restore_and_finish(ck, rocks, claimed, "CLAIM", 2, job);
  EXPECT_FALSE(fs::exists(claimed)) << "CLAIM: the claimed checkpoint is deleted once subsumed";
  for (const std::string& f : claimed_files) EXPECT_FALSE(fs::exists(run.job_dir + "/" + f)) << f;
  EXPECT_EQ(it::entries_of(rocks), std::vector<std::string>{});
  fs::remove_all(base);
}

// Rescaling 1 -> 2: a checkpoint of a run at parallelism 1 restored at parallelism 2 (each new subtask opens the
// one old database and drops the other half of the key groups).
TEST(IncrementalCheckpoints, RescalesFromOneToTwoSubtasks) {
  const std::string base = it::fresh_dir("incremental-1to2");
  const std::string ck = base + "/ck", rocks = base + "/rocks", saved = base + "/out-at-cancel";
  it::MainJob job;
  job.events = 20'000;
  job.output_dir = base + "/out";
  CancelledRun run = run_and_cancel(ck, rocks, 1, 4, job, saved, nullptr);
  ASSERT_FALSE(run.retained.empty());
  it::reset_output(saved, job.output_dir, run.retained.back());
  const std::string chk = run.job_dir + "/chk-" + std::to_string(run.retained.back());
  {
    // Into the heap backend the incremental checkpoint is refused at submission, naming it and the backends (the
    // check `--check-restore` runs too), instead of failing for good once its tasks were deployed.
    Configuration config = incremental_config(ck, rocks, "NO_EXTERNALIZED_CHECKPOINTS");
    ASSERT_TRUE(config.set_string("state.backend.type", "hashmap").is_ok());
    ASSERT_TRUE(config.set_string("execution.checkpointing.incremental", "false").is_ok());
    ASSERT_TRUE(config.set_string("execution.state-recovery.path", chk).is_ok());
    StreamExecutionEnvironment env(config);
    env.set_parallelism(2);
    it::build_main_job(env, job);
    auto submitted = env.execute_async("refused on the heap");
    ASSERT_FALSE(submitted.is_ok()) << "an incremental RocksDB checkpoint was submitted for the heap backend";
    const std::string msg = submitted.status().to_string();
    EXPECT_NE(msg.find("incremental state restores only into the RocksDB state backend"), std::string::npos) << msg;
    EXPECT_NE(msg.find("state.backend.type hashmap"), std::string::npos) << msg;
    EXPECT_NE(msg.find(chk), std::string::npos) << msg;
  }
  restore_and_finish(ck, rocks, chk, "NO_CLAIM", 2, job);
  fs::remove_all(base);
}

}  // namespace
}  // namespace sluice
