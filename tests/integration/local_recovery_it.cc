// Task-local recovery end to end (execution.state-recovery.from-local, checkpoint/local_recovery_storage.h): the main
// job on the MiniCluster with a local copy of every state file. A task fails after a checkpoint; the restore reads the
// state from the local copies - or, when they were deleted or damaged before the failure, from checkpoint storage -
// and the output is exactly once either way.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/local_recovery_storage.h"
#include "checkpoint_it_util.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

// Every state handle a file, none inside `_metadata`: all of it goes through the local copies.
checkpoint::FileSystemStorageOptions inline_nothing() {
  checkpoint::FileSystemStorageOptions o;
  o.inline_threshold_bytes = 0;
  return o;
}

enum class LocalCopies { kIntact, kDeleted, kDamaged };

void run(LocalCopies copies, const std::string& name) {
  const std::string base = it::fresh_dir(name);
  it::MainJob job;
  job.events = 60'000;
  job.output_dir = base + "/out";
  it::g_throttle_us = 100;  // a few seconds of input: the failure comes while the job runs
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  it::build_main_job(env, job);
  cluster::MiniClusterConfig mc;
  mc.checkpointing = true;
  mc.checkpoint_config.interval = std::chrono::hours(1);  // only the checkpoint the test triggers
  auto primary = std::make_shared<checkpoint::FileSystemCheckpointStorage>(base + "/ck", inline_nothing());
  auto local = checkpoint::LocalRecoveryStorage::create(primary, fs::local_file_system(), base + "/local-state");
  ASSERT_TRUE(local.is_ok()) << local.status().to_string();
  mc.storage = *local;
  mc.restart.type = RestartStrategyType::kFixedDelay;
  mc.restart.fixed_delay.attempts = 3;
  mc.restart.fixed_delay.delay_ms = 10;
  auto submitted = it::submit(env, mc, name);
  ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  auto& cp = it::checkpointing(*client);

  std::this_thread::sleep_for(300ms);  // some state first
  auto id = it::when_deployed([&] { return cp.trigger_checkpoint(); });
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  ASSERT_TRUE(it::wait_for([&] {
    auto s = cp.checkpoint_stats();
    return s.latest_completed && s.latest_completed->id == *id;
  })) << "checkpoint " << id->value() << " did not complete";
  ASSERT_GT((*local)->stats().copies_written, 0) << "no local copy was written";
  int64_t touched = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator((*local)->local_dir())) {
    if (!e.is_regular_file()) continue;
    ++touched;
    if (copies == LocalCopies::kDeleted) {
      std::filesystem::remove(e.path());
    } else if (copies == LocalCopies::kDamaged) {
      std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
      char c = 0;
      f.seekg(0);
      f.get(c);
      f.seekp(0);
      f.put(static_cast<char>(c ^ 0x5a));  // same size: only the checksum tells
    }
  }
  ASSERT_GT(touched, 0);

  cp.fail_task(0, 0, "local recovery test");
  ASSERT_TRUE(it::wait_for([&] { return cp.recoveries().size() >= 1; })) << "no recovery";
  it::g_throttle_us = 0;
  JobExecutionResult result = client->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  ASSERT_EQ(cp.recoveries().size(), 1u);
  EXPECT_EQ(cp.recoveries()[0].first, id->value()) << "restored another checkpoint than the one triggered";
  EXPECT_EQ(it::check_exactly_once(job), "");

  const checkpoint::LocalRecoveryStats s = (*local)->stats();
  if (copies == LocalCopies::kIntact) {
    EXPECT_GT(s.local_reads, 0);
    EXPECT_EQ(s.fallback_reads, 0);
  } else {
    EXPECT_EQ(s.local_reads, 0);
    EXPECT_GT(s.fallback_reads, 0);
  }
  std::filesystem::remove_all(base);
}

// From the configuration: execution.state-recovery.from-local makes the process's own directory under
// taskmanager.state.local.root-dirs, which holds copies while the job runs and is gone when it ended.
TEST(LocalRecovery, TheConfigurationMakesTheProcesssOwnDirectoryAndItGoesWithTheJob) {
  const std::string base = it::fresh_dir("local-config");
  it::MainJob job;
  job.events = 60'000;
  job.output_dir = base + "/out";
  it::g_throttle_us = 100;
  Configuration config;
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"execution.checkpointing.interval", "50ms"},
           {"execution.checkpointing.dir", base + "/ck"},
           {"execution.checkpointing.data-inline-threshold", "0b"},
           {"execution.state-recovery.from-local", "true"},
           {"taskmanager.state.local.root-dirs", base + "/local-root"}}) {
    ASSERT_TRUE(config.set_string(key, value).is_ok()) << key;
  }
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  it::build_main_job(env, job);
  auto client = env.execute_async("local-config");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  const std::string prefix = "sluice-local-state-" + std::to_string(::getpid()) + "-";
  std::string dir;
  bool copies = false;
  ASSERT_TRUE(it::wait_for([&] {
    if (!std::filesystem::exists(base + "/local-root")) return false;
    for (const auto& e : std::filesystem::directory_iterator(base + "/local-root")) {
      if (e.path().filename().string().rfind(prefix, 0) != 0) continue;
      dir = e.path().string();
      for (const auto& c : std::filesystem::directory_iterator(e.path())) {
        copies = copies || c.path().filename().string().rfind("chk-", 0) == 0;
      }
    }
    return copies;
  })) << "no local copies under " << base << "/local-root";
  it::g_throttle_us = 0;
  ASSERT_EQ((*client)->wait().status, JobStatus::kFinished);
  client->reset();  // the job's storage goes with its client
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir << " outlived the job";
  EXPECT_EQ(it::check_exactly_once(job), "");
  std::filesystem::remove_all(base);
}

TEST(LocalRecovery, ARestartedTaskRestoresFromItsLocalCopies) { run(LocalCopies::kIntact, "local-intact"); }
TEST(LocalRecovery, DeletedLocalCopiesFallBackToCheckpointStorage) { run(LocalCopies::kDeleted, "local-deleted"); }
TEST(LocalRecovery, DamagedLocalCopiesFallBackToCheckpointStorage) { run(LocalCopies::kDamaged, "local-damaged"); }

}  // namespace
}  // namespace sluice
