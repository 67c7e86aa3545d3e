// The JobMaster through its TaskDeployer seam, with a deployer that records what it is asked and runs nothing:
// what each attempt deploys (every subtask once, its key-group range, the attempt number, the source vertices'
// split enumerators), that a failover cancels and joins the old attempt before deploying the next, that a
// failing deployment fails the submission, and what checkpoints and finishing send to the tasks.
#include "cluster/job_master.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include "checkpoint/filesystem_checkpoint_storage.h"
#include "checkpoint/tests/test_util.h"
#include "graph/job_graph.h"
#include "sluice/sluice.h"

namespace sluice::cluster {
namespace {

namespace ct = checkpoint::testing;

// Every call the JobMaster made, in order, as "deploy 0", "cancel 0", "join 0", "trigger 0 1", ...
struct CallLog {
  std::mutex mu;
  std::vector<std::string> calls;
  std::vector<AttemptDeployment> attempts;
  std::map<JobVertexId, std::vector<uint8_t>> enumerator_states;  // of the last trigger
  Status fail_deploy = Status::ok();
  int32_t wait_from_attempt = -1;  // this attempt and later ones wait for slots (5 s, or until interrupted)
  void add(std::string c) {
    std::lock_guard lock(mu);
    calls.push_back(std::move(c));
  }
  std::vector<std::string> snapshot() {
    std::lock_guard lock(mu);
    return calls;
  }
};

class RecordedTasks final : public DeployedTasks {
 public:
  RecordedTasks(CallLog* log, int32_t attempt, std::vector<runtime::ExecutionAttemptId> ids)
      : log_(log), a_(" " + std::to_string(attempt)), ids_(std::move(ids)) {}
  void trigger_checkpoint(const runtime::CheckpointBarrier& barrier, const std::string&,
                          std::map<JobVertexId, std::vector<uint8_t>> enumerator_states) override {
    {
      std::lock_guard lock(log_->mu);
      log_->enumerator_states = std::move(enumerator_states);
    }
    log_->add("trigger" + a_ + " " + std::to_string(barrier.id.value()));
  }
  void notify_checkpoint_complete(CheckpointId id) override { log_->add("complete" + a_ + " " + std::to_string(id.value())); }
  void notify_checkpoint_aborted(CheckpointId id) override { log_->add("aborted" + a_ + " " + std::to_string(id.value())); }
  void stop_sources(bool drain) override { log_->add(std::string(drain ? "drain" : "stop") + a_); }
  void resume_sources() override { log_->add("resume" + a_); }
  void finish() override { log_->add("finish" + a_); }
  void wake() override { log_->add("wake" + a_); }
  void fail(const runtime::ExecutionAttemptId& subtask, const Status&) override {
    log_->add("fail" + a_ + " " + subtask.to_string());
  }
  // Subtask k on TaskManager "tm-<k % 2>".
  std::vector<SubtaskLocation> locations() const override {
    std::vector<SubtaskLocation> out;
    for (const auto& id : ids_) {
      const std::string tm = "tm-" + std::to_string(id.subtask.value() % 2);
      out.push_back({id, tm, tm + ".example"});
    }
    return out;
  }
  void cancel() override { log_->add("cancel" + a_); }
  void join() override { log_->add("join" + a_); }

 private:
  CallLog* log_;
  std::string a_;
  std::vector<runtime::ExecutionAttemptId> ids_;
};

class RecordingDeployer final : public TaskDeployer {
 public:
  RecordingDeployer(CallLog* log, JobTaskContext context) : log_(log), context_(std::move(context)) {}
  runtime::CheckpointResponder* responder() const { return context_.checkpoint_responder; }
  Result<std::unique_ptr<DeployedTasks>> deploy(AttemptDeployment attempt) override {
    if (!log_->fail_deploy.is_ok()) return log_->fail_deploy;
    const int32_t n = attempt.attempt_number;
    if (log_->wait_from_attempt >= 0 && n >= log_->wait_from_attempt) {  // as a deployment waiting for slots
      log_->add("waiting " + std::to_string(n));
      std::unique_lock lock(interrupt_mu_);
      if (!interrupt_cv_.wait_for(lock, std::chrono::seconds(5), [&] { return interrupted_; })) {
        return Status::timeout("deploying attempt " + std::to_string(n) + ": not enough slots");
      }
      return Status::cancelled("deploying attempt " + std::to_string(n) + ": interrupted");
    }
    std::vector<runtime::ExecutionAttemptId> ids;
    for (const auto& s : attempt.subtasks) ids.push_back(s.id);
    {
      std::lock_guard lock(log_->mu);
      log_->attempts.push_back(std::move(attempt));
    }
    log_->add("deploy " + std::to_string(n));
    return std::unique_ptr<DeployedTasks>(std::make_unique<RecordedTasks>(log_, n, std::move(ids)));
  }
  std::vector<TaskManagerInfo> task_managers() const override {
    TaskManagerInfo tm;
    tm.registration.task_manager_id = "tm-0";
    return {tm};
  }
  runtime::TaskListener* listener() const { return context_.listener; }
  void interrupt_deploy() override {
    {
      std::lock_guard lock(interrupt_mu_);
      interrupted_ = true;
    }
    interrupt_cv_.notify_all();
  }

