// A running job's metrics with Flink's names (docs/observability.md): per operator the records per second and the
// watermarks in and out, per task the idle / back-pressured / busy time per second and its last checkpoint's
// alignment and start delay, per job numRestarts, uptime and the checkpoint sizes. Read from the job's registry,
// as GET /metrics exposes it. (The back-pressured and busy time under real back-pressure: backpressure_it.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/mini_cluster.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

std::atomic<int64_t> g_generated_ts{-1};  // the highest event timestamp generated so far

// The value of `name` in the one scope whose operator_name (or, for task metrics, task_name) contains `where`.
std::optional<double> metric(const std::vector<MetricValue>& snapshot, const std::string& where, const std::string& name) {
  std::optional<double> found;
  for (const MetricValue& m : snapshot) {
    if (m.name != name) continue;
    auto op = m.variables.find("operator_name");
    auto task = m.variables.find("task_name");
    const std::string& owner = op != m.variables.end() ? op->second : task != m.variables.end() ? task->second : "";
    if (owner.find(where) == std::string::npos) continue;
    EXPECT_FALSE(found.has_value()) << name << " of '" << where << "' is in more than one scope";
    found = m.value;
  }
  return found;
}

std::optional<double> job_metric(const std::vector<MetricValue>& snapshot, const std::string& name) {
  for (const MetricValue& m : snapshot) {
    if (m.name == name && m.variables.count("operator_name") == 0 && m.variables.count("task_name") == 0) return m.value;
  }
  return std::nullopt;
}

