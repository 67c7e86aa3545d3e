// Region failover across TaskManagers (jobmanager.execution.failover-strategy region, docs/fault-tolerance.md): the
// JobMaster deploys each pipelined region of the job as its own deployment through the RemoteDeployer, so a
// TaskManager runs several at once, and a failure restarts only the regions it hits - a task's failure its own
// region, a lost TaskManager the regions that ran on it, on a replacement slot - while the other regions' tasks keep
// their attempts, also with a fixed taskmanager.data.port (one data plane per TaskManager). Checked against the
// committed output: exactly once, with each subtask's operator state in step with its source position (the count in
// every line is the value's position in its split).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <sstream>

#include "../../../tests/integration/region_failover_util.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "remote_cluster_util.h"

namespace sluice::rpc {
namespace {

using namespace remote_test;  // NOLINT: test helpers
using runtime::FailurePoint;

constexpr int64_t kRecords = 80'000;

std::string fresh_base(const std::string& name) {
  const std::string base = ::testing::TempDir() + "remote-region-" + std::to_string(::getpid()) + "-" + name;
  std::filesystem::remove_all(base);
  return base;
}

cluster::MiniClusterConfig region_config(const std::string& base) {
  cluster::MiniClusterConfig c;
  c.clock = SystemClock::shared();
  c.checkpointing = true;
  c.checkpoint_config.interval = std::chrono::milliseconds(40);
  c.storage = std::make_shared<checkpoint::FileSystemCheckpointStorage>(base + "/ck", checkpoint::FileSystemStorageOptions{});
  c.restart.type = RestartStrategyType::kFixedDelay;
  c.restart.fixed_delay = {100, 10};
  c.failover_strategy = FailoverStrategy::kRegion;
  c.job_id = JobId(9, 9);
  return c;
}

// Parallel pipelines (numbers -> count -> exactly-once part files, one chained vertex of parallelism 4: four regions)
// or, with `rescale`, numbers (2) -> rescale -> count (4): two regions, {numbers 0, count 0, 1} and {numbers 1,
// count 2, 3}, whose rescale channels cross TaskManagers when the slots are spread out (unaligned checkpoints).
Program pipelines(const std::string& base, bool rescale) {
  StreamExecutionEnvironment env;
  env.set_parallelism(4);
  auto numbers = env.from_generator(kRecords, [](int64_t i) { return i; }, 0, "numbers");
  numbers.uid("numbers");
  if (rescale) {
    numbers.set_parallelism(2);
    it::count_and_commit(numbers.rescale(), it::CountingMap{}, base + "/out");
  } else {
    it::count_and_commit(numbers, it::CountingMap{}, base + "/out");
  }
  Program p;
  p.sg = std::make_shared<StreamGraph>(env.stream_graph());
  auto jg = graph::build_job_graph(*p.sg, graph::JobGraphOptions{"remote-pipelines", 4, 128});
  EXPECT_TRUE(jg.is_ok()) << jg.status().to_string();
  p.jg = std::move(jg).value();
  p.config = region_config(base);
  if (rescale) {
    // Unaligned barriers with little buffered: checkpoints complete while the rescale channels are back-pressured,
    // and hold their in-flight data, which the failed region restores.
    p.config.unaligned.enabled = true;
    p.config.network.buffer_size_bytes = 1024;
    p.config.network.max_buffers_per_channel = 4;
  }
  return p;
}

// Where each subtask runs now: (vertex, subtask) -> (TaskManager id, attempt number).
std::map<std::pair<int32_t, int32_t>, std::pair<std::string, int32_t>> placement(const JobClient& client) {
  std::map<std::pair<int32_t, int32_t>, std::pair<std::string, int32_t>> out;
  for (const auto& l : dynamic_cast<const cluster::JobPlacementView&>(client).subtask_locations()) {
    out[{l.id.vertex.value(), l.id.subtask.value()}] = {l.task_manager_id, l.id.attempt_number};
  }
  return out;
}

// The first value of each split of the generator at parallelism `p` (floor(count * i / p)).
std::vector<int64_t> split_starts(int32_t p) {
  std::vector<int64_t> starts;
  for (int32_t i = 0; i < p; ++i) starts.push_back(kRecords * i / p);
  return starts;
}

// A JobManager with a loss monitor and TaskManagers of two slots each, every process with its own copy of the
// program; their tasks meet the failures `injector` arms (for the subtasks of `failing_vertex`).
struct RegionCluster {
  RegionCluster(const std::string& folder, bool rescale_edge, int32_t failing_vertex)
      : base(folder), rescale(rescale_edge), jm_program(pipelines(folder, rescale_edge)),
        injector({{failing_vertex, 0, ~0u}, {failing_vertex, 1, ~0u}, {failing_vertex, 2, ~0u}, {failing_vertex, 3, ~0u}}) {
    EXPECT_TRUE(jm.server);
  }
  ~RegionCluster() {
    for (auto& tm : tms)
      if (tm) tm->stop();
    if (jm.server) jm.server->shutdown();
    std::filesystem::remove_all(base);
  }
  // Starts TaskManager `id` (its data plane on `data_port`, 0: ephemeral) and waits until the JobManager has
  // `slots_after` slots in all.
  TaskManager* add_task_manager(const std::string& id, int32_t slots_after, uint16_t data_port = 0) {
    tm_programs.push_back(std::make_unique<Program>(pipelines(base, rescale)));
    tms.push_back(start_task_manager(*tm_programs.back(), metrics, jm.address(), 0, id, 2, &injector, data_port));
    if (!tms.back()) return nullptr;
    if (!wait_until([&] { return jm.rm.total_slots() == slots_after; }, id + "'s registration")) return nullptr;
    return tms.back().get();
  }
  // Starts the job; null (the test failed) when it did not start.
  cluster::CheckpointingJobClient* start(bool spread_out = false) {
    // Every TaskManager's slots offered (it knows its registration), so the slots the job gets do not depend on
    // which TaskManager connected first.
    if (!wait_until([&] { return jm.rm.free_slots() == jm.rm.total_slots(); }, "every TaskManager's slots offered")) {
      return nullptr;
    }
    auto started = jm.start_job(jm_program, &monitor, 30'000, spread_out);
    EXPECT_TRUE(started.is_ok()) << started.status().to_string();
    if (!started.is_ok()) return nullptr;
    client = std::move(*started);
    // start_job returns while the JobMaster deploys the first attempt.
    if (!wait_until([&] { return !placement(*client).empty(); }, "the first attempt's deployment")) return nullptr;
    return dynamic_cast<cluster::CheckpointingJobClient*>(client.get());
  }
  // Waits for the job to finish (the throttle off) and checks its committed output.
  void finish_exactly_once(const std::vector<int64_t>& starts) {
    it::g_throttle_us = 0;
    JobExecutionResult result = client->wait();
    ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
    EXPECT_EQ(it::check_exactly_once(it::committed_lines(base + "/out"), kRecords, starts), "");
  }

  const std::string base;
  const bool rescale;
  Program jm_program;
  JobManagerControlPlane jm;
  cluster::TaskManagerLossMonitor monitor{&jm.rm, 20};
  runtime::FaultInjector injector;
  MetricRegistry metrics;
  std::vector<std::unique_ptr<Program>> tm_programs;  // stable addresses: the TaskManagers point into them
  std::vector<std::unique_ptr<TaskManager>> tms;
  std::unique_ptr<JobClient> client;
};

TEST(RemoteRegionFailover, ALostTaskManagerRestartsOnlyTheRegionsItRanOnAReplacementSlot) {
  it::g_throttle_us = it::throttle_us(60);  // 20000 records per pipeline, about 1.2 s each: the loss comes while all run
  RegionCluster cluster(fresh_base("lost"), false, 0);
  ASSERT_TRUE(cluster.add_task_manager("tm-a", 2));
  TaskManager* b = cluster.add_task_manager("tm-b", 4);
  ASSERT_TRUE(b);
  auto* cp = cluster.start();
  ASSERT_NE(cp, nullptr);
  const JobClient& client = *cluster.client;
  ASSERT_TRUE(wait_until([&] { return cp->checkpoint_stats().num_completed >= 2; }, "two checkpoints"));
  const auto before = placement(client);
  ASSERT_EQ(before.size(), 4u);
  std::set<int32_t> on_b;
  for (const auto& [where, at] : before) {
    EXPECT_EQ(at.second, 0) << "subtask " << where.second;
    if (at.first == "tm-b") on_b.insert(where.second);
  }
  ASSERT_EQ(on_b.size(), 2u) << "tm-b holds two of the four slots";

  // The spare registers, then tm-b dies: its two regions restart on the spare, tm-a's run on.
  ASSERT_TRUE(cluster.add_task_manager("tm-c", 6));
  const auto killed_at = std::chrono::steady_clock::now();
  b->stop();
  ASSERT_TRUE(wait_until(
      [&] {
        const auto now = placement(client);
        if (now.size() != 4) return false;
        for (int32_t s : on_b)
          if (now.at({0, s}).first != "tm-c") return false;
        return true;
      },
      "tm-b's regions running on the spare"));
  const auto restarted_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed_at).count();
  for (const auto& [where, at] : placement(client)) {
    if (on_b.count(where.second)) {
      EXPECT_GT(at.second, 0) << "subtask " << where.second << " ran on the lost TaskManager";
    } else {
      EXPECT_EQ(at, before.at(where)) << "subtask " << where.second << " of a region on tm-a was restarted";
    }
  }
  EXPECT_EQ(client.status(), JobStatus::kRunning);
  // One per region of the lost TaskManager, and one more for each redeployment that went to its slot before it was
  // seen lost (a call to it failing first).
  EXPECT_GE(cp->restarts(), 2) << "one restart per region of the lost TaskManager";
  const int64_t completed = cp->checkpoint_stats().num_completed;
  ASSERT_TRUE(wait_until([&] { return cp->checkpoint_stats().num_completed >= completed + 2; },
                         "checkpoints completing after the failover"));
  std::printf("tm-b's 2 regions ran again on the spare %lld ms after it died; %d restarts\n",
              static_cast<long long>(restarted_ms), cp->restarts());
  cluster.finish_exactly_once(split_starts(4));
}

// Seeded task failures in the TaskManagers (three of the points of a task's checkpoint cycle, in a seeded order,
// each in a seeded subtask; SLUICE_REMOTE_REGION_FAILOVER_SEEDS, default "1"): each restarts its own region, on
// the slot it had.
void fail_tasks(uint64_t seed) {
  it::g_throttle_us = it::throttle_us(60);
  RegionCluster cluster(fresh_base("task-" + std::to_string(seed)), false, 0);
  ASSERT_TRUE(cluster.add_task_manager("tm-0", 2));
  ASSERT_TRUE(cluster.add_task_manager("tm-1", 4));
  auto* cp = cluster.start();
  ASSERT_NE(cp, nullptr);
  const JobClient& client = *cluster.client;
  std::mt19937_64 rng(seed);
  std::vector<FailurePoint> points = {FailurePoint::kTask, FailurePoint::kSource, FailurePoint::kSink,
                                      FailurePoint::kBetweenSyncAndAsyncSnapshot,
                                      FailurePoint::kBetweenCompletionAndCommit, FailurePoint::kAfterCommit};
  std::shuffle(points.begin(), points.end(), rng);
  auto before = placement(client);
  constexpr int kFailures = 3;
  for (int i = 0; i < kFailures; ++i) {
    const int64_t completed = cp->checkpoint_stats().num_completed;
    ASSERT_TRUE(wait_until([&] { return cp->checkpoint_stats().num_completed >= completed + 2; },
                           "checkpoints before failure " + std::to_string(i + 1)));
    const int32_t subtask = static_cast<int32_t>(rng() % 4);
    const FailurePoint point = points[static_cast<size_t>(i)];
    SCOPED_TRACE("failure " + std::to_string(i + 1) + " at " + runtime::failure_point_name(point) + " of subtask " +
                 std::to_string(subtask));
    ASSERT_TRUE(cluster.injector.arm(point, 0, subtask, "remote region failover test").is_ok());
    ASSERT_TRUE(wait_until([&] { return cp->restarts() > i && placement(client).size() == 4; }, "the restart"));
    const auto after = placement(client);
    for (const auto& [where, at] : after) {
      if (where.second == subtask) {
        EXPECT_EQ(at.second, cp->restarts()) << "the failed subtask's region runs the newest attempt";
        EXPECT_EQ(at.first, before.at(where).first) << "the region went back to its own slot";
      } else {
        EXPECT_EQ(at, before.at(where)) << "subtask " << where.second << " of another region was restarted";
      }
    }
    before = after;
  }
  cluster.finish_exactly_once(split_starts(4));
  EXPECT_EQ(cp->restarts(), kFailures);
}

TEST(RemoteRegionFailover, ATaskFailureRestartsOnlyItsRegion) {
  for (uint64_t seed : it::seeds_from_env("SLUICE_REMOTE_REGION_FAILOVER_SEEDS", "1")) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    fail_tasks(seed);
  }
}

// Spread-out slots put each region of a rescale job on both TaskManagers: each TaskManager runs two deployments,
// whose remote channels share its one data plane (one connection between the two TaskManagers). A failure in one
// region restarts that region's deployments on both TaskManagers only; the other region's tasks keep running on the
// same connection. With `fixed_data_ports` every TaskManager binds a taskmanager.data.port of its own (free ports
// picked now), which every deployment there shares, as with Flink's one netty server per TaskManager.
void fail_spanning_region(bool fixed_data_ports) {
  it::g_throttle_us = it::throttle_us(40);
  RegionCluster cluster(fresh_base(fixed_data_ports ? "rescale-fixed" : "rescale"), true, 1);
  const uint16_t port0 = fixed_data_ports ? free_port() : 0;
  const uint16_t port1 = fixed_data_ports ? free_port() : 0;
  if (fixed_data_ports) {
    ASSERT_NE(port0, 0);
    ASSERT_NE(port1, 0);
    ASSERT_NE(port0, port1);
  }
  ASSERT_TRUE(cluster.add_task_manager("tm-0", 2, port0));
  ASSERT_TRUE(cluster.add_task_manager("tm-1", 4, port1));
  auto* cp = cluster.start(/*spread_out=*/true);
  ASSERT_NE(cp, nullptr);
  const JobClient& client = *cluster.client;
  ASSERT_TRUE(wait_until(
      [&] {
        const auto stats = cp->checkpoint_stats();
        return stats.num_completed >= 2 && stats.latest_completed && stats.latest_completed->persisted_data_bytes > 0;
      },
      "a completed checkpoint with in-flight data"));
  const auto before = placement(client);
  ASSERT_EQ(before.size(), 6u);  // numbers: 2 subtasks, count -> sink: 4
  // Each region spans both TaskManagers: slots 0, 1 (region 1) and 2, 3 (region 2) alternate between them.
  EXPECT_NE(before.at({1, 0}).first, before.at({1, 1}).first);
  EXPECT_NE(before.at({1, 2}).first, before.at({1, 3}).first);
  if (fixed_data_ports) {
    // Both regions' deployments run, and each TaskManager serves its data plane on the port it was given.
    EXPECT_TRUE(listening(port0)) << "tm-0's taskmanager.data.port " << port0;
    EXPECT_TRUE(listening(port1)) << "tm-1's taskmanager.data.port " << port1;
  }
  ASSERT_TRUE(cluster.injector.arm(FailurePoint::kSink, 1, 3, "remote region failover test").is_ok());
  ASSERT_TRUE(wait_until([&] { return cp->restarts() >= 1 && placement(client).size() == 6; }, "the restart"));
  const auto after = placement(client);
  for (auto [v, s] : std::vector<std::pair<int32_t, int32_t>>{{0, 0}, {1, 0}, {1, 1}}) {
    EXPECT_EQ(after.at({v, s}), before.at({v, s})) << "vertex " << v << " subtask " << s << " is in the other region";
  }
  for (auto [v, s] : std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {1, 2}, {1, 3}}) {
    EXPECT_EQ(after.at({v, s}).second, 1) << "vertex " << v << " subtask " << s << " is in the failed region";
  }
  const int64_t completed = cp->checkpoint_stats().num_completed;
  ASSERT_TRUE(wait_until([&] { return cp->checkpoint_stats().num_completed >= completed + 2; },
                         "checkpoints completing after the failover"));
  // The counts are per count subtask over what its producer round-robins to it: only exactly-once is checked.
  cluster.finish_exactly_once({});
  EXPECT_EQ(cp->restarts(), 1);
}

