// Failures no restart can heal stop the job with their reason instead of restarting forever
// (restart/failure_classifier.h): a restore whose committables' data is gone (restored into another output
// folder, as `sluice demo --restore latest --output <another folder>` does), an output folder the filesystem
// refuses, and a failure that repeats identically restart-strategy.max-identical-failures times. A failure that
// changes each time keeps restarting.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "checkpoint_it_util.h"
#include "sluice/sink/builtin_sinks.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Checkpointing every 30ms into `ck`, the last checkpoint retained on cancel, and exponential-delay restarts
// quick enough that restarting forever shows up as many restarts within seconds.
Configuration fast_restarts(const std::string& ck) {
  Configuration config;
  EXPECT_TRUE(config.set_string("execution.checkpointing.interval", "30ms").is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.dir", ck).is_ok());
  EXPECT_TRUE(config.set_string("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION")
                  .is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.type", "exponential-delay").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.exponential-delay.initial-backoff", "5ms").is_ok());
  EXPECT_TRUE(config.set_string("restart-strategy.exponential-delay.max-backoff", "20ms").is_ok());
  return config;
}

// The job's result once it ended, or, when it is still running (restarting) after `max`, the restarts so far in
// the error of a RUNNING result after cancelling it, so that a test fails instead of hanging.
JobExecutionResult result_within(JobClient& client, std::chrono::milliseconds max) {
  const bool ended = it::wait_for(
      [&] {
        JobStatus s = client.status();
        return s == JobStatus::kFailed || s == JobStatus::kFinished || s == JobStatus::kCanceled;
      },
      max);
  if (ended) return client.wait();
  const int32_t restarts = it::checkpointing(client).restarts();
  client.cancel();
  JobExecutionResult r = client.wait();
  r.status = JobStatus::kRunning;
  r.error = Status::timeout("still not ended after " + std::to_string(max.count()) + "ms, restarted " +
                            std::to_string(restarts) + " times");
  return r;
}

// The job ends FAILED within a minute after `restarts` restarts, its error naming each of `parts`.
void expect_failed(JobClient& client, int32_t restarts, const std::vector<std::string>& parts) {
  JobExecutionResult result = result_within(client, 60s);
  const std::string error = result.error.to_string();
  ASSERT_EQ(result.status, JobStatus::kFailed) << error;
  for (const std::string& part : parts) EXPECT_TRUE(contains(error, part)) << "expected '" << part << "' in: " << error;
  EXPECT_EQ(it::checkpointing(client).restarts(), restarts) << error;
}