TEST(JobMetrics, WatermarksRatesTaskTimesAndJobFiguresWhileTheJobRuns) {
  Configuration config;
  ASSERT_TRUE(config.set_string("pipeline.auto-watermark-interval", "20ms").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  env.enable_checkpointing(100);
  // 20,000 records per second with timestamps 0, 1, 2, ... ms: the event time runs 20 times the wall clock.
  env.from_source(make_generator_source(int64_t{1} << 40,
                                        [](int64_t i) {
                                          g_generated_ts.store(i);
                                          return i;
                                        },
                                        20'000),
                  WatermarkStrategy<int64_t>::for_bounded_out_of_orderness(10ms).with_timestamp_assigner(
                      [](const int64_t& v) { return v; }),
                  "numbers")
      .uid("numbers")
      .key_by([](const int64_t& v) { return v % 4; })
      .window(TumblingEventTimeWindows::of(100))
      .reduce([](int64_t a, int64_t b) { return a + b; })
      .uid("windows")
      .name("windows")
      .sink_to(DiscardingSink<int64_t>())
      .name("discard");
  auto client = env.execute_async("metrics");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();

  // Until a checkpoint completed and the windows saw a watermark.
  std::vector<MetricValue> s;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
    s = (*client)->metrics().snapshot();
    auto completed = job_metric(s, "numberOfCompletedCheckpoints");
    auto window_wm = metric(s, "windows", "currentInputWatermark");
    if (completed.value_or(0) >= 2 && window_wm.value_or(kMinWatermark) > 0) break;
  }
  std::this_thread::sleep_for(1s);  // the rates see a second of steady running
  s = (*client)->metrics().snapshot();
  const double generated_ts = static_cast<double>(g_generated_ts.load());

  // Watermarks: the source's out, the windows' in (below what was generated: the bound is 10 ms), the sink's in.
  const double source_out = metric(s, "numbers", "currentOutputWatermark").value_or(kMinWatermark);
  const double window_in = metric(s, "windows", "currentInputWatermark").value_or(kMinWatermark);
  EXPECT_GT(source_out, 0);
  EXPECT_LE(source_out, generated_ts);
  EXPECT_GT(window_in, 0);
  EXPECT_LE(window_in, generated_ts);
  EXPECT_TRUE(metric(s, "discard", "currentInputWatermark").has_value());
  EXPECT_TRUE(metric(s, "windows", "currentOutputWatermark").has_value());
  EXPECT_FALSE(metric(s, "numbers", "currentInputWatermark").has_value()) << "a source has no input";
  EXPECT_EQ(metric(s, "windows", "numLateRecordsDropped").value_or(-1), 0);

  // Records per second: the source's are near its 20,000 (started slower: the rate counts from the task's start).
  const double source_rate = metric(s, "numbers", "numRecordsOutPerSecond").value_or(-1);
  EXPECT_GT(source_rate, 5'000);
  EXPECT_LT(source_rate, 25'000);
  EXPECT_GT(metric(s, "windows", "numRecordsInPerSecond").value_or(-1), 5'000);
  EXPECT_GT(metric(s, "numbers", "numBytesOutPerSecond").value_or(-1), 0) << "the source's task writes to the network";

  // Task times: each task's idle + back-pressured + busy is a second's worth; the window task mostly waits for input.
  int tasks = 0;
  for (const MetricValue& m : s) {
    if (m.name != "busyTimeMsPerSecond") continue;
    ++tasks;
    const std::string task = m.variables.at("task_name");
    const double idle = metric(s, task, "idleTimeMsPerSecond").value_or(-1);
    const double back_pressured = metric(s, task, "backPressuredTimeMsPerSecond").value_or(-1);
    EXPECT_GE(idle, 0) << task;
    EXPECT_GE(back_pressured, 0) << task;
    EXPECT_NEAR(m.value + idle + back_pressured, 1000, 20) << task;
    EXPECT_GE(metric(s, task, "accumulateIdleTime").value_or(-1), 0) << task;
    EXPECT_GE(metric(s, task, "checkpointAlignmentTime").value_or(-1), 0) << task;
    EXPECT_GE(metric(s, task, "checkpointStartDelayNanos").value_or(-1), 0) << task;
    if (task.find("windows") != std::string::npos) {
      EXPECT_GT(idle, 500) << task << ": 20,000 records/s keep it idle";
    }
  }
  EXPECT_EQ(tasks, 2) << "a source task and the windows' task (the sink chained behind the windows)";

  // The job's own.
  EXPECT_EQ(job_metric(s, "numRestarts").value_or(-1), 0);
  EXPECT_GT(job_metric(s, "uptime").value_or(-1), 1000);
  const double size = job_metric(s, "lastCheckpointSize").value_or(-1);
  const double full_size = job_metric(s, "lastCheckpointFullSize").value_or(-1);
  EXPECT_GT(size, 0);
  EXPECT_GE(full_size, size);

  (*client)->cancel();
  EXPECT_EQ((*client)->wait().status, JobStatus::kCanceled);
  EXPECT_EQ(job_metric((*client)->metrics().snapshot(), "uptime").value_or(0), -1) << "the job ended";
}

std::atomic<bool> g_failed_once{false};

TEST(JobMetrics, NumRestartsCountsEachRestart) {
  Configuration config;
  ASSERT_TRUE(config.set_string("restart-strategy.type", "fixed-delay").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.fixed-delay.attempts", "3").is_ok());
  ASSERT_TRUE(config.set_string("restart-strategy.fixed-delay.delay", "1ms").is_ok());
  StreamExecutionEnvironment env(config);
  env.set_parallelism(1);
  env.enable_checkpointing(50);
  // Timestamps 0, 1, 2, ... ms, 20,000 records per second: 3 s in all, the failure after about 0.25 s.
  env.from_source(make_generator_source(60'000, [](int64_t i) { return i; }, 20'000),
                  WatermarkStrategy<int64_t>::for_bounded_out_of_orderness(10ms).with_timestamp_assigner(
                      [](const int64_t& v) { return v; }),
                  "numbers")
      .uid("numbers")
      .map([](int64_t v) {
        if (v == 5'000 && !g_failed_once.exchange(true)) throw std::runtime_error("failing once, on purpose");
        return v;
      })
      .uid("fail-once")
      .sink_to(DiscardingSink<int64_t>());
  auto client = env.execute_async("restarts");
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  // Event time goes on after the restart (the restored source does not hold its watermark at the minimum): the
  // source's output watermark passes the failure's timestamp while the job still runs.
  double watermark_after_restart = kMinWatermark;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline && !is_globally_terminal((*client)->status())) {
    const auto running = (*client)->metrics().snapshot();
    if (job_metric(running, "numRestarts").value_or(0) >= 1) {
      watermark_after_restart = metric(running, "numbers", "currentOutputWatermark").value_or(kMinWatermark);
      if (watermark_after_restart > 10'000) break;
    }
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_GT(watermark_after_restart, 10'000) << "the watermark did not move on after the restart";
  EXPECT_EQ((*client)->wait().status, JobStatus::kFinished);
  EXPECT_TRUE(g_failed_once.load());
  const auto s = (*client)->metrics().snapshot();
  EXPECT_EQ(job_metric(s, "numRestarts").value_or(-1), 1);
  EXPECT_EQ(job_metric(s, "uptime").value_or(0), -1);

  // The failure is in the job's exception history (GET /jobs/:jobid/exceptions), with its task and where it ran.
  auto* checkpointing = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  ASSERT_NE(checkpointing, nullptr);
  const std::vector<cluster::JobException> history = checkpointing->exception_history();
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(checkpointing->num_exceptions(), 1);
  EXPECT_NE(history[0].message.find("failing once, on purpose"), std::string::npos) << history[0].message;
  EXPECT_EQ(history[0].exception_name.rfind("sluice.", 0), 0u) << history[0].exception_name;
  EXPECT_NE(history[0].task_name.find("(1/1)"), std::string::npos) << history[0].task_name;
  EXPECT_EQ(history[0].task_manager_id, "mini-cluster");
  EXPECT_GT(history[0].timestamp_ms, 0);
}

}  // namespace
}  // namespace sluice