// A TaskManager process that dies and starts again on the same fixed data port registers anew, so it is a new peer
// on the data plane: the surviving TaskManager closes its connection to the former process and reaches the new one,
// and both regions (each spans both TaskManagers) run again across them.
TEST(RemoteRegionFailover, ATaskManagerStartedAgainOnItsFixedDataPortIsReachedAgain) {
  it::g_throttle_us = it::throttle_us(40);
  RegionCluster cluster(fresh_base("rescale-again"), true, 1);
  const uint16_t port0 = free_port();
  const uint16_t port1 = free_port();
  ASSERT_NE(port0, 0);
  ASSERT_NE(port1, 0);
  ASSERT_NE(port0, port1);
  ASSERT_TRUE(cluster.add_task_manager("tm-0", 2, port0));
  TaskManager* b = cluster.add_task_manager("tm-1", 4, port1);
  ASSERT_TRUE(b);
  auto* cp = cluster.start(/*spread_out=*/true);
  ASSERT_NE(cp, nullptr);
  const JobClient& client = *cluster.client;
  ASSERT_TRUE(wait_until([&] { return cp->checkpoint_stats().num_completed >= 2; }, "two checkpoints"));
  // The process goes, its ports with it; the same TaskManager starts again on the same ports.
  b->stop();
  cluster.tms.back().reset();
  ASSERT_TRUE(wait_until([&] { return cluster.jm.rm.total_slots() == 2; }, "tm-1's loss"));
  ASSERT_TRUE(cluster.add_task_manager("tm-1", 4, port1));
  ASSERT_TRUE(wait_until(
      [&] {
        const auto now = placement(client);
        if (now.size() != 6) return false;
        for (const auto& [where, at] : now)
          if (at.second == 0) return false;
        return true;
      },
      "both regions running again"));
  const int64_t completed = cp->checkpoint_stats().num_completed;
  ASSERT_TRUE(wait_until([&] { return cp->checkpoint_stats().num_completed >= completed + 2; },
                         "checkpoints completing across the TaskManager started again"));
  cluster.finish_exactly_once({});
  EXPECT_GE(cp->restarts(), 2) << "each region spans the lost TaskManager";
}

TEST(RemoteRegionFailover, ARegionSpanningTaskManagersRestartsAloneOnTheSharedDataPlane) {
  fail_spanning_region(/*fixed_data_ports=*/false);
}

TEST(RemoteRegionFailover, ARegionSpanningTaskManagersRestartsAloneWithFixedDataPorts) {
  fail_spanning_region(/*fixed_data_ports=*/true);
}

}  // namespace
}  // namespace sluice::rpc
