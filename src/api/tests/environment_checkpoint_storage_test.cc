// Checkpointing without a checkpoint folder keeps the checkpoints in this process's memory (JobManager checkpoint
// storage): the job logs one warning at its start, saying that none survives the process and naming
// execution.checkpointing.dir. With a folder, without checkpointing, or when the job is refused, it does not.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "../../config/tests/log_capture.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

constexpr const char* kMemoryOnly = "checkpoints live in this process's memory only";

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// Runs a short job under `config` and returns what it logged.
std::string log_of_job(const Configuration& config) {
  testing::LogCapture log;
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  // ~0.3 s of records, so checkpoints are triggered while the source runs.
  env.from_generator(3'000, [](int64_t i) { return i; }, 10'000).sink_to(DiscardingSink<int64_t>());
  auto r = env.execute("checkpoint-storage-warning");
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(r.is_ok() && r->status == JobStatus::kFinished);
  return log.text();
}

TEST(CheckpointStorageWarning, CheckpointsWithoutAFolderAreWarnedAboutOnce) {
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "20ms").is_ok());
  const std::string text = log_of_job(config);
  EXPECT_EQ(count_of(text, kMemoryOnly), 1) << text;
  const size_t at = text.find(kMemoryOnly);
  ASSERT_NE(at, std::string::npos);
  const std::string line = text.substr(text.rfind('\n', at) + 1, text.find('\n', at) - text.rfind('\n', at) - 1);
  EXPECT_EQ(line.rfind("warning: ", 0), 0u) << line;
  EXPECT_NE(line.find("none survives this process (savepoints still go to files)"), std::string::npos) << line;
  EXPECT_NE(line.find("set execution.checkpointing.dir"), std::string::npos) << line;
}

// A refused --restore says only why: no warning about checkpoints of a job that never runs.
TEST(CheckpointStorageWarning, NoWarningWhenTheRestoreIsRefused) {
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "20ms").is_ok());
  ASSERT_TRUE(config.set_string("execution.state-recovery.path", "latest").is_ok());
  testing::LogCapture log;
  StreamExecutionEnvironment env(config);
  env.from_generator(10, [](int64_t i) { return i; }).sink_to(DiscardingSink<int64_t>());
  auto r = env.execute("refused-restore");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("no checkpoint directory"), std::string::npos) << r.status().to_string();
  EXPECT_EQ(count_of(log.text(), kMemoryOnly), 0) << log.text();
}

TEST(CheckpointStorageWarning, NoWarningWithACheckpointFolder) {
  const std::string dir = ::testing::TempDir() + "env-checkpoint-storage-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "20ms").is_ok());
  ASSERT_TRUE(config.set_string("execution.checkpointing.dir", dir).is_ok());
  const std::string text = log_of_job(config);
  EXPECT_EQ(count_of(text, kMemoryOnly), 0) << text;
  std::filesystem::remove_all(dir);
}

TEST(CheckpointStorageWarning, NoWarningWithoutCheckpointing) {
  EXPECT_EQ(count_of(log_of_job(Configuration()), kMemoryOnly), 0);
}

}  // namespace
}  // namespace sluice
