// StreamExecutionEnvironment::enable_checkpointing(interval_ms, mode): the same keys as -D, so a job built with it
// checkpoints exactly as one configured by execution.checkpointing.interval / .mode.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include "sluice/sluice.h"

namespace sluice {
namespace {

TEST(EnableCheckpointing, SetsTheIntervalAndModeKeys) {
  StreamExecutionEnvironment env;
  EXPECT_EQ(env.configuration().get(options::kCheckpointingInterval).count(), 0);
  StreamExecutionEnvironment& same = env.enable_checkpointing(250, CheckpointingMode::kAtLeastOnce);
  EXPECT_EQ(&same, &env);
  EXPECT_EQ(env.configuration().get(options::kCheckpointingInterval).count(), 250);
  EXPECT_EQ(env.configuration().get(options::kCheckpointingMode), CheckpointingMode::kAtLeastOnce);
  env.enable_checkpointing(1'000);
  EXPECT_EQ(env.configuration().get(options::kCheckpointingInterval).count(), 1'000);
  EXPECT_EQ(env.configuration().get(options::kCheckpointingMode), CheckpointingMode::kExactlyOnce);
}

TEST(EnableCheckpointing, ANonPositiveIntervalIsRefusedNamingTheKey) {
  for (int64_t bad : {int64_t{0}, int64_t{-5}}) {
    StreamExecutionEnvironment env;
    try {
      env.enable_checkpointing(bad);
      ADD_FAILURE() << "interval " << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("execution.checkpointing.interval"), std::string::npos) << e.what();
    }
    EXPECT_EQ(env.configuration().get(options::kCheckpointingInterval).count(), 0);  // nothing stored
  }
}

// The first completed checkpoint's _metadata under `dir`, or "" when there is none yet.
std::string completed_checkpoint(const std::filesystem::path& dir) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const std::filesystem::path& p = it->path();
    if (p.filename() == "_metadata" && p.parent_path().filename().string().rfind("chk-", 0) == 0) return p.string();
  }
  return "";
}

TEST(EnableCheckpointing, AJobBuiltWithItTakesCheckpoints) {
  const std::filesystem::path dir =
      ::testing::TempDir() + "enable-checkpointing-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  StreamExecutionEnvironment env;
  env.enable_checkpointing(20);
  ASSERT_TRUE(env.configuration().set_string("execution.checkpointing.dir", dir.string()).is_ok());
  // Kept when the job is cancelled, so the test can see what it took.
  ASSERT_TRUE(env.configuration()
                  .set_string("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION")
                  .is_ok());
  env.set_parallelism(1);
  env.from_generator(1'000'000'000, [](int64_t i) { return i; }, 2'000).sink_to(DiscardingSink<int64_t>());
  auto client = env.execute_async("enable-checkpointing");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  std::string metadata;
  for (int i = 0; i < 1'000 && metadata.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    metadata = completed_checkpoint(dir);
  }
  (*client)->cancel();
  EXPECT_EQ((*client)->wait().status, JobStatus::kCanceled);
  EXPECT_FALSE(metadata.empty()) << "no completed checkpoint under " << dir << " within 10 s";
  EXPECT_FALSE(completed_checkpoint(dir).empty()) << "the retained checkpoint is gone";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice
