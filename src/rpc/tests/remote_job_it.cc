// A job whose JobMaster reaches its tasks only through the control plane: the JobManager's side (JobMaster with the
// RemoteDeployer, JobMasterService, SplitEnumeratorService) and a TaskManager's side (TaskExecutorService with the
// same program's JobGraph, built separately as application mode does) talk over gRPC on loopback. The per-auction
// job (Nexmark bids, per-auction count/sum/max in keyed state, exactly-once file sink) runs with checkpoints, its
// split enumerator in the JobManager, and seeded task failures in the TaskManager; every failover redeploys through
// gRPC from the latest checkpoint, which the TaskManager reads itself, and the committed output must be exactly
// once against the single-threaded oracle.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <random>
#include <chrono>
#include <thread>

#include "../../../examples/per_auction/per_auction_job.h"
#include "../../../tools/sluice/verify.h"
#include "checkpoint/filesystem_checkpoint_storage.h"
#include "remote_cluster_util.h"

namespace sluice::rpc {
namespace {

using namespace remote_test;  // NOLINT: test helpers
constexpr int32_t kParallelism = 2;

// `checkpointing` false: interval 0 - the coordinator for savepoints only, with a storage rooted nowhere (as the
// environment builds it) and no restarts.
Program build_program(const per_auction::JobOptions& opt, const std::string& checkpoints, bool checkpointing = true) {
  StreamExecutionEnvironment env;
  env.set_parallelism(kParallelism);
  per_auction::build(env, opt);
  Program p;
  p.sg = std::make_shared<StreamGraph>(env.stream_graph());
  auto jg = graph::build_job_graph(*p.sg, graph::JobGraphOptions{"remote-per-auction", kParallelism, 128});
  EXPECT_TRUE(jg.is_ok()) << jg.status().to_string();
  p.jg = std::move(jg).value();
  p.config.clock = SystemClock::shared();
  p.config.checkpointing = checkpointing;
  p.config.savepoints_without_checkpointing = !checkpointing;
  if (checkpointing) {
    p.config.checkpoint_config.interval = std::chrono::milliseconds(50);
    p.config.restart.type = RestartStrategyType::kFixedDelay;
    p.config.restart.fixed_delay = {20, 10};
  }
  p.config.storage = std::make_shared<checkpoint::FileSystemCheckpointStorage>(checkpointing ? checkpoints : "",
                                                                               checkpoint::FileSystemStorageOptions{});
  p.config.job_id = JobId(7, 7);
  return p;
}

std::vector<runtime::FaultInjector::Task> every_point(const graph::JobGraph& jg) {
  std::vector<runtime::FaultInjector::Task> tasks;
  for (const auto& v : jg.vertices)
    for (int32_t s = 0; s < v.parallelism; ++s) tasks.push_back({v.id, s, ~0u});
  return tasks;
}

// The TaskManager's copy of the program, whose sources emit no further than `gate` (starting at `limit`) lets them.
Program gated_program(const per_auction::JobOptions& opt, const std::string& base,
                      const std::shared_ptr<nexmark::NexmarkEmitGate>& gate, int64_t limit, bool checkpointing = true) {
  gate->limit.store(limit);
  per_auction::JobOptions tm_opt = opt;
  tm_opt.source.gate = gate;
  return build_program(tm_opt, base + "/ck", checkpointing);
}

// Runs the job on `task_managers` TaskManagers (the job's two slots spread over them: with two, every exchange
// crosses the TCP data plane); `failures` task failures are injected at seeded points of the stream. With
// `savepoint`, a savepoint is taken through the control plane mid-stream and checked to hold its own state files.
// `checkpointing` false: no periodic checkpoints (build_program); the output must be exactly once all the same.
void run(uint64_t seed, int32_t failures, bool savepoint = false, int32_t task_managers = 1,
         bool checkpointing = true) {
  const std::string base = ::testing::TempDir() + "remote-job-" + std::to_string(::getpid()) + "-" + std::to_string(seed);
  std::filesystem::remove_all(base);
  per_auction::JobOptions opt;
  opt.source.generator.max_events = 200'000;
  opt.source.generator.seed = seed;
  opt.source.num_splits = 4;
  opt.output_dir = base + "/out";
  Program jm_program = build_program(opt, base + "/ck", checkpointing);
  // The TaskManagers' sources emit no further than the test lets them, so the failures land mid-stream.
  auto gate = std::make_shared<nexmark::NexmarkEmitGate>();
  const bool gated = failures > 0 || savepoint;

  JobManagerControlPlane jm;
  ASSERT_TRUE(jm.server);
  cluster::TaskManagerLossMonitor monitor(&jm.rm, 20);
  runtime::FaultInjector injector(every_point(jm_program.jg));
  // Each TaskManager builds its own copy of the program, as its process would.
  std::vector<Program> tm_programs;
  for (int32_t i = 0; i < task_managers; ++i) {
    tm_programs.push_back(gated ? gated_program(opt, base, gate, 0, checkpointing)
                                : build_program(opt, base + "/ck", checkpointing));
  }
  MetricRegistry tm_metrics;
  std::vector<std::unique_ptr<TaskManager>> tms;
  for (int32_t i = 0; i < task_managers; ++i) {
    tms.push_back(start_task_manager(tm_programs[static_cast<size_t>(i)], tm_metrics, jm.address(), 0,
                                     "tm-" + std::to_string(i), kParallelism / task_managers, &injector));
    ASSERT_TRUE(tms.back());
  }
  ASSERT_TRUE(wait_until([&] { return jm.rm.total_slots() == kParallelism; }, "the TaskManagers' registrations"));

  auto client = jm.start_job(jm_program, &monitor, 30'000);
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  ASSERT_NE(cp, nullptr);

  auto ended = [&] { return is_globally_terminal((*client)->status()); };
  std::mt19937_64 rng(seed);
  for (int32_t i = 0; i < failures && !ended(); ++i) {
    // Let the stream on to its next share, wait for one more completed checkpoint, then fail a seeded subtask of a
    // seeded vertex at its next turn.
    gate->raise_to(opt.source.generator.max_events * (i + 1) / (failures + 1));
    const int64_t completed = cp->checkpoint_stats().num_completed;
    ASSERT_TRUE(wait_until([&] { return ended() || cp->checkpoint_stats().num_completed > completed; },
                           "a checkpoint before failure " + std::to_string(i + 1)));
    const int32_t vertex = static_cast<int32_t>(rng() % jm_program.jg.vertices.size());
    const int32_t subtask = static_cast<int32_t>(rng() % kParallelism);
    ASSERT_TRUE(injector.arm(runtime::FailurePoint::kTask, vertex, subtask, "failure " + std::to_string(i + 1)).is_ok());
    ASSERT_TRUE(wait_until([&] { return ended() || cp->restarts() > i; }, "the restart after failure " + std::to_string(i + 1)));
  }
  if (savepoint) {
    gate->raise_to(opt.source.generator.max_events / 2);
    if (checkpointing) {
      ASSERT_TRUE(wait_until([&] { return ended() || cp->checkpoint_stats().num_completed > 0; }, "a checkpoint"));
    }
    // Retried while the first attempt is being deployed (start_job returns before; the JobMaster refuses then).
    Result<std::string> trigger = Status::failed_precondition("not triggered");
    ASSERT_TRUE(wait_until(
        [&] {
          trigger = cp->trigger_savepoint(base + "/savepoints");
          return trigger.is_ok() || trigger.status().message().find("being deployed") == std::string::npos;
        },
        "a savepoint trigger the job takes"));
    ASSERT_TRUE(trigger.is_ok()) << trigger.status().to_string();
    auto done = cp->wait_savepoint(*trigger, 60'000);
    ASSERT_TRUE(done.has_value());
    ASSERT_EQ(done->state, cluster::SavepointRequestStatus::State::kCompleted) << done->cause.to_string();
    // The TaskManager wrote the savepoint's state into the savepoint's folder, not into the job's chk-<n>.
    int32_t files = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(done->location)) files += e.is_regular_file() ? 1 : 0;
    EXPECT_GT(files, 1) << done->location << " holds only its _metadata";
    auto md = jm_program.config.storage->read_metadata(done->location);
    ASSERT_TRUE(md.is_ok()) << md.status().to_string();
    EXPECT_EQ(md->type, checkpoint::SnapshotType::kSavepoint);
  }
  gate->open();
  JobExecutionResult result = (*client)->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  std::printf("seed %llu, %d TaskManager(s): %d restarts through gRPC, %lld checkpoints completed\n",
              static_cast<unsigned long long>(seed), task_managers, cp->restarts(),
              static_cast<long long>(cp->checkpoint_stats().num_completed));
  EXPECT_GE(cp->restarts(), failures);
  for (const auto& r : cp->recoveries()) EXPECT_GT(r.first, 0) << "a failover after a completed checkpoint restores it";

  auto oracle = nexmark::compute_per_auction_oracle(opt.source.generator, opt.source.generator.max_events);
  auto report = cli::verify_per_auction_output(opt.output_dir, oracle);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->mismatches(), 0) << (report->first_mismatches.empty() ? "" : report->first_mismatches[0]);
  EXPECT_GT(report->records, 0);
  if (!checkpointing) {
    EXPECT_FALSE(std::filesystem::exists(base + "/ck")) << "no checkpoint folder without checkpointing";
  }
  for (auto& tm : tms) tm->stop();
  jm.server->shutdown();
  std::filesystem::remove_all(base);
}

TEST(RemoteJob, RunsExactlyOnceThroughTheControlPlane) { run(1, 0); }

TEST(RemoteJob, ATaskManagerThatDiesIsNoticedAtOnceAndItsReplacementRunsTheJobOnExactlyOnce) {
  const std::string base = ::testing::TempDir() + "remote-job-" + std::to_string(::getpid()) + "-replaced";
  std::filesystem::remove_all(base);
  per_auction::JobOptions opt;
  opt.source.generator.max_events = 200'000;
  opt.source.generator.seed = 5;
  opt.output_dir = base + "/out";
  Program jm_program = build_program(opt, base + "/ck");
  jm_program.config.restart.fixed_delay = {10, 50};
  auto gate = std::make_shared<nexmark::NexmarkEmitGate>();
  Program tm_program = gated_program(opt, base, gate, opt.source.generator.max_events / 2);

  // The JobManager: ResourceManager, loss monitor and the job's services on one control-plane port.
  JobManagerControlPlane jm;
  ASSERT_TRUE(jm.server);
  cluster::TaskManagerLossMonitor monitor(&jm.rm, 20);
  const std::string jm_address = jm.address();

  MetricRegistry tm_metrics;
  auto first = start_task_manager(tm_program, tm_metrics, jm_address, 0);
  ASSERT_TRUE(first);
  const int32_t tm_port = first->rpc_port();
  ASSERT_TRUE(wait_until([&] { return first->session().has_value(); }, "the TaskManager's registration"));

  auto client = jm.start_job(jm_program, &monitor, 30'000);
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  auto* cp = dynamic_cast<cluster::CheckpointingJobClient*>(client->get());
  ASSERT_TRUE(wait_until([&] { return cp->checkpoint_stats().num_completed >= 2; }, "two checkpoints"));

  const auto killed_at = std::chrono::steady_clock::now();
  first->stop();
  ASSERT_TRUE(wait_until([&] { return cp->restarts() >= 1; }, "the failover after the TaskManager died"));
  const auto noticed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed_at).count();
  std::printf("the TaskManager's death led to a failover after %lld ms (heartbeat.timeout 10000 ms)\n",
              static_cast<long long>(noticed_ms));
  EXPECT_LT(noticed_ms, 2'000);  // seen through its connection, not by the heartbeat timeout

  // A replacement on the same address registers; the next redeployment goes to it and the job runs to the end.
  first.reset();
  auto second = start_task_manager(tm_program, tm_metrics, jm_address, tm_port);
  ASSERT_TRUE(second) << "port " << tm_port << " could not be bound again";
  gate->open();
  JobExecutionResult result = (*client)->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished) << result.error.to_string();
  bool restored = false;
  for (const auto& r : cp->recoveries()) restored = restored || r.first > 0;
  EXPECT_TRUE(restored) << "the replacement restored a checkpoint";

  auto oracle = nexmark::compute_per_auction_oracle(opt.source.generator, opt.source.generator.max_events);
  auto report = cli::verify_per_auction_output(opt.output_dir, oracle);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->mismatches(), 0) << (report->first_mismatches.empty() ? "" : report->first_mismatches[0]);
  second->stop();
  jm.server->shutdown();
  std::filesystem::remove_all(base);
}

TEST(RemoteJob, ATaskManagerThatLosesItsJobManagerCancelsItsTasks) {
  const std::string base = ::testing::TempDir() + "remote-job-" + std::to_string(::getpid()) + "-jm-lost";
  std::filesystem::remove_all(base);
  per_auction::JobOptions opt;
  opt.source.generator.max_events = 200'000;
  opt.output_dir = base + "/out";
  Program jm_program = build_program(opt, base + "/ck");
  auto gate = std::make_shared<nexmark::NexmarkEmitGate>();
  Program tm_program = gated_program(opt, base, gate, opt.source.generator.max_events / 4);  // stays running

  JobManagerControlPlane jm;
  ASSERT_TRUE(jm.server);
  const std::string jm_address = jm.address();
  MetricRegistry tm_metrics;
  auto tm = start_task_manager(tm_program, tm_metrics, jm_address, 0);
  ASSERT_TRUE(tm);
  ASSERT_TRUE(wait_until([&] { return tm->session().has_value(); }, "the TaskManager's registration"));

  auto client = jm.start_job(jm_program, nullptr, 1'000);
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  ASSERT_TRUE(wait_until([&] { return tm->running_attempt().has_value(); }, "the attempt on the TaskManager"));

  // The JobManager's process goes: the TaskManager sees its connection end and cancels its tasks at once.
  jm.rm_service.shutdown();
  jm.server->shutdown(0);
  ASSERT_TRUE(wait_until([&] { return !tm->running_attempt().has_value(); }, "the TaskManager cancelling its tasks"));
  EXPECT_FALSE(tm->session().has_value());
  EXPECT_TRUE(tm->refused().is_ok());
  (*client)->cancel();
  EXPECT_EQ((*client)->wait().status, JobStatus::kCanceled);
  tm->stop();
  std::filesystem::remove_all(base);
}

TEST(RemoteJob, TakesASavepointWhoseStateTheTaskManagerWroteIntoIt) { run(4, 0, /*savepoint=*/true); }

// Checkpointing off: the TaskManager still takes the savepoint, and the sink's data it pre-committed is committed
// when the input ends (exactly once against the oracle).
TEST(RemoteJob, TakesASavepointWithoutCheckpointingAndCommitsItsDataAtTheEnd) {
  run(8, 0, /*savepoint=*/true, 1, /*checkpointing=*/false);
}

TEST(RemoteJob, FailsOverThroughTheControlPlaneExactlyOnce) {
  for (uint64_t seed : {2, 3}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    run(seed, 3);
  }
}

TEST(RemoteJob, RunsOnTwoTaskManagersAcrossTheDataPlaneExactlyOnce) { run(6, 0, false, 2); }

TEST(RemoteJob, FailsOverOnTwoTaskManagersExactlyOnce) {
  for (uint64_t seed : {7, 8}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    run(seed, 3, false, 2);
  }
}

}  // namespace
}  // namespace sluice::rpc
