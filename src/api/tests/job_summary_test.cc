// execute() writes the job's summary to execution.job-summary.path (--summary-json) when the job ends; a path that
// cannot be written fails before the job runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sluice/sluice.h"

namespace sluice {
namespace {

std::string scratch(const std::string& name) {
  return ::testing::TempDir() + name + "-" + std::to_string(::getpid());
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

TEST(JobSummary, ExecuteWritesTheSummaryOfTheFinishedJob) {
  const std::string path = scratch("job-summary") + ".json";
  const std::string dir = scratch("job-summary-checkpoints");
  std::filesystem::remove(path);
  std::filesystem::remove_all(dir);
  Configuration config;
  ASSERT_TRUE(config.set_string("execution.job-summary.path", path).is_ok());
  ASSERT_TRUE(config.set_string("execution.checkpointing.interval", "20ms").is_ok());
  ASSERT_TRUE(config.set_string("execution.checkpointing.dir", dir).is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  // ~0.3 s of records, so checkpoints complete while the source runs.
  env.from_generator(3'000, [](int64_t i) { return i; }, 10'000)
      .map([](int64_t v) { return v * 2; })
      .name("doubled")
      .sink_to(DiscardingSink<int64_t>());
  auto r = env.execute("summary-job");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->status, JobStatus::kFinished);
  const nlohmann::json s = read_json(path);
  ASSERT_TRUE(s.is_object()) << path;
  EXPECT_EQ(s.value("job_id", ""), r->job_id.to_hex());
  EXPECT_EQ(s.value("job_name", ""), "summary-job");
  EXPECT_EQ(s.value("status", ""), "FINISHED");
  EXPECT_FALSE(s.contains("error"));
  EXPECT_EQ(s.value("runtime_mode", ""), "STREAMING");
  EXPECT_GT(s.value("peak_rss_bytes", int64_t{0}), 0);
  EXPECT_GE(s.value("elapsed_s", -1.0), 0.0);
  ASSERT_TRUE(s["operators"].contains("doubled")) << s["operators"].dump();
  EXPECT_EQ(s["operators"]["doubled"].value("records_in", 0.0), 3000.0) << s["operators"].dump();
  EXPECT_EQ(s["operators"]["doubled"].value("records_out", 0.0), 3000.0) << s["operators"].dump();
  EXPECT_GE(s.value("checkpoints_completed", int64_t{-1}), 1) << s.dump(2);
  EXPECT_EQ(s.value("restarts", int64_t{-1}), 0);
  EXPECT_EQ(s["restored_from"], nlohmann::json::array({0}));
  EXPECT_TRUE(s["checkpoint_stats"].is_object());
  std::filesystem::remove(path);
  std::filesystem::remove_all(dir);
}

TEST(JobSummary, AnUnwritablePathFailsBeforeTheJobRuns) {
  Configuration config;
  const std::string path = scratch("no-such-folder") + "/summary.json";
  ASSERT_TRUE(config.set_string("execution.job-summary.path", path).is_ok());
  StreamExecutionEnvironment env(config);
  static std::atomic<int64_t> mapped{0};
  env.from_sequence(1, 100).map([](int64_t v) { mapped.fetch_add(1); return v; }).sink_to(DiscardingSink<int64_t>());
  auto r = env.execute("summary-unwritable");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIOError);
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().to_string();
  EXPECT_NE(r.status().message().find("execution.job-summary.path"), std::string::npos) << r.status().to_string();
  EXPECT_EQ(mapped.load(), 0);
}

}  // namespace
}  // namespace sluice