 private:
  CallLog* log_;
  JobTaskContext context_;
  std::mutex interrupt_mu_;
  std::condition_variable interrupt_cv_;
  bool interrupted_ = false;
};

// numbers (parallelism 2) -> key_by -> keyed sum (parallelism 3) -> discard: two vertices, five subtasks.
struct Job {
  std::shared_ptr<StreamGraph> sg;
  graph::JobGraph jg;
};
Job make_job() {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  env.from_generator(100, [](int64_t i) { return i; }, 0, "numbers")
      .uid("numbers")
      .key_by([](const int64_t& v) { return v % 7; })
      .reduce([](const int64_t& a, const int64_t& b) { return a + b; })
      .set_parallelism(3)
      .uid("sum")
      .sink_to(DiscardingSink<int64_t>())
      .uid("discard")
      .set_parallelism(3);
  Job j;
  j.sg = std::make_shared<StreamGraph>(env.stream_graph());
  auto jg = graph::build_job_graph(*j.sg, graph::JobGraphOptions{"job-master-test", 2, 128});
  EXPECT_TRUE(jg.is_ok()) << jg.status().to_string();
  j.jg = std::move(jg).value();
  return j;
}

class JobMasterTest : public ::testing::Test {
 protected:
  // Starts the job; `checkpointing`: local checkpoint storage, no periodic trigger, fixed-delay restarts.
  Result<std::unique_ptr<JobClient>> start(bool checkpointing, int32_t restart_attempts = 1,
                                           int64_t restart_delay_ms = 0) {
    job_ = make_job();
    MiniClusterConfig cfg;
    if (checkpointing) {
      cfg.checkpointing = true;
      cfg.checkpoint_config.interval = std::chrono::hours(1);
      cfg.storage = std::make_shared<checkpoint::FileSystemCheckpointStorage>(tmp_.path(), ct::threshold(100));
      cfg.restart.type = RestartStrategyType::kFixedDelay;
      cfg.restart.fixed_delay = {restart_attempts, restart_delay_ms};
    }
    return start_job_master(job_.sg, job_.jg, cfg, {}, [this](JobTaskContext c) -> std::unique_ptr<TaskDeployer> {
      auto d = std::make_unique<RecordingDeployer>(&log_, std::move(c));
      deployer_ = d.get();
      return d;
    });
  }
  // Waits up to 10 s until the first attempt's tasks are placed: start_job_master returns before the control thread
  // deployed them.
  bool wait_deployed(JobClient& job) {
    auto& view = dynamic_cast<JobPlacementView&>(job);
    for (int i = 0; i < 2000 && view.subtask_locations().empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return !view.subtask_locations().empty();
  }
  // A checkpoint triggered as soon as the job takes one: it refuses while its first attempt is being deployed.
  Result<CheckpointId> trigger_checkpoint(JobClient& job) {
    auto& client = dynamic_cast<CheckpointingJobClient&>(job);
    for (int i = 0;; ++i) {
      Result<CheckpointId> id = client.trigger_checkpoint();
      if (id.is_ok() || i == 2000 || id.status().message().find("being deployed") == std::string::npos) return id;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  // Cancels `job`, which waits for slots: the wait is interrupted, and the job is CANCELED within 2 s, without error.
  static void expect_cancelled_at_once(JobClient& job) {
    const auto cancelled_at = std::chrono::steady_clock::now();
    job.cancel();
    JobExecutionResult r = job.wait();
    EXPECT_LT(std::chrono::steady_clock::now() - cancelled_at, std::chrono::seconds(2));
    EXPECT_EQ(r.status, JobStatus::kCanceled);
    EXPECT_TRUE(r.error.is_ok()) << r.error.to_string();
  }
  // Waits up to 10 s until `call` was made `times` times (the JobMaster's threads act asynchronously).
  bool wait_for_call(const std::string& call, size_t times = 1) {
    for (int i = 0; i < 2000 && count(call) < times; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return count(call) == times;
  }
  size_t count(const std::string& call) {
    auto calls = log_.snapshot();
    return static_cast<size_t>(std::count(calls.begin(), calls.end(), call));
  }

  ct::TempDir tmp_;
  Job job_;
  CallLog log_;
  RecordingDeployer* deployer_ = nullptr;
};

TEST_F(JobMasterTest, AnAttemptDeploysEverySubtaskOnceWithItsKeyGroupsAndTheSourcesEnumerators) {
  auto job = start(false);
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  ASSERT_TRUE(wait_deployed(**job));
  ASSERT_EQ(log_.attempts.size(), 1u);
  const AttemptDeployment& a = log_.attempts[0];
  EXPECT_EQ(a.attempt_number, 0);
  const graph::ExecutionGraph eg = graph::build_execution_graph(job_.jg);
  ASSERT_EQ(a.subtasks.size(), eg.subtasks.size());
  for (size_t i = 0; i < eg.subtasks.size(); ++i) {
    EXPECT_EQ(a.subtasks[i].id.vertex.value(), eg.subtasks[i].vertex);
    EXPECT_EQ(a.subtasks[i].id.subtask.value(), eg.subtasks[i].subtask_index);
    EXPECT_EQ(a.subtasks[i].id.attempt_number, 0);
    EXPECT_EQ(a.subtasks[i].key_group_range, eg.subtasks[i].key_group_range);
  }
  EXPECT_FALSE(a.restore.has_value());
  ASSERT_EQ(a.source_coordinators.size(), job_.jg.vertices.size());
  for (const auto& v : job_.jg.vertices) {
    EXPECT_EQ(a.source_coordinators[static_cast<size_t>(v.id)] != nullptr, v.is_source) << v.name;
  }
  // Every task reports its end: the job finishes, and its attempt is cancelled and joined on the way out.
  for (const auto& s : a.subtasks) deployer_->listener()->on_task_finished(s.id.vertex.value(), s.id.subtask.value());
  EXPECT_EQ((*job)->wait().status, JobStatus::kFinished);
  EXPECT_EQ(log_.snapshot(), (std::vector<std::string>{"deploy 0", "cancel 0", "join 0"}));
}

TEST_F(JobMasterTest, AFailoverCancelsAndJoinsTheOldAttemptBeforeDeployingTheNext) {
  auto job = start(true, /*restart_attempts=*/1);
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  deployer_->listener()->on_task_failed(1, 2, Status::user_function("boom"));
  ASSERT_TRUE(wait_for_call("deploy 1")) << ::testing::PrintToString(log_.snapshot());
  for (int i = 0; i < 2000 && (*job)->status() != JobStatus::kRunning; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ((*job)->status(), JobStatus::kRunning);
  EXPECT_EQ(log_.snapshot(), (std::vector<std::string>{"deploy 0", "cancel 0", "join 0", "deploy 1"}));
  ASSERT_EQ(log_.attempts.size(), 2u);
  for (const auto& s : log_.attempts[1].subtasks) EXPECT_EQ(s.id.attempt_number, 1);
  EXPECT_FALSE(log_.attempts[1].restore.has_value());  // no checkpoint completed: from the start
  EXPECT_EQ(dynamic_cast<CheckpointingJobClient&>(**job).restarts(), 1);
  // The strategy allows one restart: the next failure fails the job with its cause.
  deployer_->listener()->on_task_failed(0, 0, Status::user_function("boom again"));
  JobExecutionResult r = (*job)->wait();
  EXPECT_EQ(r.status, JobStatus::kFailed);
  EXPECT_NE(r.error.to_string().find("boom again"), std::string::npos) << r.error.to_string();
  EXPECT_EQ(count("deploy 2"), 0u);
  EXPECT_EQ(count("join 1"), 1u);
}

// The client tells where the running attempt's subtasks are (the deployer's answer) and which TaskManagers the
// deployer has; between attempts and after the end no subtask is placed.
TEST_F(JobMasterTest, ThePlacementViewShowsTheRunningAttemptsSubtasksAndNothingOnceItEnded) {
  auto job = start(true, /*restart_attempts=*/1);
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  auto& view = dynamic_cast<JobPlacementView&>(**job);
  ASSERT_TRUE(wait_deployed(**job));
  ASSERT_EQ(view.task_managers().size(), 1u);
  EXPECT_EQ(view.task_managers()[0].registration.task_manager_id, "tm-0");
  std::vector<SubtaskLocation> placed = view.subtask_locations();
  ASSERT_EQ(placed.size(), log_.attempts[0].subtasks.size());
  for (size_t i = 0; i < placed.size(); ++i) {
    EXPECT_EQ(placed[i].id, log_.attempts[0].subtasks[i].id);
    EXPECT_EQ(placed[i].host, "tm-" + std::to_string(placed[i].id.subtask.value() % 2) + ".example");
  }
  deployer_->listener()->on_task_failed(1, 2, Status::user_function("boom"));
  ASSERT_TRUE(wait_for_call("deploy 1")) << ::testing::PrintToString(log_.snapshot());
  for (int i = 0; i < 2000 && (*job)->status() != JobStatus::kRunning; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  placed = view.subtask_locations();
  ASSERT_EQ(placed.size(), log_.attempts[1].subtasks.size());
  for (const SubtaskLocation& l : placed) EXPECT_EQ(l.id.attempt_number, 1) << l.id.to_string();
  (*job)->cancel();
  EXPECT_EQ((*job)->wait().status, JobStatus::kCanceled);
  EXPECT_TRUE(view.subtask_locations().empty());
}

TEST_F(JobMasterTest, ACheckpointReachesTheTasksWithTheEnumeratorStateOfEachSourceVertex) {
  auto job = start(true);
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  auto id = trigger_checkpoint(**job);
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  ASSERT_TRUE(wait_for_call("trigger 0 " + std::to_string(id->value()))) << ::testing::PrintToString(log_.snapshot());
  {
    std::lock_guard lock(log_.mu);
    ASSERT_EQ(log_.enumerator_states.size(), 1u);
    EXPECT_TRUE(job_.jg.vertices[static_cast<size_t>(log_.enumerator_states.begin()->first.value())].is_source);
  }
  // Cancelling aborts the pending checkpoint and ends the attempt.
  (*job)->cancel();
  EXPECT_EQ((*job)->wait().status, JobStatus::kCanceled);
  EXPECT_EQ(count("cancel 0"), 1u);
  EXPECT_EQ(count("join 0"), 1u);
}

TEST_F(JobMasterTest, AfterACompletedCheckpointTheNextAttemptRestoresFromIt) {
  auto job = start(true);
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  auto id = trigger_checkpoint(**job);
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  ASSERT_TRUE(wait_for_call("trigger 0 " + std::to_string(id->value())));
  // Every subtask acknowledges (stateless): the checkpoint completes and the tasks hear of it.
  for (const auto& s : log_.attempts[0].subtasks) {
    deployer_->responder()->acknowledge(*id, s.id.vertex, s.id.subtask, {}, {});
  }
  ASSERT_TRUE(wait_for_call("complete 0 " + std::to_string(id->value()))) << ::testing::PrintToString(log_.snapshot());
  deployer_->listener()->on_task_failed(0, 1, Status::user_function("boom"));
  ASSERT_TRUE(wait_for_call("deploy 1")) << ::testing::PrintToString(log_.snapshot());
  std::lock_guard lock(log_.mu);
  ASSERT_TRUE(log_.attempts[1].restore.has_value());
  EXPECT_EQ(log_.attempts[1].restore->point.metadata.checkpoint_id, *id);
  EXPECT_NE(log_.attempts[1].restore->point.location.find("chk-" + std::to_string(id->value())), std::string::npos)
      << log_.attempts[1].restore->point.location;
  EXPECT_TRUE(log_.attempts[1].restore->point.owned);
}

// A redeployment that waits for resources (slots of TaskManagers) holds the control thread; a cancel interrupts
// the wait, and the job is CANCELED at once, without an error and without another restart.
TEST_F(JobMasterTest, ACancelInterruptsADeploymentWaitingForSlotsAndTheJobIsCanceledAtOnce) {
  log_.wait_from_attempt = 1;
  auto job = start(true, /*restart_attempts=*/3);
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  deployer_->listener()->on_task_failed(1, 2, Status::user_function("boom"));
  ASSERT_TRUE(wait_for_call("waiting 1")) << ::testing::PrintToString(log_.snapshot());
  expect_cancelled_at_once(**job);
  EXPECT_EQ(count("waiting 2"), 0u);  // no restart after the interrupted deployment
}

// A stop-with-savepoint accepted while the job was RUNNING, but queued behind a task failure, is not lost with the
// failed attempt's events: it reaches the next attempt's sources once the job runs again. The request must win
// the race against the control thread's handling of the failure (else it is refused as RESTARTING, which is fine):
// the test retries until it does.
TEST_F(JobMasterTest, AStopWithSavepointQueuedBehindAFailureReachesTheNextAttempt) {
  bool raced = false;
  for (int round = 0; round < 20 && !raced; ++round) {
    log_.calls.clear();
    log_.attempts.clear();
    auto job = start(true, /*restart_attempts=*/3, /*restart_delay_ms=*/100);
    ASSERT_TRUE(job.is_ok()) << job.status().to_string();
    auto& client = dynamic_cast<CheckpointingJobClient&>(**job);
    deployer_->listener()->on_task_failed(1, 2, Status::user_function("boom"));
    auto trigger = client.stop_with_savepoint(tmp_.path() + "/savepoints-" + std::to_string(round), /*drain=*/false,
                                              checkpoint::SavepointFormatType::kCanonical);
    if (trigger.is_ok()) {
      raced = true;
      ASSERT_TRUE(wait_for_call("deploy 1")) << ::testing::PrintToString(log_.snapshot());
      EXPECT_TRUE(wait_for_call("stop 1")) << ::testing::PrintToString(log_.snapshot());
    }
    (*job)->cancel();
    (void)(*job)->wait();
  }
  EXPECT_TRUE(raced) << "no stop request was accepted before the failure was handled in 20 rounds";
}

// The first deployment runs after the submission returned. One that fails is a failure of the job: the restart
// strategy (one restart here) deploys again, and when that fails too the job FAILS with the deployment's cause.
TEST_F(JobMasterTest, AFirstDeploymentThatFailsGoesThroughTheRestartStrategyAndFailsTheJobWithItsCause) {
  log_.fail_deploy = Status::timeout("no slots for subtask sum (1/3)");
  auto job = start(true, /*restart_attempts=*/1);
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  JobExecutionResult r = (*job)->wait();
  EXPECT_EQ(r.status, JobStatus::kFailed);
  EXPECT_NE(r.error.to_string().find("no slots for subtask sum (1/3)"), std::string::npos) << r.error.to_string();
  EXPECT_NE(r.error.to_string().find("redeploying after a failure"), std::string::npos) << r.error.to_string();
  EXPECT_EQ(dynamic_cast<CheckpointingJobClient&>(**job).restarts(), 1);
  EXPECT_TRUE(log_.snapshot().empty());  // no attempt was ever deployed
}

// Without checkpointing there is no restart: the first deployment's failure fails the job at once.
TEST_F(JobMasterTest, WithoutCheckpointingAFirstDeploymentThatFailsFailsTheJob) {
  log_.fail_deploy = Status::timeout("no slots for subtask sum (1/3)");
  auto job = start(false);
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  JobExecutionResult r = (*job)->wait();
  EXPECT_EQ(r.status, JobStatus::kFailed);
  EXPECT_NE(r.error.to_string().find("no slots for subtask sum (1/3)"), std::string::npos) << r.error.to_string();
  EXPECT_NE(r.error.to_string().find("deploying the job's tasks"), std::string::npos) << r.error.to_string();
}

// The client comes back while the first deployment waits for slots: the job is RUNNING, refuses a checkpoint
// trigger (its tasks are being deployed), and a cancel interrupts the wait and cancels the job at once.
TEST_F(JobMasterTest, WhileTheFirstDeploymentWaitsForSlotsTheJobIsReachableAndACancelEndsItAtOnce) {
  log_.wait_from_attempt = 0;
  const auto submitted_at = std::chrono::steady_clock::now();
  auto job = start(true, /*restart_attempts=*/3);
  ASSERT_TRUE(job.is_ok()) << job.status().to_string();
  EXPECT_LT(std::chrono::steady_clock::now() - submitted_at, std::chrono::seconds(2));
  ASSERT_TRUE(wait_for_call("waiting 0")) << ::testing::PrintToString(log_.snapshot());
  EXPECT_EQ((*job)->status(), JobStatus::kRunning);
  auto refused = dynamic_cast<CheckpointingJobClient&>(**job).trigger_checkpoint();
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("being deployed"), std::string::npos) << refused.status().to_string();
  EXPECT_TRUE(dynamic_cast<JobPlacementView&>(**job).subtask_locations().empty());
  expect_cancelled_at_once(**job);
  EXPECT_EQ(count("waiting 1"), 0u);  // the interrupted deployment is not a failure: no restart
}

}  // namespace
}  // namespace sluice::cluster