// The reported case: a run cancelled after its checkpoints (the demo killed after its first one), restored from its
// latest checkpoint with another output folder. The restored sink commits the checkpoint's part files in its own
// folder, where neither their pending files nor the files exist: a committable whose data is gone. Under
// exponential-delay (unlimited attempts) the job fails at once naming the class and the file, with
// max-identical-failures off so that the classification alone stops it.
TEST(FailureClasses, RestoreWhoseCommittablesAreGoneFailsAtOnceUnderExponentialDelay) {
  const std::string base = it::fresh_dir("data-gone");
  const std::string ck = base + "/ck";
  it::MainJob job;
  job.output_dir = base + "/out";
  it::g_throttle_us = 100;
  std::string restore_path;
  {
    StreamExecutionEnvironment env(fast_restarts(ck));
    env.set_parallelism(2);
    it::build_main_job(env, job);
    auto submitted = env.execute_async("first run");
    ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
    std::unique_ptr<JobClient> client = std::move(submitted).value();
    auto& cp = it::checkpointing(*client);
    ASSERT_TRUE(it::wait_for([&] { return cp.checkpoint_stats().num_completed >= 2; }));
    client->cancel();
    JobExecutionResult result = client->wait();
    ASSERT_EQ(result.status, JobStatus::kCanceled) << result.error.to_string();
    const std::string job_dir = ck + "/" + client->job_id().to_hex();
    std::vector<int64_t> retained = it::completed_checkpoints_in(job_dir);
    ASSERT_FALSE(retained.empty()) << job_dir;
    restore_path = job_dir + "/chk-" + std::to_string(retained.back());
  }
  it::g_throttle_us = 0;

  Configuration config = fast_restarts(ck);
  ASSERT_TRUE(config.set_string("execution.state-recovery.path", restore_path).is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.max-identical-failures", "0").is_ok());
  it::MainJob restored = job;
  restored.output_dir = base + "/another-out";
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  it::build_main_job(env, restored);
  auto submitted = env.execute_async("restored into another folder");
  ASSERT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  std::unique_ptr<JobClient> client = std::move(submitted).value();
  expect_failed(*client, 0,
                {"DATA_MISSING_ERROR", "cannot commit '" + restored.output_dir + "/part-", "neither its pending file"});
  std::filesystem::remove_all(base);
}

// The output folder cannot be created: its parent is a regular file (a file where a folder must be; unlike a
// folder without write permission this refuses root too). The job fails at once naming the class, the path and
// what is wrong, though fixed-delay would allow 100 restarts.
TEST(FailureClasses, OutputFolderTheFilesystemRefusesFailsAtOnce) {
  const std::string base = it::fresh_dir("refused-output");
  std::ofstream(base + "/a-file") << "not a folder\n";
  it::MainJob job;
  job.events = 2'000;
  job.output_dir = base + "/a-file/out";
  Configuration config = fast_restarts(base + "/ck");
  ASSERT_TRUE(config.set_string("restart-strategy.type", "fixed-delay").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.fixed-delay.attempts", "100").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.fixed-delay.delay", "5ms").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.max-identical-failures", "0").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  it::build_main_job(env, job);
  // Found when the job claims its output folder (docs/safety.md): refused at submission, nothing restarts.
  auto submitted = env.execute_async("refused output folder");
  ASSERT_FALSE(submitted.is_ok());
  EXPECT_EQ(submitted.status().code(), StatusCode::kFailedPrecondition);
  for (const std::string& part : {"output folder '" + job.output_dir + "': cannot create '", std::string("Not a directory")}) {
    EXPECT_NE(submitted.status().message().find(part), std::string::npos) << submitted.status().to_string();
  }
  std::filesystem::remove_all(base);
}

// The output folder exists but the job may not write in it (mode 0500: EACCES). chmod does not deny root, so as
// root it skips; failure_classes_unprivileged_it runs it as uid 65534 (and the regular-file case covers root).
TEST(FailureClasses, OutputFolderWithoutWritePermissionFailsAtOnce) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root, which a folder's mode 0500 does not stop";
  const std::string base = it::fresh_dir("read-only-output");
  it::MainJob job;
  job.events = 2'000;
  job.output_dir = base + "/out";
  std::filesystem::create_directories(job.output_dir);
  ::chmod(job.output_dir.c_str(), 0500);
  Configuration config = fast_restarts(base + "/ck");
  ASSERT_TRUE(config.set_string("restart-strategy.max-identical-failures", "0").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(2);
  it::build_main_job(env, job);
  auto submitted = env.execute_async("read-only output folder");
  ASSERT_FALSE(submitted.is_ok());
  EXPECT_EQ(submitted.status().code(), StatusCode::kFailedPrecondition);
  for (const std::string& part : {"output folder '" + job.output_dir + "'", std::string("Permission denied")}) {
    EXPECT_NE(submitted.status().message().find(part), std::string::npos) << submitted.status().to_string();
  }
  ::chmod(job.output_dir.c_str(), 0700);
  std::filesystem::remove_all(base);
}

// Failures of the "check" map so far, across restarts.
std::atomic<int32_t> g_check_failures{0};

// Throws on its first record: the same error each time, or (`changing`) a different word each time for six
// attempts, after which it passes everything on.
struct FailingCheck {
  bool changing = false;
  nexmark::Bid operator()(nexmark::Bid&& b) const {
    static constexpr std::array<const char*, 6> kWords{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"};
    if (!changing) {
      g_check_failures.fetch_add(1);
      throw std::runtime_error("bid of auction " + std::to_string(b.auction) + " rejected: price out of range");
    }
    const int32_t n = g_check_failures.load();
    if (n >= static_cast<int32_t>(kWords.size())) return std::move(b);
    g_check_failures.store(n + 1);
    throw std::runtime_error(std::string("check failed: ") + kWords[static_cast<size_t>(n)]);
  }
};

std::unique_ptr<JobClient> run_check_job(bool changing, const std::string& base, const std::string& max_identical) {
  g_check_failures = 0;
  Configuration config = fast_restarts(base + "/ck");
  EXPECT_TRUE(config.set_string("restart-strategy.max-identical-failures", max_identical).is_ok());
  it::MainJob job;
  job.events = 2'000;
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  it::add_bids(env, job).map(FailingCheck{changing}).name("check").uid("check").sink_to(DiscardingSink<nexmark::Bid>());
  auto submitted = env.execute_async(changing ? "changing failures" : "identical failures");
  EXPECT_TRUE(submitted.is_ok()) << submitted.status().to_string();
  return submitted.is_ok() ? std::move(submitted).value() : nullptr;
}

// The same user function error on every attempt, with max-identical-failures 3: exponential-delay would restart
// forever; the third identical failure fails the job naming the count and the error.
TEST(FailureClasses, IdenticalFailuresStopTheJobAtTheLimit) {
  const std::string base = it::fresh_dir("identical-failures");
  std::unique_ptr<JobClient> client = run_check_job(false, base, "3");
  ASSERT_TRUE(client);
  expect_failed(*client, 2,
                {"3 times in a row", "restart-strategy.max-identical-failures=3", "rejected: price out of range"});
  std::filesystem::remove_all(base);
}

// A failure that changes each time (six different words) is not stopped by max-identical-failures 2: the job
// restarts six times and then finishes.
TEST(FailureClasses, FailuresThatChangeKeepRestarting) {
  const std::string base = it::fresh_dir("changing-failures");
  std::unique_ptr<JobClient> client = run_check_job(true, base, "2");
  ASSERT_TRUE(client);
  JobExecutionResult result = result_within(*client, 60s);
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  EXPECT_EQ(it::checkpointing(*client).restarts(), 6);
  std::filesystem::remove_all(base);
}

}  // namespace
}  // namespace sluice
