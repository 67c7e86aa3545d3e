// StreamExecutionEnvironment::set_file_systems: a job's checkpoint storage uses the registry it is given.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "fs/fault_injection_file_system.h"
#include "fs/file_system_registry.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

TEST(EnvironmentFileSystems, AJobWritesItsCheckpointsThroughTheGivenRegistry) {
  const std::string dir = ::testing::TempDir() + "env-file-systems-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  auto counting = std::make_shared<fs::FaultInjectionFileSystem>();
  auto registry = std::make_shared<fs::FileSystemRegistry>();
  registry->register_file_system("file", counting);  // plain paths too

  Configuration config;
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "20ms").is_ok());
  ASSERT_TRUE(config.set_string("execution.checkpointing.dir", dir).is_ok());
  StreamExecutionEnvironment env(config);
  env.set_file_systems(registry);
  env.set_parallelism(1);
  // ~0.3 s of records, so checkpoints complete while the source runs.
  env.from_generator(3'000, [](int64_t i) { return i; }, 10'000).sink_to(DiscardingSink<int64_t>());
  auto r = env.execute("file-systems");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->status, JobStatus::kFinished);
  // At least one `_metadata` went through the registry's filesystem.
  EXPECT_GT(counting->count(fs::FileOp::kWriteFile), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sluice
